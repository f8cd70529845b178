/**
 * Outcome evidence without re-running anything: which files changed, how many tokens and dollars the
 * session spent, how many turns and model calls it took.
 */
import type { Trace } from "../../rollout/folds/trace-types.ts";
import { type Price, priceFor } from "../../rollout/folds/usage.ts";
import { pathMatches } from "../match/glob.ts";
import { type CountSpec, cannot, checkCount, fail, type Outcome, pass, plural } from "../outcome.ts";

export interface ChangedFilesSpec {
  /** Each glob matches at least one changed file. */
  include?: string[];
  /** No changed file matches any of these. */
  exclude?: string[];
  /** Every changed file matches one of these (e.g. "no writes outside src/"). */
  only?: string[];
}

/** Check `trace.changedFiles` against include / exclude / only globs. */
export function changedFiles(trace: Trace, spec: ChangedFilesSpec): Outcome {
  const files = trace.changedFiles;
  const listed = files.length ? files.join(", ") : "none";
  for (const g of spec.include ?? []) {
    if (!files.some((f) => pathMatches(g, f))) {
      return fail(`no changed file matches ${g} (changed: ${listed})`, {
        expected: spec.include,
        actual: files,
      });
    }
  }
  for (const f of files) {
    const hit = spec.exclude?.find((g) => pathMatches(g, f));
    if (hit)
      return fail(`changed file ${f} matches excluded ${hit}`, {
        expected: { exclude: spec.exclude },
        actual: files,
      });
    if (spec.only && !spec.only.some((g) => pathMatches(g, f))) {
      return fail(`changed file ${f} is outside ${spec.only.join(", ")}`, {
        expected: { only: spec.only },
        actual: files,
      });
    }
  }
  return pass(`${plural(files.length, "changed file")} fit the globs`);
}

export interface TokenBudget {
  maxInput?: number;
  maxOutput?: number;
  /** input + output */
  maxTotal?: number;
  maxCacheRead?: number;
}

/** Token totals of the session within budget. */
export function tokens(trace: Trace, budget: TokenBudget): Outcome {
  const checks: [string, number, number | undefined][] = [
    ["input", trace.inputTokens, budget.maxInput],
    ["output", trace.outputTokens, budget.maxOutput],
    ["total", trace.inputTokens + trace.outputTokens, budget.maxTotal],
    ["cache read", trace.cacheReadTokens, budget.maxCacheRead],
  ];
  for (const [name, n, max] of checks) {
    if (max !== undefined && n > max)
      return fail(`${name} tokens ${n} > budget ${max}`, { expected: `≤ ${max}`, actual: n });
  }
  return pass(`tokens within budget (input ${trace.inputTokens}, output ${trace.outputTokens})`);
}

export type { Price };

/** The session's cost in USD; undefined with the first unpriced model when a model has no price. */
export function costOf(trace: Trace, prices: Record<string, Price>): { usd?: number; unpriced?: string } {
  let usd = 0;
  for (const m of trace.modelSpans) {
    const id = m.model;
    const price = priceFor(prices, m.provider, m.model);
    const used =
      (m.inputTokens ?? 0) + (m.outputTokens ?? 0) + (m.cacheReadTokens ?? 0) + (m.cacheWriteTokens ?? 0);
    if (!price) {
      if (used > 0) return { unpriced: id };
      continue;
    }
    usd +=
      ((m.inputTokens ?? 0) * price.input +
        (m.outputTokens ?? 0) * price.output +
        (m.cacheReadTokens ?? 0) * (price.cacheRead ?? price.input) +
        (m.cacheWriteTokens ?? 0) * (price.cacheWrite ?? price.input)) /
      1e6;
  }
  return { usd };
}

/** The session cost at or under `maxUsd`; an unpriced model is "could not evaluate", not $0. */
export function cost(trace: Trace, spec: { maxUsd: number }, prices: Record<string, Price>): Outcome {
  const c = costOf(trace, prices);
  if (c.usd === undefined)
    return cannot(`no price for model ${c.unpriced} (add it to config.json "prices" or the case's "prices")`);
  if (c.usd > spec.maxUsd) {
    return fail(`cost $${c.usd.toFixed(4)} > budget $${spec.maxUsd}`, {
      expected: `≤ $${spec.maxUsd}`,
      actual: c.usd,
    });
  }
  return pass(`cost $${c.usd.toFixed(4)} within $${spec.maxUsd}`);
}

/** The number of turns is within bounds. */
export function turns(trace: Trace, bound: CountSpec): Outcome {
  const n = trace.turns.length;
  const b = checkCount(n, bound, 0);
  if (b.ok) return pass(`${plural(n, "turn")} (expected ${b.text})`);
  const at = typeof bound === "object" && bound.max !== undefined ? trace.turns[bound.max] : undefined;
  return fail(`expected ${b.text} turns, got ${n}`, {
    expected: b.text,
    actual: n,
    ...(at ? { seq: at.seq } : {}),
  });
}

/** freecode's `expectMaxTurns`: at most `max` model calls. */
export function maxModelCalls(trace: Trace, max: number): Outcome {
  const n = trace.modelSpans.length;
  if (n <= max) return pass(`${plural(n, "model call")} (at most ${max})`);
  return fail(`expected at most ${max} model calls, got ${n}`, {
    expected: `≤ ${max}`,
    actual: n,
    seq: trace.modelSpans[max]!.seq,
  });
}
