/**
 * `freecode session undo <id> [--dry-run]`: put the session's work tree back to the previous
 * snapshot. `redo.ts` is the same command walking forward.
 */

import { rolloutEnabled } from "../../../rollout/recorder.ts";
import { sessionSnapshots } from "../../../snapshot/session.ts";
import { escapeLine } from "../../../util/one-line.ts";
import { plural } from "../../../util/plural.ts";
import { command } from "../../_command.ts";
import { ID_ARG, withStore } from "./_shared.ts";

const SIGN = { added: "A", modified: "M", deleted: "D" } as const;

/** The undo or redo command. */
export function walkCommand(direction: "undo" | "redo") {
  const description =
    direction === "undo"
      ? "Restore the session's work tree to the previous snapshot"
      : "Restore the session's work tree to the next snapshot (after an undo)";
  return command({
    meta: { name: direction, description },
    args: {
      ...ID_ARG,
      "dry-run": { type: "boolean", description: "Print the files that would change; touch nothing" },
    },
    async run(ctx, args) {
      const dryRun = args["dry-run"] === true;
      const rollout = rolloutEnabled(process.env, ctx.config()) && !dryRun;
      const r = await withStore(ctx, async (s) => {
        const snapshots = await sessionSnapshots(s, ctx.home, args.id, { rollout });
        return snapshots[direction]({ dryRun });
      });
      if (ctx.json) {
        ctx.out({ id: args.id, ...r });
        return 0;
      }
      const files = r.files.map((f) => `${SIGN[f.change]} ${escapeLine(f.path)}\n`).join("");
      const head = dryRun
        ? `${direction} would restore snapshot ${r.snapshot.slice(0, 12)}: ${plural(r.filesChanged, "file")} would change`
        : `${direction}: restored snapshot ${r.snapshot.slice(0, 12)}: ${plural(r.filesChanged, "file")} changed`;
      const keep = dryRun ? "would be kept" : "were kept";
      const redo = r.resumed ? "the last snapshot: redo reaches it" : "redo brings them back";
      const kept = r.autosaved
        ? ` (changes no snapshot held ${keep} as ${r.autosaved.slice(0, 12)}, ${redo})`
        : "";
      const resumed = r.resumed ? ` (finished the ${direction} that was interrupted)` : "";
      ctx.out(`${head}${kept}${resumed}\n${files}`);
      return 0;
    },
  });
}

export default walkCommand("undo");
