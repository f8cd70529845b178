/**
 * Durations as people write them on a command line: `7d`, `12h`, `30m`, `45s`, `200ms`, or a bare
 * number of milliseconds. Used for `serve --ttl`; anything else is a usage error, never a guess.
 */
import { usageError } from "../errors.ts";

const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** The longest duration taken: ten years (a date past it is not a date `Date` can show). */
export const MAX_DURATION_MS = 3650 * UNIT_MS.d;

/** `text` as milliseconds (at least 1, at most `MAX_DURATION_MS`); `flag` names it in the error. */
export function parseDuration(text: string, flag = "--ttl"): number {
  const m = /^(\d+)(ms|s|m|h|d)?$/.exec(text.trim());
  const ms = m ? Number(m[1]) * UNIT_MS[(m[2] ?? "ms") as keyof typeof UNIT_MS] : Number.NaN;
  if (!Number.isSafeInteger(ms) || ms < 1)
    throw usageError(`${flag} must be a duration such as 7d, 12h, 30m, 45s or milliseconds (got "${text}")`);
  if (ms > MAX_DURATION_MS) throw usageError(`${flag} must be at most 3650d (got "${text}")`);
  return ms;
}
