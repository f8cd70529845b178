/**
 * Calls started with no output recorded: still running, or the agent died mid-call. As far as
 * anyone can tell they ran, and the checks that forbid a tool, a command or a file count them. A
 * call refused by a denial that names no id (the fold withdraws only by id) is left out: a refusal
 * of the same tool after it says what became of it.
 */
import type { Trace } from "../../rollout/folds/trace-types.ts";

export function startedCalls(trace: Trace): Trace["pendingCalls"] {
  return trace.pendingCalls.filter(
    (c) =>
      c.callId !== undefined ||
      !trace.deniedSpans.some((d) => d.callId === undefined && d.tool === c.tool && d.seq > c.seq),
  );
}
