/**
 * Calls started with no output recorded: still running, or the agent died mid-call. As far as
 * anyone can tell they ran, and the checks that forbid a tool, a command or a file count them. A
 * refusal that names no call id (the fold withdraws calls only by id) answers one of them: the
 * latest before it of the same tool and, when both say, the same arguments — one call each (one
 * id-less refusal of `ls` hid a started `rm -rf /` before it).
 */
import type { Trace } from "../../rollout/folds/trace-types.ts";
import { deepEqual } from "../match/args.ts";

type Started = Trace["pendingCalls"][number];

/** Whether a call and a refusal record the same arguments, keys in any order (or one records none). */
const sameArgs = (a: unknown, b: unknown) => a === undefined || b === undefined || deepEqual(a, b);

export function startedCalls(trace: Trace): Started[] {
  const open = [...trace.pendingCalls];
  for (const d of trace.deniedSpans) {
    if (d.callId !== undefined) continue;
    let answered = -1;
    for (let i = 0; i < open.length; i++) {
      const c = open[i]!;
      if (c.seq < d.seq && c.tool === d.tool && sameArgs(c.args, d.args)) answered = i;
    }
    if (answered >= 0) open.splice(answered, 1);
  }
  return open;
}
