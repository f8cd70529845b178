/** `freecode store verify [--repair]`: integrity of the store; exit 1 while a problem remains. */
import { storeFileOf, storeHasData } from "../../../storage/store-file.ts";
import { type VerifyReport, verifyStore } from "../../../storage/verify.ts";
import { command } from "../../_command.ts";
import { withOpenStore } from "./_open.ts";

export default command({
  meta: { name: "verify", description: "Check torn lines, seq gaps, counter and index drift, orphan files" },
  args: {
    repair: { type: "boolean", description: "Fix what is safe to fix (torn tails, counters, indexes)" },
  },
  async run(ctx, args) {
    const report =
      (await notMadeYet(ctx.storeName(), ctx.home)) ??
      (await withOpenStore(ctx, (adapter) => verifyStore(adapter, ctx.home, args.repair === true)));
    if (ctx.json) ctx.out(report);
    else {
      const lines = report.problems.map((p) => {
        const where = [p.sessionId, p.file && `${p.file}${p.line ? `:${p.line}` : ""}`]
          .filter(Boolean)
          .join(" ");
        const state = p.repaired
          ? "repaired"
          : p.repaired === false
            ? "not repaired"
            : p.repairable
              ? "repairable with --repair"
              : "needs attention";
        return `${p.kind.padEnd(12)} ${where}: ${p.detail} [${state}]`;
      });
      const head = `${report.adapter}: ${report.sessions} sessions, ${report.eventLogs} rollout logs, ${report.problems.length} problem(s)`;
      ctx.out(`${[head, ...lines].join("\n")}\n${report.ok ? "ok" : "NOT OK"}\n`);
    }
    return report.ok ? 0 : 1;
  },
});

/**
 * The report for a one-file store that has no file yet (an empty store): opening it would make the
 * database, and a check should leave nothing behind (a mistyped `--home` got a `state/store.db`).
 * A journal alone is data (it said "0 sessions … ok" for a store `session list` showed).
 */
async function notMadeYet(name: string | undefined, home: string): Promise<VerifyReport | undefined> {
  const file = name === undefined ? undefined : await storeFileOf(name, home);
  if (file === undefined || (await storeHasData(name!, home))) return undefined;
  return { adapter: name!, location: file, sessions: 0, eventLogs: 0, problems: [], ok: true };
}
