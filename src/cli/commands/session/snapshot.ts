/**
 * `freecode session snapshot <id> [--entry NAME]`: capture the session's work tree now (what an agent
 * does before and after each tool run, on demand: before a risky manual change, say).
 */
import { rolloutEnabled } from "../../../rollout/recorder.ts";
import { sessionSnapshots } from "../../../snapshot/session.ts";
import { escapeLine } from "../../../util/one-line.ts";
import { command } from "../../_command.ts";
import { ID_ARG, withStore } from "./_shared.ts";

export default command({
  meta: {
    name: "snapshot",
    description: "Capture the session's work tree now (undo/redo walk the snapshots)",
  },
  args: {
    ...ID_ARG,
    entry: { type: "string", description: "A name for the snapshot (its entryId)", valueHint: "name" },
  },
  async run(ctx, args) {
    const rollout = rolloutEnabled(process.env, ctx.config());
    const r = await withStore(ctx, async (s) =>
      (await sessionSnapshots(s, ctx.home, args.id, { rollout })).capture(args.entry),
    );
    // Git missing or failing is no crash for an agent's capture; asked for by hand, it is an error.
    if (!r.captured) throw r.error;
    if (ctx.json) {
      ctx.out({ id: args.id, ...r });
      return 0;
    }
    const left = r.skippedFiles.length
      ? ` (${r.skippedFiles.length} left out: large files, nested repositories, names that are not UTF-8)`
      : "";
    const what = r.isNew ? "captured" : "unchanged since the current snapshot";
    ctx.out(`${what}: ${r.snapshot.slice(0, 12)}${r.entryId ? ` ${escapeLine(r.entryId)}` : ""}${left}\n`);
    return 0;
  },
});
