/**
 * From a case's expectations to runnable checks. Most run on one session's Trace; bounds with
 * `over: selection` collect values from every selected session and decide once, over all of them.
 */
import type { Trace } from "../rollout/folds/trace-types.ts";
import { assertNever } from "../util/assert-never.ts";
import { expectBashMatches, forbidBashMatches } from "./assertions/bash.ts";
import { deniedNeverRan, expectDenied, forbidDenied, noRetryAfterDenial } from "./assertions/denied.ts";
import {
  checkBounds,
  compactions,
  duration,
  durationPoints,
  modelErrors,
  noHung,
  noInFlight,
  noStalls,
  type Timed,
  ttft,
  ttftPoints,
} from "./assertions/health.ts";
import {
  changedFiles,
  cost,
  maxModelCalls,
  type Price,
  type PriceLookup,
  priceIn,
  tokens,
  turns,
} from "./assertions/outcome.ts";
import { expectSequence } from "./assertions/sequence.ts";
import {
  expectFirstToolIn,
  expectInArgs,
  expectNoTools,
  expectParallelTools,
  expectTool,
  forbidTools,
  toolCallCount,
} from "./assertions/tools.ts";
import type { AssertionName, AssertionValue } from "./case-schema.ts";
import type { Expectation, LoadedCase } from "./load-cases.ts";
import { type Outcome, pass } from "./outcome.ts";

export interface SessionCheck {
  exp: Expectation;
  run(trace: Trace): Outcome;
}

export interface SelectionCheck {
  exp: Expectation;
  /** The values this session contributes. */
  collect(trace: Trace): Timed;
  /** The verdict over every selected session's values. */
  decide(points: Timed): Outcome;
}

export interface CompiledCase {
  sessionChecks: SessionCheck[];
  selectionChecks: SelectionCheck[];
}

const list = (x: string | string[]) => (Array.isArray(x) ? x : [x]);
const skipped = (name: string) => pass(`${name}: false (not checked)`);

/** One expectation as a function of a Trace. */
function toRun(exp: Expectation, priceOf: PriceLookup): (t: Trace) => Outcome {
  const name = exp.name as AssertionName;
  const val = <K extends AssertionName>(_k: K) => exp.value as AssertionValue<K>;
  switch (name) {
    case "expectTool": {
      const s = val("expectTool");
      return (t) => expectTool(t, s);
    }
    case "forbidTools": {
      const s = val("forbidTools");
      return Array.isArray(s) ? (t) => forbidTools(t, s) : (t) => forbidTools(t, s.tools, s);
    }
    case "expectNoTools":
      return val("expectNoTools") ? expectNoTools : () => skipped(name);
    case "expectFirstToolIn": {
      const s = val("expectFirstToolIn");
      return (t) => expectFirstToolIn(t, s);
    }
    case "expectInArgs": {
      const s = val("expectInArgs");
      return (t) => expectInArgs(t, s.tool, s.args);
    }
    case "expectParallelTools": {
      const s = val("expectParallelTools");
      return s === false ? () => skipped(name) : (t) => expectParallelTools(t, s === true ? 2 : s);
    }
    case "toolCalls": {
      const s = val("toolCalls");
      return (t) => toolCallCount(t, s);
    }
    case "expectBashMatches": {
      const s = list(val("expectBashMatches"));
      return (t) => expectBashMatches(t, s);
    }
    case "forbidBashMatches": {
      const s = list(val("forbidBashMatches"));
      return (t) => forbidBashMatches(t, s);
    }
    case "expectSequence": {
      const s = val("expectSequence");
      return (t) => expectSequence(t, s);
    }
    case "expectDenied": {
      const s = val("expectDenied");
      return (t) => expectDenied(t, s);
    }
    case "forbidDenied": {
      const s = val("forbidDenied");
      return s === false ? () => skipped(name) : (t) => forbidDenied(t, s === true ? {} : s);
    }
    case "deniedNeverRan": {
      const s = val("deniedNeverRan");
      return s === false ? () => skipped(name) : (t) => deniedNeverRan(t, s === true ? {} : s);
    }
    case "noRetryAfterDenial": {
      const s = val("noRetryAfterDenial");
      return s === false ? () => skipped(name) : (t) => noRetryAfterDenial(t, s === true ? {} : s);
    }
    case "noHung":
      return val("noHung") ? noHung : () => skipped(name);
    case "noInFlight":
      return val("noInFlight") ? noInFlight : () => skipped(name);
    case "noStalls":
      return val("noStalls") ? noStalls : () => skipped(name);
    case "ttft": {
      const s = val("ttft");
      return (t) => ttft(t, s);
    }
    case "duration": {
      const s = val("duration");
      return (t) => duration(t, s);
    }
    case "modelErrors": {
      const s = val("modelErrors");
      return (t) => modelErrors(t, s);
    }
    case "compactions": {
      const s = val("compactions");
      return (t) => compactions(t, s);
    }
    case "expectCompaction": {
      const s = val("expectCompaction");
      return (t) => compactions(t, s ? { min: 1 } : 0);
    }
    case "expectMaxTurns": {
      const s = val("expectMaxTurns");
      return (t) => maxModelCalls(t, s);
    }
    case "turns": {
      const s = val("turns");
      return (t) => turns(t, s);
    }
    case "changedFiles": {
      const s = val("changedFiles");
      return (t) => changedFiles(t, s);
    }
    case "tokens": {
      const s = val("tokens");
      return (t) => tokens(t, s);
    }
    case "cost": {
      const s = val("cost");
      return (t) => cost(t, s, priceOf);
    }
    default:
      return assertNever(name);
  }
}

/** Compile a case; `prices` (config.json) is overridden per model by the case's own `prices`. */
export function compileCase(c: LoadedCase, prices: Record<string, Price> = {}): CompiledCase {
  const priceOf = priceIn(c.input.prices ?? {}, prices);
  const sessionChecks: SessionCheck[] = [];
  const selectionChecks: SelectionCheck[] = [];
  for (const exp of c.expectations) {
    const v = exp.value as { over?: string; of?: "model" | "tool" | "session"; tool?: string };
    if ((exp.name === "ttft" || exp.name === "duration") && v.over === "selection") {
      const isTtft = exp.name === "ttft";
      const label = isTtft ? "ttft" : `${v.of ?? "model"} duration`;
      selectionChecks.push({
        exp,
        collect: (t) => (isTtft ? ttftPoints(t) : durationPoints(t, v.of ?? "model", v.tool)),
        decide: (points) =>
          checkBounds(points, exp.value as { max?: number; p95?: number }, `${label} over the selection,`),
      });
    } else sessionChecks.push({ exp, run: toRun(exp, priceOf) });
  }
  return { sessionChecks, selectionChecks };
}
