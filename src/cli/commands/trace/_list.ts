/**
 * `trace --list`: the sessions with a rollout log, newest first (by their last event's time), each with
 * its state at a glance. Each one shown is folded, so only the newest `limit` are; the rest are
 * counted (`total` in `--json`, a last line otherwise).
 */
import type { TraceOptions } from "../../../rollout/folds/trace.ts";
import { loadTrace } from "../../../rollout/load.ts";
import { traceState } from "../../../rollout/trace-state.ts";
import { fmtMs } from "../../../rollout/waterfall.ts";
import type { CommandContext } from "../../_command.ts";
import type { Rollouts } from "../rollout/_source.ts";

export async function listTraces(
  ctx: CommandContext,
  r: Rollouts,
  options: TraceOptions,
  limit: number,
): Promise<number> {
  const logs = (await r.list()).sort((a, b) => b.lastAt - a.lastAt);
  const rows = [];
  for (const { id } of logs.slice(0, limit)) {
    const t = await loadTrace(await r.source(id), options);
    rows.push({
      sessionId: id,
      startedAt: t.startedAt,
      endedAt: t.endedAt,
      events: t.eventCount,
      turns: t.turns.length,
      modelCalls: t.modelSpans.length,
      toolCalls: t.toolSpans.length,
      denied: t.deniedSpans.length,
      state: traceState(t),
      wall_ms: t.wall_ms,
      unreadableLines: t.parseErrors.length,
    });
  }
  const more = logs.length - rows.length;
  if (ctx.json) ctx.out({ total: logs.length, sessions: rows });
  else if (rows.length === 0) ctx.out("no rollout logs\n");
  else {
    // As wide as the longest id shown (an imported subagent's runs to 80).
    const w = Math.max(28, ...rows.map((x) => x.sessionId.length));
    const head = `${"SESSION".padEnd(w)} ${"STARTED".padEnd(20)} ${"STATE".padEnd(9)} ${"TURNS".padStart(5)} ${"EVENTS".padStart(7)} ${"WALL".padStart(9)}`;
    const lines = rows.map(
      (x) =>
        `${x.sessionId.padEnd(w)} ${(x.events > 0 ? new Date(x.startedAt).toISOString().slice(0, 19).replace("T", " ") : "-").padEnd(20)} ${x.state.padEnd(9)} ${String(x.turns).padStart(5)} ${String(x.events).padStart(7)} ${fmtMs(x.wall_ms).padStart(9)}`,
    );
    if (more > 0)
      lines.push(
        `… ${more} older session${more === 1 ? "" : "s"} with a log (--limit ${logs.length} shows all)`,
      );
    ctx.out(`${[head, ...lines].join("\n")}\n`);
  }
  return 0;
}
