/**
 * The numbers a new event must hold: counts (tokens, characters, messages, files) whole and ≥ 0,
 * times taken ≥ 0. A -1 written for "unknown" made every `usage` total over the sessions wrong, and
 * nothing said so. Checked where events are written (`rollout append`, serve, the recorder), not
 * where they are read: the catalogue reads any finite number, so a log an older version wrote, or a
 * writer gave the store directly, still reads.
 */

/** Fields that count something, in any event that has them. */
const COUNTS = [
  "inputTokens",
  "outputTokens",
  "cacheReadTokens",
  "cacheWriteTokens",
  "reasoningTokens",
  "textChars",
  "thinkingChars",
  "promptChars",
  "messageCount",
  "toolCount",
  "directionCount",
  "directionChars",
  "filesChanged",
  "beforeTokens",
  "afterTokens",
] as const;

/** Fields that hold a time taken, in milliseconds. */
const TIMES = ["duration_ms", "ttft_ms", "latency_ms", "durationMs"] as const;

/** The first count or time of `e` a new event may not hold, with what is wrong; undefined when none. */
export function eventNumberProblem(
  e: Record<string, unknown>,
): { field: string; message: string } | undefined {
  for (const field of COUNTS) {
    const n = e[field];
    if (n !== undefined && !(Number.isSafeInteger(n) && (n as number) >= 0))
      return {
        field,
        message: `a count must be a whole number ≥ 0 (got ${String(n)}): leave it out when it is not known`,
      };
  }
  for (const field of TIMES) {
    const n = e[field];
    if (typeof n === "number" && !(n >= 0))
      return {
        field,
        message: `a time taken must be ≥ 0 ms (got ${String(n)}): leave it out when it is not known`,
      };
  }
  return undefined;
}
