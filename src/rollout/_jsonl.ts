/**
 * JSONL reading for folds: the lines of `util/lines.ts` (blocks read into a kept buffer, a decode
 * per line), each parsed with `JSON.parse` and handed to a sink at once. On this kind of machine
 * that beat `Bun.JSONL.parseChunk` over stream chunks, which this module used before (1.1-2.0 s
 * against 0.75-0.95 s for split + parse of a 244 MB log that is not pure ASCII; see
 * `util/lines.ts`). Values go to the sink one by one, not gathered in batches: with 1,024 parsed
 * events alive per batch, each young-generation collection had them to trace, and a cold fold of
 * that log took 2.1-2.7 s instead of ~1.8 s. Blank lines are skipped, a final line without its
 * newline is torn (reported, not parsed, not consumed), a bad line is reported with its number and
 * the rest loads, and a line longer than `MAX_LINE_BYTES` is reported and skipped rather than
 * buffered without bound.
 */
import type { ReadIssue } from "../storage/contract.ts";
import { lines } from "../util/lines.ts";

/** Lines longer than this are reported and skipped rather than buffered without bound. */
export const MAX_LINE_BYTES = 32 * 1024 * 1024;

/** How often (in bytes read) an async reader lets the event loop run. */
const SLICE_BYTES = 1024 * 1024;

/** Where the values go, in line order. */
export interface JsonlSink {
  /** A parsed line: its value, its number and the byte offset where it starts. */
  value(value: unknown, line: number, offset: number): void;
  issue(issue: ReadIssue): void;
}

/** Byte offset just past the last complete line consumed, and the number the next line has. */
export interface JsonlPosition {
  endOffset: number;
  nextLineNo: number;
}

export interface JsonlOptions {
  fromOffset?: number;
  firstLineNo?: number;
  /** Let others run every this many bytes (default 1 MiB). */
  sliceBytes?: number;
  /** Each block of the file as read (see `util/lines.ts`). */
  onBlock?: (bytes: Buffer, offset: number) => void;
}

const BLANK = /^\s*$/;

/**
 * Feed the lines of `path` from `fromOffset` to `sink`. A generator that pauses every ~1 MiB,
 * yielding the offset reached, so that `readJsonl` can let others run; returns where it stopped.
 */
function* slices(path: string, options: JsonlOptions, sink: JsonlSink): Generator<number, JsonlPosition> {
  let endOffset = options.fromOffset ?? 0;
  let nextLineNo = options.firstLineNo ?? 1;
  const slice = options.sliceBytes ?? SLICE_BYTES;
  let pause = endOffset + slice;
  for (const line of lines(path, { ...options, maxLineBytes: MAX_LINE_BYTES })) {
    if (line.torn) {
      if (!BLANK.test(line.text) || line.tooLong) {
        const message = "torn last line (no newline; a write was cut short): skipped";
        sink.issue({ file: path, line: line.lineNo, message, torn: true });
      }
      break;
    }
    endOffset = line.end;
    nextLineNo = line.lineNo + 1;
    if (line.tooLong) {
      const message = `line longer than ${MAX_LINE_BYTES} bytes: skipped`;
      sink.issue({ file: path, line: line.lineNo, message, torn: false });
    } else {
      let value: unknown;
      let parsed = true;
      try {
        value = JSON.parse(line.text);
      } catch (error) {
        parsed = false;
        if (!BLANK.test(line.text)) {
          const message = `not valid JSON: ${(error as Error).message}`;
          sink.issue({ file: path, line: line.lineNo, message, torn: false });
        }
      }
      if (parsed) sink.value(value, line.lineNo, line.start);
    }
    if (endOffset >= pause) {
      pause = endOffset + slice;
      yield endOffset;
    }
  }
  return { endOffset, nextLineNo };
}

/**
 * Read `path` to its end into `sink`, letting the event loop run every ~1 MiB (`onSlice` then; a
 * promise it returns is waited for: a consumer slower than the reader holds it back).
 */
export async function readJsonl(
  path: string,
  options: JsonlOptions,
  sink: JsonlSink,
  onSlice?: (offset: number) => Promise<void> | undefined,
): Promise<JsonlPosition> {
  const feed = slices(path, options, sink);
  for (;;) {
    const step = feed.next();
    if (step.done) return step.value;
    await (onSlice?.(step.value) ?? null);
  }
}
