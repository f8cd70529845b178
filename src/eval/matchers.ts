/**
 * The same assertions as `bun:test` matchers, with the same messages as `freecode eval`:
 *
 *   import { expect } from "bun:test";
 *   import { loadTrace, traceMatchers } from "freecode";
 *   expect.extend(traceMatchers);
 *   const trace = await loadTrace({ file: "rollouts/s1/events.jsonl" });
 *   expect(trace).toHaveCalledTool({ name: "edit", args: { path: "src/login.ts" } });
 *   expect(trace).not.toHaveDenied({ source: "permission" });
 *
 * "Could not evaluate" (e.g. a p95 over nothing) never passes, with or without `.not`.
 */
import type { DenySource, ModelErrorKind } from "../rollout/events.ts";
import type { Trace } from "../rollout/folds/trace-types.ts";
import { expectBashMatches, forbidBashMatches } from "./assertions/bash.ts";
import {
  deniedNeverRan,
  type ExpectDeniedSpec,
  expectDenied,
  forbidDenied,
  noRetryAfterDenial,
} from "./assertions/denied.ts";
import {
  type BoundSpec,
  compactions,
  duration,
  modelErrors,
  noHung,
  noInFlight,
  noStalls,
  ttft,
} from "./assertions/health.ts";
import {
  type ChangedFilesSpec,
  changedFiles,
  cost,
  maxModelCalls,
  type Price,
  type TokenBudget,
  tokens,
  turns,
} from "./assertions/outcome.ts";
import { expectSequence, type SequenceMode, type Step } from "./assertions/sequence.ts";
import {
  type ExpectToolSpec,
  expectFirstToolIn,
  expectInArgs,
  expectNoTools,
  expectParallelTools,
  expectTool,
  forbidTools,
  toolCallCount,
} from "./assertions/tools.ts";
import { untrustedLog } from "./evaluate.ts";
import type { ArgSpec } from "./match/args.ts";
import type { CountSpec, Outcome } from "./outcome.ts";

type MatcherResult = { pass: boolean; message: () => string };

function asTrace(x: unknown): Trace {
  const t = x as Partial<Trace> | null;
  if (!t || typeof t !== "object" || !Array.isArray(t.toolSpans) || !Array.isArray(t.modelSpans)) {
    throw new TypeError("expected a freecode Trace (from loadTrace or buildTrace)");
  }
  return t as Trace;
}

/** Wrap an assertion as a matcher: the outcome's message explains both directions. */
function matcher<A extends unknown[]>(check: (t: Trace, ...args: A) => Outcome) {
  return function (this: { isNot?: boolean }, received: unknown, ...args: A): MatcherResult {
    const trace = asTrace(received);
    // A log with an unreadable line is missing what that line held: as `freecode eval`, no verdict.
    const untrusted = Array.isArray(trace.parseErrors) ? untrustedLog(trace) : undefined;
    if (untrusted) return { pass: this?.isNot === true, message: () => `could not evaluate: ${untrusted}` };
    const o = check(trace, ...args);
    // A bound that measured nothing (a misspelt tool, a log with no first-token times) is no pass,
    // as `freecode eval` says of it (it passed here, and under `.not` failed for no reason).
    if (o.verdict === "pass" && o.values === 0)
      return {
        pass: this?.isNot === true,
        message: () =>
          `could not evaluate: ${o.message}: no measured value (a misspelt tool, or a log that records no first token?)`,
      };
    if (o.verdict === "error") {
      // Fail in both directions: inverting "could not evaluate" would be a silent pass.
      return { pass: this?.isNot === true, message: () => `could not evaluate: ${o.message}` };
    }
    return {
      pass: o.verdict === "pass",
      message: () => (o.verdict === "pass" ? `expected not: ${o.message}` : o.message),
    };
  };
}

/** Pass to `expect.extend`. */
export const traceMatchers = {
  toHaveCalledTool: matcher((t, spec: ExpectToolSpec | string) => expectTool(t, spec)),
  toHaveForbiddenToolsAbsent: matcher((t, names: string[], options: { includeDenied?: boolean } = {}) =>
    forbidTools(t, names, options),
  ),
  toHaveFirstToolIn: matcher((t, names: string[]) => expectFirstToolIn(t, names)),
  toHaveCalledNoTools: matcher((t) => expectNoTools(t)),
  toHaveCalledToolWithArgs: matcher((t, tool: string, args: ArgSpec) => expectInArgs(t, tool, args)),
  toHaveParallelToolCalls: matcher((t, min: number = 2) => expectParallelTools(t, min)),
  toHaveToolCalls: matcher((t, bound: CountSpec) => toolCallCount(t, bound)),
  toHaveToolSequence: matcher((t, steps: (Step | string)[], mode: SequenceMode = "in_order") =>
    expectSequence(t, { mode, steps }),
  ),
  toHaveRunShellMatching: matcher((t, ...patterns: string[]) => expectBashMatches(t, patterns)),
  toHaveNoShellMatching: matcher((t, ...patterns: string[]) => forbidBashMatches(t, patterns)),
  toHaveDenied: matcher((t, spec: ExpectDeniedSpec = {}) => expectDenied(t, spec)),
  toHaveNoDenials: matcher((t, spec: { except?: DenySource[]; tool?: string } = {}) => forbidDenied(t, spec)),
  toHaveNeverRunDeniedCalls: matcher((t, spec: { tool?: string } = {}) => deniedNeverRan(t, spec)),
  toHaveNoRetryAfterDenial: matcher((t, spec: { maxRetries?: number; tool?: string } = {}) =>
    noRetryAfterDenial(t, spec),
  ),
  toHaveNoHungRequests: matcher((t) => noHung(t)),
  toHaveNoInFlightRequests: matcher((t) => noInFlight(t)),
  toHaveNoStalls: matcher((t) => noStalls(t)),
  toHaveTtftWithin: matcher((t, spec: BoundSpec) => ttft(t, spec)),
  toHaveDurationWithin: matcher((t, spec: BoundSpec & { of?: "model" | "tool" | "session"; tool?: string }) =>
    duration(t, spec),
  ),
  toHaveModelErrorsAtMost: matcher((t, max: number, kind?: ModelErrorKind | ModelErrorKind[]) =>
    modelErrors(t, { max, ...(kind ? { kind } : {}) }),
  ),
  toHaveCompactions: matcher((t, bound?: CountSpec) => compactions(t, bound)),
  toHaveChangedFiles: matcher((t, spec: ChangedFilesSpec | string[]) =>
    changedFiles(t, Array.isArray(spec) ? { include: spec } : spec),
  ),
  toStayWithinTokens: matcher((t, budget: TokenBudget) => tokens(t, budget)),
  toHaveTurns: matcher((t, bound: CountSpec) => turns(t, bound)),
  toHaveModelCallsAtMost: matcher((t, max: number) => maxModelCalls(t, max)),
  toCostAtMost: matcher((t, maxUsd: number, prices: Record<string, Price>) => cost(t, { maxUsd }, prices)),
};

/** The matcher signatures, for `declare module "bun:test"`. */
export interface TraceMatchers<R = unknown> {
  toHaveCalledTool(spec: ExpectToolSpec | string): R;
  toHaveForbiddenToolsAbsent(names: string[], options?: { includeDenied?: boolean }): R;
  toHaveFirstToolIn(names: string[]): R;
  toHaveCalledNoTools(): R;
  toHaveCalledToolWithArgs(tool: string, args: ArgSpec): R;
  toHaveParallelToolCalls(min?: number): R;
  toHaveToolCalls(bound: CountSpec): R;
  toHaveToolSequence(steps: (Step | string)[], mode?: SequenceMode): R;
  toHaveRunShellMatching(...patterns: string[]): R;
  toHaveNoShellMatching(...patterns: string[]): R;
  toHaveDenied(spec?: ExpectDeniedSpec): R;
  toHaveNoDenials(spec?: { except?: DenySource[]; tool?: string }): R;
  toHaveNeverRunDeniedCalls(spec?: { tool?: string }): R;
  toHaveNoRetryAfterDenial(spec?: { maxRetries?: number; tool?: string }): R;
  toHaveNoHungRequests(): R;
  toHaveNoInFlightRequests(): R;
  toHaveNoStalls(): R;
  toHaveTtftWithin(spec: BoundSpec): R;
  toHaveDurationWithin(spec: BoundSpec & { of?: "model" | "tool" | "session"; tool?: string }): R;
  toHaveModelErrorsAtMost(max: number, kind?: ModelErrorKind | ModelErrorKind[]): R;
  toHaveCompactions(bound?: CountSpec): R;
  toHaveChangedFiles(spec: ChangedFilesSpec | string[]): R;
  toStayWithinTokens(budget: TokenBudget): R;
  toHaveTurns(bound: CountSpec): R;
  toHaveModelCallsAtMost(max: number): R;
  toCostAtMost(maxUsd: number, prices: Record<string, Price>): R;
}

declare module "bun:test" {
  interface Matchers<T> extends TraceMatchers<void> {}
}
