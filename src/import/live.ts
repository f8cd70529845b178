/**
 * What a final read (an import without `--watch`) leaves open in a transcript that may still be
 * written. An agent writes a response a piece at a time (Claude Code a line per content block,
 * Codex a line per item, Gemini CLI the message again once its tokens come), and a tool call waits
 * for its result or for the user's permission; an import can run in between. Closed there, the
 * response was written without what came after: Claude Code's next block (a tool call) was taken
 * for a replay and lost, its result left without a call; Codex's next item became a second
 * response. A call written as a call and refused later had a call and a denial.
 *
 * So while a transcript may still be written — its mtime and its last line's time are both less
 * than `STREAM_WAIT_MS` from now (a copy of an old transcript, just made, is not being written, nor
 * is a live-looking file nobody has touched for that long) — an open response stays open unless it
 * says it is complete (Claude Code's `stop_reason`, on the last line of a response since 2.1.8x),
 * unanswered calls stay unwritten, the import state says so, and each import reads the file again,
 * changed or not, until they close or the file is that old. A response cut off for good (the agent
 * crashed) is written then, with the usage seen.
 */

/** How long a transcript may wait for its next piece (agents write them seconds apart). */
export const STREAM_WAIT_MS = 5 * 60_000;

/**
 * Whether something written at `at` (ms) may still be written to `now`: less than `STREAM_WAIT_MS`
 * ago, or as far ahead (a clock ahead, a mangled date, must not keep it open for ever).
 */
export const mayStillStream = (at: number, now = Date.now()): boolean => within(at, STREAM_WAIT_MS, now);

/**
 * Whether `at` is less than `ms` from `now`, behind or ahead: a clock ahead or a mangled date must
 * not keep something waiting for ever (not a time at all: no).
 */
export const within = (at: number, ms: number, now = Date.now()): boolean =>
  Number.isFinite(at) && Math.abs(now - at) < ms;

/**
 * Whether a transcript may still be written: last written (`lastWrite`, its mtime) and last line
 * (`lastLine`, its time) both recent. Unknown either way: no.
 */
export const stillWritten = (lastWrite: number | undefined, lastLine: number | undefined): boolean =>
  lastWrite !== undefined && lastLine !== undefined && mayStillStream(lastWrite) && mayStillStream(lastLine);

/**
 * How long a transcript is left alone before a watch pass closes a response that said it is
 * complete (Claude Code's `stop_reason`): 2.1.1xx puts it on every line of a response, written
 * together, so a pass right after a write cannot tell the last line; a quiet file can.
 */
export const QUIET_MS = 3_000;
