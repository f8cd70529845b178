/**
 * A session named by the start of its id, as git takes a commit's: commands that only read a
 * session (`session show`, `export`, `snapshots`; `trace`, `replay`, `usage`, `rollout cat` and
 * `verify`; `eval add`) take any start of an id that no other id shares (`claude-3f2a` for an
 * imported session's long id). An id that names a session or a log whole is that one, even when
 * it also starts others; a start that several ids share is refused with them listed; one that no id
 * starts is left as typed, and the command says what it did not find. Commands that change or
 * delete a session take the whole id: a start that was unique yesterday may name another one today.
 */
import { badInput } from "../errors.ts";
import { checkId } from "../storage/_validate.ts";
import type { StorageAdapter } from "../storage/contract.ts";

/** How many of the ids a start shares are named in the error. */
const SHOWN = 5;

/** The whole id `typed` names in the store (see above); `bad_input` when it starts several. */
export async function completeId(adapter: StorageAdapter, typed: string): Promise<string> {
  checkId(typed);
  if ((await adapter.getMeta(typed)) !== undefined) return typed;
  const ids = new Set(await adapter.listEventLogs());
  for (const m of (await adapter.listSessions({ all: true })).items) ids.add(m.id);
  return completeFrom(ids, typed);
}

/** The id of `ids` that `typed` names whole or is the only start of; else `typed` itself. */
export function completeFrom(ids: Iterable<string>, typed: string): string {
  const matches: string[] = [];
  for (const id of ids) {
    if (id === typed) return typed;
    if (id.startsWith(typed)) matches.push(id);
  }
  matches.sort();
  if (matches.length === 1) return matches[0]!;
  if (matches.length === 0) return typed;
  const named = matches.slice(0, SHOWN).join(", ");
  const more = matches.length > SHOWN ? `, and ${matches.length - SHOWN} more` : "";
  throw badInput(
    `"${typed}" is the start of ${matches.length} session ids (${named}${more}): give more of it`,
    { field: "id" },
  );
}
