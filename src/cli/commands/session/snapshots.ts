/** `freecode session snapshots <id>`: the session's work-tree snapshots, oldest first; `*` is current. */
import { rolloutEnabled } from "../../../rollout/recorder.ts";
import { sessionSnapshots } from "../../../snapshot/session.ts";
import { escapeLine } from "../../../util/one-line.ts";
import { command } from "../../_command.ts";
import { completeId } from "../../_session-id.ts";
import { READ_ID_ARG, when, withStore } from "./_shared.ts";

export default command({
  meta: { name: "snapshots", description: "List a session's work-tree snapshots (undo/redo walk them)" },
  args: { ...READ_ID_ARG },
  async run(ctx, args) {
    const rollout = rolloutEnabled(process.env, ctx.config());
    let id = args.id;
    const list = await withStore(ctx, async (s) => {
      id = await completeId(s, args.id);
      return (await sessionSnapshots(s, ctx.home, id, { rollout })).list();
    });
    if (ctx.json) {
      ctx.out({ id, ...list });
      return 0;
    }
    if (list.snapshots.length === 0) {
      ctx.out(`no snapshots for ${id} (project ${escapeLine(list.projectPath)})\n`);
      return 0;
    }
    const lines = list.snapshots.map((s) => {
      const mark = s.current ? "*" : " ";
      const skipped = s.skippedFiles
        ? `  (${s.skippedFiles.length} left out: large files, nested repositories, names that are not UTF-8)`
        : "";
      const kept = s.kept ? "  (kept)" : "";
      return `${mark} ${String(s.index).padStart(3)}  ${when(s.at)}  ${s.snapshot.slice(0, 12)}  ${escapeLine(s.entryId ?? "-")}${kept}${skipped}\n`;
    });
    const stop = list.interrupted;
    const note = stop
      ? `${stop.direction} to snapshot ${stop.to} (${stop.snapshot.slice(0, 12)}) was interrupted: the work tree ` +
        `is between it and the current one; run \`freecode session ${stop.direction} ${escapeLine(id)}\` to finish it\n`
      : "";
    ctx.out(`snapshots of ${escapeLine(list.projectPath)}:\n${lines.join("")}${note}`);
    return 0;
  },
});
