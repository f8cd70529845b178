/**
 * What a final read (an import without `--watch`) leaves open in a live transcript. An agent writes
 * a response a piece at a time (Claude Code a line per content block, Codex a line per item, Gemini
 * CLI the message again once its tokens come), and an import can run between two pieces. Closed
 * there, the response was written without what came after: Claude Code's next block (a tool call)
 * was then taken for a replay of a closed response and lost, its result left without a call;
 * Codex's became a second response. So a response whose last piece is younger than `STREAM_WAIT_MS`
 * stays open, the import state says so, and the next import reads the file again even if it did
 * not change: it closes the response once it is complete or old enough. A response cut off for good
 * (the agent crashed) is written that much later.
 */

/** How long a response's last piece may wait for the next (agents write them seconds apart). */
export const STREAM_WAIT_MS = 5 * 60_000;

/** Whether a response whose last piece was written at `at` (ms) may still be streaming `now`. */
export const mayStillStream = (at: number, now = Date.now()): boolean =>
  Number.isFinite(at) && now - at < STREAM_WAIT_MS;
