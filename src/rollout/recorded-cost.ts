/**
 * What a `model.response` says it cost, where that says something. A recorded 0 for a response that
 * used tokens is unknown, not free: OpenCode writes 0 for a model its catalogue has no price for,
 * and so may any writer that does not know. `usage` showed such a model at `$0.0000 (recorded)`.
 */

/** The tokens a response counts, and the cost it recorded. */
export interface RecordedCostFields {
  costUsd?: number;
  inputTokens?: number;
  outputTokens?: number;
  cacheReadTokens?: number;
  cacheWriteTokens?: number;
}

/** `e.costUsd`, unless it is 0 for a response that used tokens (then undefined: unknown). */
export function recordedCost(e: RecordedCostFields): number | undefined {
  if (e.costUsd !== 0) return e.costUsd;
  const used =
    (e.inputTokens ?? 0) + (e.outputTokens ?? 0) + (e.cacheReadTokens ?? 0) + (e.cacheWriteTokens ?? 0);
  return used > 0 ? undefined : 0;
}
