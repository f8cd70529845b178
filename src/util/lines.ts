/**
 * The project's JSONL line reader. A file is read synchronously in 1 MiB blocks into one buffer
 * kept between reads, and newlines are found with `Buffer.indexOf` (a memchr). `lineRuns` hands
 * out the complete lines of a block as runs (the buffer and its newline positions, no text made);
 * `lines` decodes each line on its own. Memory holds one block plus one line. A last line with no
 * trailing newline is a torn write (a crash mid-append, or a writer still at work): it is yielded
 * with `torn: true` so callers can skip and report it rather than fail. Blank and `\r`-only lines
 * are skipped by `lines` (a run keeps them: its reader decides); a byte-order mark at the start of
 * a line is dropped (as `TextDecoder` does).
 *
 * Measured on this kind of machine, split + `JSON.parse` of a 244 MB log: 0.75-0.95 s here, against
 * 1.2-2.7 s for `Bun.file().stream()` + `Uint8Array.indexOf` + `TextDecoder` (what
 * bun-engineering.md §8 found fastest on its machine) and 1.1-2.0 s for `Bun.JSONL.parseChunk` on
 * the same stream (this log is not pure ASCII). The stream's fresh 512 KiB chunks fault new pages
 * on every read, which costs on a VM about as much as reading the bytes. Lines are decoded one by
 * one, not a block at a time: one non-Latin-1 character makes a block a two-byte string, and every
 * line cut from it then parses slower. (`util/json-lines.ts` parses a whole run in one call, which
 * is faster again: see there.)
 */
import { closeSync, readSync } from "node:fs";
import { onPath } from "./fs-path.ts";
import { openToRead } from "./store-file-open.ts";
import { badUtf8InLine } from "./utf8.ts";

/** One line of a file, with its 1-based number and the byte offset just past it. */
export interface Line {
  text: string;
  lineNo: number;
  /** Byte offset of the start of the line. */
  start: number;
  /** Byte offset just past the line's newline (where the next line starts). */
  end: number;
  /** True for a final line without a newline. */
  torn: boolean;
  /** Longer than `maxLineBytes`: skipped unread (`text` is empty). */
  tooLong?: boolean;
  /**
   * The line holds bytes that are not UTF-8: the offset in it of the first (`text` has U+FFFD in
   * their place). Only `lines` sets it, and not on a torn line (a write cut short may end inside a
   * character).
   */
  badUtf8?: number;
}

export interface LineOptions {
  /** Start at this byte offset (a line start), numbering from `firstLineNo` (default 1). */
  fromOffset?: number;
  firstLineNo?: number;
  /** Lines longer than this are yielded as `tooLong`, without their text, not buffered whole. */
  maxLineBytes?: number;
  /** Read no further than this byte offset: the file is taken to end there. */
  toOffset?: number;
  /**
   * Each block as it is read, before its lines are yielded: the file's bytes from `offset` (the
   * buffer is reused afterwards: copy what is kept).
   */
  onBlock?: (bytes: Buffer, offset: number) => void;
}

/**
 * Complete lines, in the reader's buffer: line `k` (0-based) is the bytes from `start` (k = 0) or
 * `nls[k - 1] + 1` up to its newline at `nls[k]`. Valid only until the reader's next step (the
 * buffer and `nls` are reused). The byte before `start` is the reader's to lend: a parser may
 * overwrite it (and the newlines) while it works, if it puts them back before the next step.
 */
export interface LineRun {
  kind: "run";
  buf: Buffer;
  /** File offset of `buf[0]`. */
  base: number;
  start: number;
  nls: Int32Array;
  count: number;
  /** The number of the run's first line. */
  lineNo: number;
}

/** What `lineRuns` yields: a run of complete lines, or one line the run cannot hold. */
export type LineItem = LineRun | { kind: "line"; line: Line };

export interface RunOptions extends LineOptions {
  /** A run ends at the first line that takes it past this many bytes (default: the whole block). */
  runBytes?: number;
}

const BLOCK = 1024 * 1024;
const NEWLINE = 10;
/** Bytes before the file's bytes in the buffer, so that every run has a byte before it to lend. */
const PAD = 1;
/** The most lines one run holds. */
const RUN_LINES = 8192;
/** The largest buffer kept for the next read (one with a very long line gets memory of its own). */
const KEEP_BYTES = 8 * 1024 * 1024;

// The buffer is kept between reads: fresh memory costs a page fault per 4 KiB on first touch, which
// on a VM costs about as much as reading the bytes (~256 faults, several ms, for each 1 MiB buffer).
let kept: { buf: Buffer; nls: Int32Array } | undefined;

/** Whether bytes `[i, i+3)` are a UTF-8 byte-order mark. */
const isBom = (b: Buffer, i: number) => b[i] === 0xef && b[i + 1] === 0xbb && b[i + 2] === 0xbf;

/** Decode bytes `[start, end)` as one line's text (a leading byte-order mark dropped). */
export function decodeLine(buf: Buffer, start: number, end: number): string {
  return buf.toString("utf8", end - start >= 3 && isBom(buf, start) ? start + 3 : start, end);
}

/** Whether bytes `[start, nl)` are a blank line (empty, or a lone `\r`). */
export const isBlankLine = (buf: Buffer, start: number, nl: number): boolean =>
  nl === start || (nl === start + 1 && buf[start] === 13);

/**
 * Yield the complete lines of `path` from byte `fromOffset`, numbered from `firstLineNo`, as runs;
 * a line past `maxLineBytes` and a torn last line come as single lines. The file is read to its end
 * as it is when reached; the descriptor is closed when the loop ends or breaks.
 */
export function* lineRuns(path: string, options: RunOptions = {}): Generator<LineItem> {
  const fromOffset = options.fromOffset ?? 0;
  const maxLine = options.maxLineBytes ?? Number.POSITIVE_INFINITY;
  const runBytes = options.runBytes ?? BLOCK;
  const toOffset = options.toOffset ?? Number.POSITIVE_INFINITY;
  const fd = openToRead(path);
  const mine = kept ?? { buf: Buffer.allocUnsafe(PAD + BLOCK), nls: new Int32Array(RUN_LINES) };
  kept = undefined; // taken: a read running at the same time gets a buffer of its own
  let buf = mine.buf;
  const nls = mine.nls;
  let filled = PAD; // buf[PAD, filled) holds an unfinished line carried over from the last block
  let base = fromOffset - PAD; // file offset of buf[0]
  let lineNo = (options.firstLineNo ?? 1) - 1;
  let skipFrom = -1; // while skipping a line longer than maxLine: the file offset it starts at
  try {
    for (;;) {
      if (filled === buf.length) {
        if (filled - PAD >= maxLine) {
          // Too long to keep: drop what was read of it and look for its end.
          skipFrom = base + PAD;
          base += filled - PAD;
          filled = PAD;
        } else {
          // One line longer than the buffer: make room for the rest of it.
          const bigger = Buffer.allocUnsafe(PAD + (buf.length - PAD) * 2);
          buf.copy(bigger, 0, 0, filled);
          buf = bigger;
        }
      }
      const want = Math.min(buf.length - filled, toOffset - (base + filled));
      const got = want > 0 ? onPath(path, () => readSync(fd, buf, filled, want, base + filled)) : 0;
      if (got === 0) break;
      const end = filled + got;
      const data = buf.subarray(0, end);
      options.onBlock?.(buf.subarray(PAD, end), base + PAD);
      let start = PAD;
      if (skipFrom >= 0) {
        const nl = data.indexOf(NEWLINE, PAD);
        if (nl === -1) {
          base += end - PAD;
          continue;
        }
        lineNo++;
        const line = { text: "", lineNo, start: skipFrom, end: base + nl + 1, torn: false, tooLong: true };
        yield { kind: "line", line };
        skipFrom = -1;
        start = nl + 1;
      }
      for (;;) {
        const limit = start + runBytes;
        let count = 0;
        let next = start;
        for (;;) {
          const nl = data.indexOf(NEWLINE, next);
          if (nl === -1) break;
          nls[count++] = nl;
          next = nl + 1;
          if (next >= limit || count === RUN_LINES) break;
        }
        if (count === 0) break;
        yield { kind: "run", buf, base, start, nls, count, lineNo: lineNo + 1 };
        lineNo += count;
        start = next;
      }
      buf.copyWithin(PAD, start, end);
      filled = PAD + end - start;
      base += start - PAD;
    }
    if (skipFrom >= 0) {
      const line = {
        text: "",
        lineNo: lineNo + 1,
        start: skipFrom,
        end: base + PAD,
        torn: true,
        tooLong: true,
      };
      yield { kind: "line", line };
    } else if (filled > PAD) {
      const line = {
        text: decodeLine(buf, PAD, filled),
        lineNo: lineNo + 1,
        start: base + PAD,
        end: base + filled,
        torn: true,
      };
      yield { kind: "line", line };
    }
  } finally {
    closeSync(fd);
    if (buf.length <= PAD + KEEP_BYTES) kept = { buf, nls };
  }
}

/**
 * Yield the lines of `path` from byte `fromOffset`, numbered from `firstLineNo`, each decoded;
 * blank lines skipped; a line with bytes that are not UTF-8 says where (`badUtf8`). The descriptor is closed when the loop ends or breaks.
 */
export function* lines(path: string, options: LineOptions = {}): Generator<Line> {
  for (const item of lineRuns(path, options)) {
    if (item.kind === "line") {
      yield item.line;
      continue;
    }
    const { buf, base, nls, count } = item;
    let s = item.start;
    for (let k = 0; k < count; k++) {
      const nl = nls[k]!;
      if (!isBlankLine(buf, s, nl)) {
        const text = decodeLine(buf, s, nl);
        const line: Line = {
          text,
          lineNo: item.lineNo + k,
          start: base + s,
          end: base + nl + 1,
          torn: false,
        };
        const bad = badUtf8InLine(text, buf, s, nl);
        if (bad !== -1) line.badUtf8 = bad;
        yield line;
      }
      s = nl + 1;
    }
  }
}

/** The same lines as `lines`, for `for await` callers. */
export async function* readLines(path: string, options: LineOptions = {}): AsyncGenerator<Line> {
  yield* lines(path, options);
}

/** Split an in-memory buffer into lines the same way (for small files and stdin). */
export function splitLines(text: string): Line[] {
  const out: Line[] = [];
  let start = 0;
  let lineNo = 0;
  while (start < text.length) {
    const nl = text.indexOf("\n", start);
    const end = nl === -1 ? text.length : nl;
    lineNo++;
    const raw = text.slice(start, end).replace(/\r$/, "");
    if (raw.length > 0)
      out.push({ text: raw, lineNo, start, end: nl === -1 ? end : end + 1, torn: nl === -1 });
    start = end + 1;
  }
  return out;
}
