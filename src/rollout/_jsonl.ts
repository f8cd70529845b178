/**
 * JSONL reading for folds: the runs of `util/lines.ts` (blocks read into a kept buffer), each parsed
 * in one `JSON.parse` call where it can (`util/json-lines.ts`), and the values handed to a sink at
 * once. Runs are small (`RUN_BYTES`): the values of a run wait until it is handed out, and with
 * 1,024 parsed events alive at a time each young-generation collection had them to trace (a cold
 * fold of the 244 MB bench log took 2.1-2.7 s instead of ~1.8 s; 1 MiB runs were as slow). Blank lines
 * are skipped, a final line without its newline is torn (reported, not parsed, not consumed), a
 * bad line is reported with its number and the rest loads (a line with bytes that are not UTF-8 is
 * reported and still read, with U+FFFD in their place), and a line longer than
 * `MAX_LINE_BYTES` is reported and skipped rather than buffered without bound.
 */
import { MAX_EVENT_BYTES } from "../storage/_events.ts";
import type { ReadIssue } from "../storage/contract.ts";
import { type JsonLineSink, parseRun, RUN_BYTES } from "../util/json-lines.ts";
import type { FieldSkip } from "../util/json-skip.ts";
import { lineRuns } from "../util/lines.ts";
import { badUtf8Message } from "../util/utf8.ts";

/** Lines longer than this are reported and skipped rather than buffered without bound (the stores
 * take no longer event: `MAX_EVENT_BYTES`). */
export const MAX_LINE_BYTES = MAX_EVENT_BYTES;

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
  /** Parse every line on its own (see `util/json-lines.ts`): what a verifier wants. */
  exact?: boolean;
  /** Fields the reader never reads, left unparsed (see `util/json-skip.ts`). */
  skip?: FieldSkip;
  /** Read no further than this byte offset (an unfinished batch's start: `storage/batch-mark.ts`). */
  toOffset?: number;
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
  const lines: JsonLineSink = {
    value: (value, line, start) => sink.value(value, line, start),
    invalid(error, text, line) {
      if (!BLANK.test(text)) {
        const message = `not valid JSON: ${error.message}`;
        sink.issue({ file: path, line, message, torn: false });
      }
    },
    badUtf8: (at, line) =>
      sink.issue({ file: path, line, message: badUtf8Message(at), torn: false, badUtf8: true }),
  };
  const runBytes = Math.min(RUN_BYTES, slice);
  for (const item of lineRuns(path, { ...options, maxLineBytes: MAX_LINE_BYTES, runBytes })) {
    if (item.kind === "run") {
      parseRun(item, lines, options.exact, options.skip);
      endOffset = item.base + item.nls[item.count - 1]! + 1;
      nextLineNo = item.lineNo + item.count;
    } else {
      const line = item.line;
      if (line.torn) {
        if (!BLANK.test(line.text) || line.tooLong) {
          const message = "torn last line (no newline; a write was cut short): skipped";
          sink.issue({ file: path, line: line.lineNo, message, torn: true });
        }
        break;
      }
      endOffset = line.end;
      nextLineNo = line.lineNo + 1;
      const message = `line longer than ${MAX_LINE_BYTES} bytes: skipped`;
      sink.issue({ file: path, line: line.lineNo, message, torn: false });
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
