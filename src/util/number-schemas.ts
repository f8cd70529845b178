/**
 * The numbers freecode stores. JSON has no Infinity or NaN: `JSON.parse` reads `1e999` as Infinity,
 * `JSON.stringify` writes it back as `null`, and the record no longer reads back (one such number
 * made a whole JSON store unreadable). And a time is milliseconds a `Date` can hold (±8.64e15):
 * past that, every `toISOString` of a listing, trace or search throws.
 */
import * as v from "valibot";

/** The largest time, in ms from the epoch, a `Date` holds. */
export const MAX_TIME_MS = 8.64e15;

const TIME_MESSAGE = `a time must be milliseconds a date can hold (at most ±${MAX_TIME_MS})`;

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
