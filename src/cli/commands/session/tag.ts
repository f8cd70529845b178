/**
 * `freecode session tag <id> [--add a,b] [--remove c]`: change a session's tags and print them, one a
 * line (`--json`: `{id, tags}`, as the `session.tag` JSON-RPC method). With neither flag it only
 * prints. `--add` and `--remove` may be repeated (read with `flagValues`).
 */

import { sessionTags, splitTagList, tagSession } from "../../../session/tags.ts";
import { escapeLine } from "../../../util/one-line.ts";
import { command, flagValues } from "../../_command.ts";
import { completeId } from "../../_session-id.ts";
import { ID_ARG, withStore } from "./_shared.ts";

export default command({
  repeatable: ["add", "remove"],
  meta: { name: "tag", description: "Add or remove a session's tags, and print them" },
  args: {
    ...ID_ARG,
    add: {
      type: "string",
      description: "Tags to add, comma-separated or repeated (kept in order, each once)",
    },
    remove: { type: "string", description: "Tags to remove, comma-separated or repeated" },
  },
  async run(ctx, args) {
    const add = splitTagList(flagValues(ctx.rawArgs, "add"));
    const removing = flagValues(ctx.rawArgs, "remove");
    const meta = await withStore(ctx, async (s) => {
      // Only shown (no --add, no --remove): a start of the id is enough, as for commands that only read.
      const id = add.length === 0 && removing.length === 0 ? await completeId(s, args.id) : args.id;
      // A value naming a tag the session has whole (`x,y`, stored before commas were refused) is
      // that tag; otherwise a comma-separated list.
      const current = new Set((await sessionTags(s, id)).map((t) => t.trim()));
      const remove = removing.flatMap((v) => (current.has(v.trim()) ? [v] : splitTagList(v)));
      return tagSession(s, id, { add, remove });
    });
    const tags = meta.tags ?? [];
    if (ctx.json) ctx.out({ id: meta.id, tags });
    else if (tags.length > 0) ctx.out(`${tags.map(escapeLine).join("\n")}\n`);
    else ctx.log.info(`session ${meta.id} has no tags`);
    return 0;
  },
});
