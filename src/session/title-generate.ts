/**
 * Generated titles and their race protection (seed 002). Priority: a user-set title is never
 * replaced; a generated one replaces a prompt-derived, imported or older generated one.
 *
 * A generation takes seconds, and the title may change meanwhile: the user renames the session,
 * or another generation (another process) starts. So a generation first stamps the meta with its
 * own token (`titleGeneration` in the meta), and writes its title only if, inside the storage adapter's
 * read-modify-write (`updateMeta`, under the session's lock), the title is still not the user's
 * and the token is still its own. A newer generation replaces the token, so the older one's answer
 * is dropped whichever arrives first. The token stays after a failed generation: it matches no
 * other generation, so it is inert.
 */
import { randomUUID } from "node:crypto";
import { badInput, FreecodeError } from "../errors.ts";
import type { StorageAdapter } from "../storage/contract.ts";
import type { SessionMeta } from "../storage/records.ts";
import { getSession } from "./lifecycle.ts";
import { cleanTitle } from "./title-clean.ts";
import type { Titler } from "./title-http.ts";
import { firstPrompts } from "./title-prompt.ts";

type TitleGeneration = NonNullable<SessionMeta["titleGeneration"]>;

/**
 * What `generateTitle` did: `generated` (the title was written), `user` (the session has a
 * user-set title, before or by the time the answer came: kept), `superseded` (a newer
 * generation started meanwhile: its answer decides).
 */
export type TitleOutcome = "generated" | "user" | "superseded";

export interface TitleResult {
  outcome: TitleOutcome;
  /** The meta after the generation: the new title when `generated`, else the current one. */
  meta: SessionMeta;
}

/** The generation a meta says is in flight, if any. */
export function titleGenerationOf(meta: SessionMeta): TitleGeneration | undefined {
  return meta.titleGeneration;
}

/**
 * Ask `titler` for a title from the session's first user message(s) and store it, unless the user
 * set one (see the module comment for the race protection). Errors of the titler (`unavailable`)
 * and a session with no user text (`bad_input`) leave the title as it was.
 */
export async function generateTitle(
  store: StorageAdapter,
  sessionId: string,
  titler: Titler,
): Promise<TitleResult> {
  const current = await getSession(store, sessionId);
  if (current.titleSource === "user") return { outcome: "user", meta: current };
  const prompts = firstPrompts((await store.readMessages(current.id)).messages);
  if (!prompts) throw badInput(`session ${current.id} has no user text to make a title from`);

  const mine: TitleGeneration = { id: randomUUID(), startedAt: Date.now() };
  const stamped = await store.updateMeta(current.id, (m) =>
    m.titleSource === "user" ? m : { ...m, titleGeneration: mine },
  );
  if (stamped.titleSource === "user") return { outcome: "user", meta: stamped };

  const raw = await titler.title(prompts);
  // A titler other than the HTTP one may not clean its answer: the same rules hold for all.
  const title = cleanTitle(raw);
  if (title === undefined)
    throw new FreecodeError("unavailable", `titler ${titler.name}: the answer holds no usable title`);

  let outcome: TitleOutcome = "generated";
  const meta = await store.updateMeta(current.id, (m) => {
    if (m.titleSource === "user") outcome = "user";
    else if (titleGenerationOf(m)?.id !== mine.id) outcome = "superseded";
    else {
      outcome = "generated";
      const { titleGeneration: _done, ...rest } = m;
      return { ...rest, title, titleSource: "generated" };
    }
    return m;
  });
  return { outcome, meta };
}
