/**
 * `freecode session title <id> [--generate]`: the session's title and where it came from; with
 * `--generate`, ask config.json's `titler` for one first (a user-set title is never replaced).
 */

import { badInput } from "../../../errors.ts";
import { homePaths } from "../../../home.ts";
import { getSession } from "../../../session/lifecycle.ts";
import { titlerFromConfig } from "../../../session/title-config.ts";
import { generateTitle, type TitleOutcome } from "../../../session/title-generate.ts";
import { escapeLine } from "../../../util/one-line.ts";
import { command } from "../../_command.ts";
import { completeId } from "../../_session-id.ts";
import { ID_ARG, withStore } from "./_shared.ts";

const KEPT: Record<Exclude<TitleOutcome, "generated">, string> = {
  user: "the title was set by the user, and a generated title never replaces it",
  superseded: "a newer title generation started meanwhile; its answer decides",
};

export default command({
  meta: { name: "title", description: "Show a session's title and its source; --generate asks the titler" },
  args: {
    ...ID_ARG,
    generate: { type: "boolean", description: "Generate a title with config.json's titler first" },
  },
  async run(ctx, args) {
    let outcome: TitleOutcome | undefined;
    const meta = await withStore(ctx, async (store) => {
      // Only shown: a start of the id is enough, as for the other commands that only read.
      if (!args.generate) return getSession(store, await completeId(store, args.id));
      const file = homePaths(ctx.home).config;
      const titler = titlerFromConfig(ctx.config(), process.env, file);
      if (!titler)
        throw badInput('no titler configured: set "titler" to {"type": "http", "url": …, "model": …}', {
          file,
          field: "titler",
        });
      const r = await generateTitle(store, args.id, titler);
      outcome = r.outcome;
      return r.meta;
    });
    if (outcome && outcome !== "generated") ctx.log.warn(`title of ${meta.id} kept: ${KEPT[outcome]}`);
    const source = meta.titleSource ?? "unknown";
    if (ctx.json)
      ctx.out({ id: meta.id, title: meta.title, titleSource: source, ...(outcome ? { outcome } : {}) });
    else ctx.out(`${escapeLine(meta.title)}\t(${source})\n`);
    return 0;
  },
});
