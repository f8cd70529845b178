/**
 * The numbers freecode stores. JSON has no Infinity or NaN: `JSON.parse` reads `1e999` as Infinity,
 * `JSON.stringify` writes it back as `null`, and the record no longer reads back (one such number
 * made a whole JSON store unreadable). And a time is milliseconds a `Date` can hold (±8.64e15):
 * past that, every `toISOString` of a listing, trace or search throws.
 */
import * as v from "valibot";

/** The largest time, in ms from the epoch, a `Date` holds. */
export const MAX_TIME_MS = 8.64e15;

/** What an event's `timestamp` must be, as every writer says it. */
export const TIMESTAMP_RULE = `timestamp must be milliseconds a date can hold (at most ±${MAX_TIME_MS})`;

const TIME_MESSAGE = `a time must be milliseconds a date can hold (at most ±${MAX_TIME_MS})`;

/**
 * A count freecode adds up (tokens, messages, turns): a whole number ≥ 0 within the safe range.
 * One rule where counts come in: messages given by callers, importers, `session import`.
 */
export const isCount = (x: unknown): x is number => Number.isSafeInteger(x) && (x as number) >= 0;

/** A finite number. */
export const finiteNumber = () => v.pipe(v.number(), v.finite());

/** A time in ms from the epoch that a `Date` holds. */
export const timeMs = () =>
  v.pipe(
    v.number(),
    v.finite(),
    v.minValue(-MAX_TIME_MS, TIME_MESSAGE),
    v.maxValue(MAX_TIME_MS, TIME_MESSAGE),
  );

/** Whether `x` passes `timeMs()` (NaN and ±Infinity do not). */
export const isTimeMs = (x: unknown): x is number =>
  typeof x === "number" && x >= -MAX_TIME_MS && x <= MAX_TIME_MS;

/**
 * The dotted path of the first NaN or ±Infinity inside `value` (`parts.0.tool.args.n`), or
 * undefined: JSON has no such numbers, and `JSON.stringify` would write them as null. For input
 * from outside (a message read from stdin or a request), not for a hot path.
 */
export function nonFinitePath(value: unknown, path: string[] = [], depth = 0): string | undefined {
  if (typeof value === "number") return Number.isFinite(value) ? undefined : path.join(".") || "(value)";
  if (typeof value !== "object" || value === null || depth > 256) return undefined;
  const entries = Array.isArray(value) ? value.map((v, i) => [String(i), v] as const) : Object.entries(value);
  for (const [k, v] of entries) {
    const found = nonFinitePath(v, [...path, k], depth + 1);
    if (found !== undefined) return found;
  }
  return undefined;
}
