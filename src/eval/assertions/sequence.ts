/**
 * Tool sequences with explicit modes. "Actual" is the tools that ran, in call order; repeated calls
 * count by position (two `read` steps need two `read` calls). The direction of subset/superset is
 * the agentevals one, read as "the recorded trajectory is a … of the expected steps":
 *
 * - `strict`    same calls in the same order, nothing more or less.
 * - `in_order`  the steps appear in this order; other calls may come between (a subsequence).
 * - `unordered` the same calls (as a multiset), in any order.
 * - `subset`    every recorded call is one of the steps (no tool outside the list); steps may go unused.
 *               steps [read, edit, bash], recorded [read, edit]        → pass
 *               steps [read, edit],       recorded [read, edit, bash]  → fail (bash is outside)
 * - `superset`  every step has its own recorded call; extra calls are fine.
 *               steps [read, edit],       recorded [read, bash, edit]  → pass
 *               steps [read, edit, edit], recorded [read, edit]        → fail (the second edit is missing)
 *
 * An empty step list against an empty trajectory passes in every mode.
 */
import type { ToolSpan, Trace } from "../../rollout/folds/trace-types.ts";
import { type ArgSpec, type ArgsMode, argsMatch, describeDiffs, diffArgs } from "../match/args.ts";
import { nameMatches } from "../match/glob.ts";
import { fail, type Outcome, pass, plural } from "../outcome.ts";

export const SEQUENCE_MODES = ["strict", "in_order", "unordered", "subset", "superset"] as const;
export type SequenceMode = (typeof SEQUENCE_MODES)[number];

export interface Step {
  name: string;
  args?: ArgSpec;
  argsMode?: ArgsMode;
}

export interface SequenceSpec {
  mode: SequenceMode;
  steps: (Step | string)[];
}

const norm = (s: Step | string): Step => (typeof s === "string" ? { name: s } : s);
const fits = (step: Step, span: ToolSpan) =>
  nameMatches(step.name, span.tool) && (!step.args || argsMatch(span.args, step.args, step.argsMode));
const label = (s: Step) => (s.args ? `${s.name}(${JSON.stringify(s.args)})` : s.name);
const at = (s: ToolSpan) => `call #${s.index} ${s.tool} (seq ${s.callSeq})`;

/** Why `span` does not fit `step`: a different name, or the differing arg paths. */
function whyNot(step: Step, span: ToolSpan): string {
  if (!nameMatches(step.name, span.tool)) return `expected ${label(step)}, got ${at(span)}`;
  return `expected ${label(step)}, got ${at(span)} with ${describeDiffs(diffArgs(span.args, step.args!, step.argsMode))}`;
}

/** Maximum bipartite matching of steps to calls (Kuhn): stepToCall[i] is a call index or -1. */
function match(steps: Step[], calls: ToolSpan[]): { stepToCall: number[]; callToStep: number[] } {
  const edges: number[][] = [];
  for (const s of steps) {
    const e: number[] = [];
    for (let j = 0; j < calls.length; j++) if (fits(s, calls[j]!)) e.push(j);
    edges.push(e);
  }
  const callToStep = new Array<number>(calls.length).fill(-1);
  const stepToCall = new Array<number>(steps.length).fill(-1);
  // seen[j] === round: call j was visited in this step's search (one array for all rounds).
  const seen = new Int32Array(calls.length);
  let round = 0;
  const tryStep = (i: number): boolean => {
    for (const j of edges[i]!) {
      if (seen[j] === round) continue;
      seen[j] = round;
      if (callToStep[j] === -1 || tryStep(callToStep[j]!)) {
        callToStep[j] = i;
        stepToCall[i] = j;
        return true;
      }
    }
    return false;
  };
  for (let i = 0; i < steps.length; i++) {
    round++;
    tryStep(i);
  }
  return { stepToCall, callToStep };
}

/** Check the recorded tool calls against `steps` in the given mode. */
export function expectSequence(trace: Trace, spec: SequenceSpec): Outcome {
  const steps = spec.steps.map(norm);
  const calls = trace.toolSpans;
  // Built only for a failure: a passing check needs no evidence.
  const evidence = () => ({ expected: steps.map(label), actual: calls.map((c) => c.tool) });
  const ok = () => pass(`${spec.mode}: ${plural(calls.length, "call")} fit ${plural(steps.length, "step")}`);

  switch (spec.mode) {
    case "strict": {
      for (let i = 0; i < Math.max(steps.length, calls.length); i++) {
        const step = steps[i];
        const call = calls[i];
        if (step && call && fits(step, call)) continue;
        if (step && call)
          return fail(`strict: step ${i} diverges: ${whyNot(step, call)}`, {
            ...evidence(),
            step: i,
            seq: call.callSeq,
            callIndex: i,
          });
        if (step)
          return fail(
            `strict: step ${i} ${label(step)} missing: the trajectory ends after ${plural(calls.length, "call")}`,
            { ...evidence(), step: i },
          );
        return fail(
          `strict: unexpected extra ${at(call!)} after the ${plural(steps.length, "expected step")}`,
          { ...evidence(), step: i, seq: call!.callSeq, callIndex: i },
        );
      }
      return ok();
    }
    case "in_order": {
      let from = 0;
      for (let i = 0; i < steps.length; i++) {
        const step = steps[i]!;
        let j = from;
        while (j < calls.length && !fits(step, calls[j]!)) j++;
        if (j === calls.length) {
          const after = from > 0 ? ` after ${at(calls[from - 1]!)}` : "";
          const near = calls.slice(from).find((c) => nameMatches(step.name, c.tool));
          const hint = near ? `; nearest: ${whyNot(step, near)}` : "";
          return fail(`in_order: step ${i} ${label(step)} not found${after}${hint}`, {
            ...evidence(),
            step: i,
            ...(near
              ? { seq: near.callSeq, callIndex: near.index }
              : from > 0
                ? { seq: calls[from - 1]!.callSeq }
                : {}),
          });
        }
        from = j + 1;
      }
      return ok();
    }
    case "unordered":
    case "subset":
    case "superset": {
      const { stepToCall, callToStep } = match(steps, calls);
      const missing = stepToCall.indexOf(-1);
      const extra = callToStep.indexOf(-1);
      const needSteps = spec.mode !== "subset";
      const needCalls = spec.mode !== "superset";
      if (needSteps && missing !== -1) {
        return fail(
          `${spec.mode}: step ${missing} ${label(steps[missing]!)} has no matching call of its own (${plural(stepToCall.filter((x) => x === -1).length, "step")} unmatched)`,
          {
            ...evidence(),
            step: missing,
          },
        );
      }
      if (needCalls && extra !== -1) {
        const c = calls[extra]!;
        return fail(
          `${spec.mode}: ${at(c)} is not among the expected steps (${plural(callToStep.filter((x) => x === -1).length, "call")} unmatched)`,
          {
            ...evidence(),
            seq: c.callSeq,
            callIndex: extra,
          },
        );
      }
      return ok();
    }
  }
}
