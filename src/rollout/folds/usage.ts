/**
 * The usage fold: tokens and cost per model, from `model.response` events (and the advisor calls
 * `redirect.triggered` records). Prices are USD per million tokens, from config.json `prices`, keyed
 * by model id, `provider/model`, or a glob (`claude-*`). A model with no price is costed at what the
 * agent recorded (`costUsd` on `model.response`: OpenCode's per-step cost, imported) when every one
 * of its responses that used tokens recorded a cost; otherwise it reports its tokens and `costUsd: null` — never 0,
 * which would read as "free". Cost assumes `inputTokens` excludes cache
 * reads and writes (Anthropic's accounting, which freecode's events follow); cache tokens are priced at
 * their own rates, or at the input rate when none is configured.
 */

import { own } from "../../util/dict.ts";
import { wildcard, wildcardMatches } from "../../util/wildcard.ts";
import { UNREAD_BY_USAGE } from "../_unread.ts";
import type { RolloutEvent } from "../events.ts";
import { recordedCost } from "../recorded-cost.ts";
import { datedAlike, undatedOf } from "./_model-id.ts";

export interface Price {
  input: number;
  output: number;
  cacheRead?: number;
  cacheWrite?: number;
}

export interface ModelUsage {
  provider: string;
  model: string;
  requests: number;
  responses: number;
  errors: number;
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  reasoningTokens: number;
  /** null when no price is configured for this model and its responses did not all record a cost. */
  costUsd: number | null;
  /** Where `costUsd` came from: config.json `prices`, or the costs the agent recorded. */
  costFrom?: "prices" | "recorded";
  /** The sum of the costs the agent recorded, when every response that used tokens recorded one; else null. */
  recordedCostUsd: number | null;
}

export interface UsageTotals
  extends Omit<ModelUsage, "provider" | "model" | "costUsd" | "costFrom" | "recordedCostUsd"> {
  /** Sum over the models whose cost is known; null if none's is. */
  costUsd: number | null;
  /** Models whose cost is unknown (their tokens are counted, their cost is not). */
  unpricedModels: string[];
}

export interface Usage {
  sessionId: string;
  /** Lines of the log that could not be read (their tokens, if any, are missing from the sums). */
  unreadableLines: number;
  /**
   * Responses left out because an earlier session of the same fold run holds them too (the same
   * provider `responseId`: a fork's copied history); always 0 for one session on its own.
   */
  copiedResponses: number;
  /** Likewise for `model.error` events (the same provider, model, time, kind and message). */
  copiedErrors: number;
  models: ModelUsage[];
  totals: UsageTotals;
}

/** The model the redirect advisor's tokens are booked under (its events do not name a model). */
export const REDIRECT_MODEL = "(redirect advisor)";

/** A price key's glob (`claude-*`), matched without backtracking (`util/wildcard.ts`). */
const priceGlob = (glob: string) => wildcard(glob, { escapes: false, foldCase: false });

/**
 * The price for a model: exact id, then `provider/model`, then the same for the model a dated id is
 * a version of (`gpt-4o` priced, `gpt-4o-2024-08-06` answered: it was "cost unknown"), then the
 * first matching glob.
 */
export function priceFor(prices: Record<string, Price>, provider: string, model: string): Price | undefined {
  const exact = own(prices, model) ?? own(prices, `${provider}/${model}`);
  if (exact) return exact;
  const base = undatedOf(model);
  const undated = base === undefined ? undefined : (own(prices, base) ?? own(prices, `${provider}/${base}`));
  if (undated) return undated;
  for (const [pattern, price] of Object.entries(prices)) {
    if (!pattern.includes("*") && !pattern.includes("?")) continue;
    const glob = priceGlob(pattern);
    if (wildcardMatches(glob, model) || wildcardMatches(glob, `${provider}/${model}`)) return price;
  }
  return undefined;
}

/** Cost in USD of one usage row at `price`. */
export function costOf(u: Omit<ModelUsage, "costUsd" | "provider" | "model">, price: Price): number {
  const perM =
    u.inputTokens * price.input +
    u.outputTokens * price.output +
    u.cacheReadTokens * (price.cacheRead ?? price.input) +
    u.cacheWriteTokens * (price.cacheWrite ?? price.input);
  return perM / 1_000_000;
}

const zeroCounts = () => ({
  requests: 0,
  responses: 0,
  errors: 0,
  inputTokens: 0,
  outputTokens: 0,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
  reasoningTokens: 0,
});

/**
 * Start a usage fold; `prices` as in config.json. `counted` is shared by the folds of several
 * sessions summed together: a `model.response` that an earlier fold of *another* session counted —
 * the same provider `responseId`, model and token counts — is a copy (a fork of an imported
 * session carries its parent's history), and neither it nor its request is counted again. Within
 * one session nothing is dropped, and an id another producer reuses (short local ids) is not a
 * copy unless its tokens match too.
 */
export function createUsageFold(
  sessionId: string,
  prices: Record<string, Price> = {},
  counted?: Map<string, string>,
) {
  const rows = new Map<string, ModelUsage>();
  /**
   * Per row: the costs its responses recorded, how many did, and how many used tokens without one
   * (a response of no tokens needs no cost: eval's `cost` check takes it the same way).
   */
  const recorded = new Map<ModelUsage, { usd: number; costed: number; missing: number }>();
  let unreadableLines = 0;
  let copiedResponses = 0;
  let copiedErrors = 0;
  const row = (provider: string, model: string) => {
    const key = `${provider}\u0000${model}`;
    let r = rows.get(key);
    if (!r) rows.set(key, (r = { provider, model, ...zeroCounts(), costUsd: null, recordedCostUsd: null }));
    return r;
  };
  /**
   * Whether what `parts` identify was counted by another session's fold: a copy. Its
   * `model.request` (an importer writes one per response or error) was a copy too.
   */
  const copied = (r: ModelUsage, parts: unknown[]): boolean => {
    if (!counted) return false;
    const key = parts.join("\u0000");
    const first = counted.get(key);
    if (first !== undefined && first !== sessionId) {
      if (r.requests > 0) r.requests--;
      return true;
    }
    counted.set(key, sessionId);
    return false;
  };
  /**
   * A response or an error whose model has no request waiting answers one of the same model under
   * its dated id, or the undated one (`gpt-4o` asked, `gpt-4o-2024-08-06` answered), as the trace
   * pairs them: the request is counted on the row that answered (it showed as a `gpt-4o` row of
   * one request never answered, beside one of a response with no request).
   */
  const answer = (r: ModelUsage): void => {
    if (r.requests > r.responses + r.errors) return;
    for (const o of rows.values())
      if (
        o !== r &&
        o.provider === r.provider &&
        o.requests > o.responses + o.errors &&
        datedAlike(o.model, r.model)
      ) {
        o.requests--;
        r.requests++;
        return;
      }
  };
  return {
    push(e: RolloutEvent): void {
      if (e.type === "model.request") row(e.provider, e.model).requests++;
      else if (e.type === "model.error") {
        const r = row(e.provider, e.model);
        answer(r);
        // An API error copied with a fork's history: same model, millisecond, kind and message.
        if (copied(r, ["error", e.provider, e.model, e.timestamp, e.kind, e.error ?? ""])) copiedErrors++;
        else r.errors++;
      } else if (e.type === "model.response") {
        const r = row(e.provider, e.model);
        answer(r);
        if (
          e.responseId !== undefined &&
          copied(r, [
            e.provider,
            e.responseId,
            e.model,
            e.inputTokens ?? 0,
            e.outputTokens ?? 0,
            // Every count: two responses of a local model's short ids (`chatcmpl-7`) that differ in
            // their cache reads only are two responses, not a copy.
            e.cacheReadTokens ?? 0,
            e.cacheWriteTokens ?? 0,
            e.reasoningTokens ?? 0,
          ])
        ) {
          copiedResponses++;
          return;
        }
        r.responses++;
        r.inputTokens += e.inputTokens ?? 0;
        r.outputTokens += e.outputTokens ?? 0;
        r.cacheReadTokens += e.cacheReadTokens ?? 0;
        r.cacheWriteTokens += e.cacheWriteTokens ?? 0;
        r.reasoningTokens += e.reasoningTokens ?? 0;
        const used =
          (e.inputTokens ?? 0) + (e.outputTokens ?? 0) + (e.cacheReadTokens ?? 0) + (e.cacheWriteTokens ?? 0);
        const cost = recordedCost(e);
        if (cost !== undefined || used > 0) {
          const c = recorded.get(r) ?? { usd: 0, costed: 0, missing: 0 };
          if (cost === undefined) c.missing++;
          else {
            c.usd += cost;
            c.costed++;
          }
          recorded.set(r, c);
        }
      } else if (e.type === "redirect.triggered" && (e.inputTokens || e.outputTokens)) {
        const r = row("", REDIRECT_MODEL);
        r.requests++;
        r.responses++;
        r.inputTokens += e.inputTokens ?? 0;
        r.outputTokens += e.outputTokens ?? 0;
      }
    },
    issue(): void {
      unreadableLines++;
    },
    /** Tool outputs and arguments: usage never reads them (see `RolloutSink.unread`). */
    unread: UNREAD_BY_USAGE,
    finish(): Usage {
      // A row whose every request another row's answer took holds nothing.
      const held = [...rows.values()].filter(
        (r) => r.requests + r.responses + r.errors > 0 || recorded.has(r),
      );
      const models = held.map((r): ModelUsage => {
        const price = r.model === REDIRECT_MODEL ? undefined : priceFor(prices, r.provider, r.model);
        const c = recorded.get(r);
        const recordedCostUsd = c && c.costed > 0 && c.missing === 0 ? c.usd : null;
        if (price) return { ...r, costUsd: costOf(r, price), costFrom: "prices", recordedCostUsd };
        if (recordedCostUsd !== null)
          return { ...r, costUsd: recordedCostUsd, costFrom: "recorded", recordedCostUsd };
        return { ...r, recordedCostUsd };
      });
      return { sessionId, unreadableLines, copiedResponses, copiedErrors, models, totals: sumUsage(models) };
    },
  };
}

/** Totals over usage rows (also used to merge several sessions). */
export function sumUsage(models: ModelUsage[]): UsageTotals {
  const t: UsageTotals = { ...zeroCounts(), costUsd: null, unpricedModels: [] };
  for (const m of models) {
    t.requests += m.requests;
    t.responses += m.responses;
    t.errors += m.errors;
    t.inputTokens += m.inputTokens;
    t.outputTokens += m.outputTokens;
    t.cacheReadTokens += m.cacheReadTokens;
    t.cacheWriteTokens += m.cacheWriteTokens;
    t.reasoningTokens += m.reasoningTokens;
    if (m.costUsd === null) {
      if (m.responses > 0 && !t.unpricedModels.includes(m.model)) t.unpricedModels.push(m.model);
    } else t.costUsd = (t.costUsd ?? 0) + m.costUsd;
  }
  return t;
}

/** Fold a whole event sequence into Usage. */
export function usageOf(
  sessionId: string,
  events: Iterable<RolloutEvent>,
  prices?: Record<string, Price>,
): Usage {
  const fold = createUsageFold(sessionId, prices);
  for (const e of events) fold.push(e);
  return fold.finish();
}
