/**
 * `freecode rollout verify <id>`: schema, seq gaps or repeats, foreign aggregate ids, torn lines.
 * Exit 0 when clean, 1 when a problem was found.
 */

import { verifyRollout } from "../../../rollout/verify.ts";
import { escapeLine } from "../../../util/one-line.ts";
import { command } from "../../_command.ts";
import { withRollouts } from "./_source.ts";

export default command({
  meta: { name: "verify", description: "Check a rollout log: schema, seq order (gaps, repeats), torn lines" },
  args: {
    id: {
      type: "positional",
      required: true,
      description: "Session id, or a start of one no other id shares",
    },
  },
  async run(ctx, args) {
    const report = await withRollouts(ctx, async (r) => {
      const id = await r.resolve(args.id);
      return verifyRollout(await r.source(id), id);
    });
    if (ctx.json) ctx.out(report);
    else {
      const unknown = Object.entries(report.unknownTypes);
      // What a log holds (types, ids, a bad line's bytes in a parse error) is shown escaped.
      const lines = [
        `${report.ok ? "ok" : "PROBLEMS"}: ${report.sessionId}: ${report.events} events, last seq ${report.lastSeq}`,
        ...(unknown.length
          ? [
              `types newer than this version (skipped by folds): ${unknown.map(([t, n]) => `${escapeLine(t)} ×${n}`).join(", ")}`,
            ]
          : []),
        ...report.problems.map(
          (p) =>
            `  ${p.kind.padEnd(10)} ${p.line ? `line ${p.line}: ` : p.seq ? `seq ${p.seq}: ` : ""}${escapeLine(p.message)}`,
        ),
      ];
      ctx.out(`${lines.join("\n")}\n`);
    }
    return report.ok ? 0 : 1;
  },
});
