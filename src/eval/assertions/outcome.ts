/**
 * Outcome evidence without re-running anything: which files changed, how many tokens and dollars the
 * session spent, how many turns and model calls it took.
 */
import type { Trace } from "../../rollout/folds/trace-types.ts";
import { type Price, priceFor } from "../../rollout/folds/usage.ts";
import { type PlacedPath, placedMatches, placePath } from "../match/glob.ts";
import { type CountSpec, cannot, checkCount, fail, type Outcome, pass, plural } from "../outcome.ts";

export interface ChangedFilesSpec {
  /** Each glob matches at least one changed file. */
  include?: string[];
  /** No changed file matches any of these. */
  exclude?: string[];
  /** Every changed file matches one of these (e.g. "no writes outside src/"). */
  only?: string[];
}

/**
 * Check `trace.changedFiles` against include / exclude / only globs, each path placed in the
 * project first (see `placePath`): a relative glob matches the path relative to the project, so a
 * path outside the project matches no relative glob. Without the project directory an absolute
 * path cannot be placed: where that decides the verdict, the check could not be evaluated (it never
 * passes `only` by default). A definite failure is reported before that.
 */
export function changedFiles(trace: Trace, spec: ChangedFilesSpec): Outcome {
  const project = trace.projectPath || undefined;
  const files = trace.changedFiles;
  const placed = files.map((f) => placePath(f, project));
  const listed = files.length ? files.join(", ") : "none";
  let unsure: Outcome | undefined;
  const cannotPlace = (i: number, what: string) =>
    (unsure ??= cannot(
      `cannot place ${files[i]} in the project (the session's project directory is unknown) to check ${what}`,
    ));
  for (const g of spec.include ?? []) {
    const hits = placed.map((p) => placedMatches(g, p));
    if (hits.includes(true)) continue;
    if (hits.includes(undefined)) {
      cannotPlace(hits.indexOf(undefined), `include ${g}`);
      continue;
    }
    return fail(`no changed file matches ${g} (changed: ${listed})`, {
      expected: spec.include,
      actual: files,
    });
  }
  // What a write started with no output recorded may have changed is held to `exclude` and `only`
  // too (a started `Write /etc/passwd` passed `only: [src/**]` while forbidTools called it run);
  // `include` asks for files that were written, so it reads the finished writes alone.
  const started = trace.pendingCalls.flatMap((c) => c.paths ?? []).filter((f) => !files.includes(f));
  const all = [...files, ...started];
  const placedAll = [...placed, ...started.map((f) => placePath(f, project))];
  for (const [i, f] of all.entries()) {
    const p = placedAll[i]!;
    const what =
      i < files.length ? `changed file ${f}` : `file ${f} (written by a call with no output recorded)`;
    const place = (why: string) =>
      (unsure ??= cannot(
        `cannot place ${f} in the project (the session's project directory is unknown) to check ${why}`,
      ));
    for (const g of spec.exclude ?? []) {
      const hit = placedMatches(g, p);
      if (hit === undefined) place(`exclude ${g}`);
      if (hit)
        return fail(`${what} matches excluded ${g}`, {
          expected: { exclude: spec.exclude },
          actual: all,
        });
    }
    if (!spec.only) continue;
    const hits = spec.only.map((g) => placedMatches(g, p));
    if (hits.includes(true)) continue;
    if (hits.includes(undefined)) place(`only ${spec.only.join(", ")}`);
    else
      return fail(outsideOnly(what, p, project, spec.only), { expected: { only: spec.only }, actual: all });
  }
  return unsure ?? pass(`${plural(files.length, "changed file")} fit the globs`);
}

function outsideOnly(what: string, placed: PlacedPath, project: string | undefined, only: string[]): string {
  if (placed.inProject === false)
    return `${what} is outside the project${project ? ` ${project}` : ""} (only: ${only.join(", ")})`;
  return `${what} is outside ${only.join(", ")}`;
}

export interface TokenBudget {
  /** Prompt tokens: uncached input + cache read + cache write (OTel GenAI's input_tokens). */
  maxInput?: number;
  maxOutput?: number;
  /** Prompt tokens (as maxInput) + output. */
  maxTotal?: number;
  maxCacheRead?: number;
}

/**
 * Token totals of the session within budget. freecode's `inputTokens` leaves out cached input, which
 * on an agent session is most of the prompt (a Claude Code session: 134 uncached, 3.7M cache read),
 * so the input budget counts every prompt token the model processed, as OTel GenAI's
 * `gen_ai.usage.input_tokens` does; output already includes reasoning.
 */
export function tokens(trace: Trace, budget: TokenBudget): Outcome {
  const {
    inputTokens: uncached,
    cacheReadTokens: read,
    cacheWriteTokens: write,
    outputTokens: modelOutput,
  } = trace;
  // The redirect advisor's tokens were processed too (`usage` counts them): in the budget.
  const advisor = trace.redirectTokens ?? { input: 0, output: 0 };
  const output = modelOutput + advisor.output;
  const input = uncached + read + write + advisor.input;
  const parts = `${uncached} uncached, ${read} cache read, ${write} cache write${advisor.input ? `, ${advisor.input} redirect advisor` : ""}`;
  const checks: [string, number, number | undefined][] = [
    [`input tokens ${input} (${parts})`, input, budget.maxInput],
    [`output tokens ${output}`, output, budget.maxOutput],
    [`total tokens ${input + output} (${parts}, ${output} output)`, input + output, budget.maxTotal],
    [`cache read tokens ${read}`, read, budget.maxCacheRead],
  ];
  // Every budget exceeded, not the first alone (a failing maxTotal hid behind maxInput).
  const over = checks.filter(([, n, max]) => max !== undefined && n > max);
  if (over.length > 0)
    return fail(over.map(([what, , max]) => `${what} > budget ${max}`).join("; "), {
      expected: over.map(([, , max]) => `≤ ${max}`).join("; "),
      actual: over.length === 1 ? over[0]![1] : over.map(([, n]) => n).join("; "),
    });
  return pass(`tokens within budget (input ${input} incl. ${read + write} cached, output ${output})`);
}

export type { Price };

/** The price of a model a session used, or undefined when none is configured. */
export type PriceLookup = (provider: string, model: string) => Price | undefined;

/**
 * Look a model up in `tables`, the first that prices it winning: a case's own `prices` before
 * config.json's, model by model. (One merged table could not say this: `priceFor` takes any exact
 * key before any glob, so config's exact `claude-sonnet-4` would beat a case's `claude-sonnet-*`.)
 */
export const priceIn =
  (...tables: Record<string, Price>[]): PriceLookup =>
  (provider, model) => {
    for (const table of tables) {
      const price = priceFor(table, provider, model);
      if (price) return price;
    }
    return undefined;
  };

/**
 * The session's cost in USD: each response at its model's price, else at the cost the agent recorded
 * for it (`costUsd`: an imported OpenCode step's); undefined with the first model that has neither
 * (and used tokens).
 */
export function costOf(
  trace: Trace,
  prices: Record<string, Price> | PriceLookup,
): { usd?: number; unpriced?: string } {
  const priceOf = typeof prices === "function" ? prices : priceIn(prices);
  let usd = 0;
  for (const m of trace.modelSpans) {
    // The model that answered, as `usage` prices each response (the request's made the two differ
    // for a response naming a dated id, or another model).
    const id = m.responseModel ?? m.model;
    const price = priceOf(m.provider, id);
    const used =
      (m.inputTokens ?? 0) + (m.outputTokens ?? 0) + (m.cacheReadTokens ?? 0) + (m.cacheWriteTokens ?? 0);
    if (!price) {
      if (m.costUsd !== undefined) usd += m.costUsd;
      else if (used > 0) return { unpriced: id };
      continue;
    }
    usd +=
      ((m.inputTokens ?? 0) * price.input +
        (m.outputTokens ?? 0) * price.output +
        (m.cacheReadTokens ?? 0) * (price.cacheRead ?? price.input) +
        (m.cacheWriteTokens ?? 0) * (price.cacheWrite ?? price.input)) /
      1e6;
  }
  // As `usage`: the redirect advisor's tokens have no price (no model names them).
  const advisor = trace.redirectTokens;
  if (advisor && advisor.input + advisor.output > 0) return { unpriced: "(redirect advisor)" };
  return { usd };
}

/** The session cost at or under `maxUsd`; an unpriced model is "could not evaluate", not $0. */
export function cost(
  trace: Trace,
  spec: { maxUsd: number },
  prices: Record<string, Price> | PriceLookup,
): Outcome {
  const c = costOf(trace, prices);
  if (c.usd === undefined)
    return cannot(`no price for model ${c.unpriced} (add it to config.json "prices" or the case's "prices")`);
  // As written, never in exponent form (`$1e-7`).
  const budget = spec.maxUsd.toLocaleString("en-US", { maximumFractionDigits: 12, useGrouping: false });
  // To a billionth of a dollar: a sum of prices is off in its last bits, and a cost exactly at its
  // budget failed ("cost $0.1755 > budget $0.1755").
  const usd = Math.round(c.usd * 1e9) / 1e9;
  // As many decimals as put the cost on its side of the budget (`$0.0054 > budget $0.00542`).
  let d = 4;
  while (d < 9 && Number(usd.toFixed(d)) <= spec.maxUsd === usd > spec.maxUsd) d++;
  const shown = usd.toFixed(d);
  if (usd > spec.maxUsd) {
    return fail(`cost $${shown} > budget $${budget}`, {
      expected: `≤ $${budget}`,
      actual: c.usd,
    });
  }
  return pass(`cost $${shown} within $${budget}`);
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
