/**
 * The importer's line reader: the lines of a JSONL file from a byte offset, read synchronously in
 * blocks into one buffer, found with `Buffer.indexOf` (a memchr) and decoded one line at a time.
 * Same lines as `util/lines.ts`'s `readLines` (empty lines skipped, a last line without a newline
 * yielded as torn, a byte-order mark stripped as `TextDecoder` does), for less: that reader's web
 * stream, fresh chunk buffers and `Uint8Array.indexOf` cost about as much as the `JSON.parse` they
 * feed. 13.5 MiB split + parse, same process: 35 vs 30 ms on a quiet machine, 62 vs 25 ms on a busy
 * one (its chunk buffers fault fresh pages, about 1,100-1,800 per read vs 20-180 here). Lines are
 * decoded one by one, not a block at a time: one non-Latin-1 character makes a block a two-byte
 * string, and every line cut from it then parses slower (as `Bun.JSONL.parseChunk` did, 2.4× on
 * the corpus).
 */
import { closeSync, openSync, readSync } from "node:fs";
import type { Line } from "../util/lines.ts";

const BLOCK = 1024 * 1024;
const NEWLINE = 10;
/** The largest buffer kept for the next read (one with a very long line gets memory of its own). */
const KEEP_BYTES = 8 * 1024 * 1024;

// The buffer is kept between reads: fresh memory costs a page fault per 4 KiB on first touch, which
// on a VM costs about as much as reading the bytes (~256 faults, several ms, for each 1 MiB buffer).
let kept: Buffer | undefined;

/** Whether bytes `[i, i+3)` are a UTF-8 byte-order mark. */
const isBom = (b: Buffer, i: number) => b[i] === 0xef && b[i + 1] === 0xbb && b[i + 2] === 0xbf;

/** Decode bytes `[start, end)` as one line's text. */
function decode(buf: Buffer, start: number, end: number): string {
  return buf.toString("utf8", end - start >= 3 && isBom(buf, start) ? start + 3 : start, end);
}

/**
 * Yield the lines of `path` from byte `fromOffset`, numbered from `firstLineNo`. The file is read
 * to its end as it is when reached; the descriptor is closed when the loop ends or breaks.
 */
export function* jsonlLines(path: string, fromOffset = 0, firstLineNo = 1): Generator<Line> {
  const fd = openSync(path, "r");
  let buf = kept ?? Buffer.allocUnsafe(BLOCK);
  kept = undefined; // taken: a read running at the same time gets a buffer of its own
  let filled = 0; // bytes of `buf` holding an unfinished line carried over from the last block
  let base = fromOffset; // file offset of buf[0]
  let lineNo = firstLineNo - 1;
  try {
    for (;;) {
      if (filled === buf.length) {
        // One line longer than the buffer: make room for the rest of it.
        const bigger = Buffer.allocUnsafe(buf.length * 2);
        buf.copy(bigger, 0, 0, filled);
        buf = bigger;
      }
      const got = readSync(fd, buf, filled, buf.length - filled, base + filled);
      if (got === 0) break;
      const end = filled + got;
      const data = buf.subarray(0, end);
      let start = 0;
      for (;;) {
        const nl = data.indexOf(NEWLINE, start);
        if (nl === -1) break;
        lineNo++;
        const blank = nl === start || (nl === start + 1 && buf[start] === 13);
        if (!blank)
          yield {
            text: decode(buf, start, nl),
            lineNo,
            start: base + start,
            end: base + nl + 1,
            torn: false,
          };
        start = nl + 1;
      }
      buf.copyWithin(0, start, end);
      filled = end - start;
      base += start;
    }
    if (filled > 0) {
      yield { text: decode(buf, 0, filled), lineNo: lineNo + 1, start: base, end: base + filled, torn: true };
    }
  } finally {
    closeSync(fd);
    if (buf.length <= KEEP_BYTES) kept = buf;
  }
}
