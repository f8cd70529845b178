/**
 * What one assertion says about one Trace. Three verdicts, never two: `error` ("could not evaluate")
 * is kept apart from `fail`, so a missing price or an empty p95 never passes or fails silently.
 * Every field beyond `message` points at evidence: the event `seq`, the tool call index, the first
 * diverging step of a sequence, the differing argument paths.
 */

import { cutText } from "../util/cut-text.ts";

export type Verdict = "pass" | "fail" | "error";

/** One argument path where a call differs from what was expected. */
export interface ArgDiff {
  /** Dotted path into the args, `""` for the args themselves. */
  path: string;
  /** What the matcher wanted, e.g. `contains "src/login.ts"`. */
  expected: string;
  /** The recorded value (JSON text, truncated), or `(missing)`. */
  actual: string;
}

export interface Outcome {
  verdict: Verdict;
  /** One line that explains the verdict on its own. */
  message: string;
  expected?: unknown;
  actual?: unknown;
  /** `seq` of the event where things went wrong (or the one that proves the point). */
  seq?: number;
  /** 0-based index of the tool call among the tools that ran. */
  callIndex?: number;
  /** 0-based index of the first diverging step of an expected sequence. */
  step?: number;
  diffs?: ArgDiff[];
  /** For a bound (`ttft`, `duration`): how many measured values it was checked over. */
  values?: number;
}

/** A passing outcome. */
export const pass = (message: string, extra: Partial<Outcome> = {}): Outcome => ({
  verdict: "pass",
  message,
  ...extra,
});

/** A failing outcome with its evidence. */
export const fail = (message: string, extra: Partial<Outcome> = {}): Outcome => ({
  verdict: "fail",
  message,
  ...extra,
});

/** "Could not evaluate": the question has no answer on this trace (not a failure of the agent). */
export const cannot = (message: string, extra: Partial<Outcome> = {}): Outcome => ({
  verdict: "error",
  message,
  ...extra,
});

/** A count bound: an exact number or a min/max range. */
export type CountSpec = number | { min?: number; max?: number };

/** Whether `n` satisfies the bound, and the bound as words (`at least 1`, `exactly 2`, `1..3`). */
export function checkCount(
  n: number,
  spec: CountSpec | undefined,
  defaultMin = 1,
): { ok: boolean; text: string } {
  if (typeof spec === "number") return { ok: n === spec, text: `exactly ${spec}` };
  const min = spec?.min ?? (spec?.max === undefined ? defaultMin : 0);
  const max = spec?.max;
  const ok = n >= min && (max === undefined || n <= max);
  const text =
    max === undefined
      ? `at least ${min}`
      : min === 0
        ? `at most ${max}`
        : min === max
          ? `exactly ${min}`
          : `${min}..${max}`;
  return { ok, text };
}

/** Short JSON text for messages (long values cut with an ellipsis). */
export function show(value: unknown, max = 120): string {
  if (value === undefined) return "(missing)";
  const text = typeof value === "string" ? JSON.stringify(value) : (JSON.stringify(value) ?? String(value));
  return cutText(text, max);
}

export { plural } from "../util/plural.ts";
