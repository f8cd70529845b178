/** `freecode store verify [--repair]`: integrity of the store; exit 1 while a problem remains. */
import { verifyStore } from "../../../storage/verify.ts";
import { command } from "../../_command.ts";
import { withOpenStore } from "./_open.ts";

export default command({
  meta: { name: "verify", description: "Check torn lines, seq gaps, counter and index drift, orphan files" },
  args: {
    repair: { type: "boolean", description: "Fix what is safe to fix (torn tails, counters, indexes)" },
  },
  async run(ctx, args) {
    const report = await withOpenStore(ctx, (adapter) =>
      verifyStore(adapter, ctx.home, args.repair === true),
    );
    if (ctx.json) ctx.out(report);
    else {
      const lines = report.problems.map((p) => {
        const where = [p.sessionId, p.file && `${p.file}${p.line ? `:${p.line}` : ""}`]
          .filter(Boolean)
          .join(" ");
        const state = p.repaired ? "repaired" : p.repairable ? "repairable with --repair" : "needs attention";
        return `${p.kind.padEnd(12)} ${where}: ${p.detail} [${state}]`;
      });
      const head = `${report.adapter}: ${report.sessions} sessions, ${report.eventLogs} rollout logs, ${report.problems.length} problem(s)`;
      ctx.out(`${[head, ...lines].join("\n")}\n${report.ok ? "ok" : "NOT OK"}\n`);
    }
    return report.ok ? 0 : 1;
  },
});
