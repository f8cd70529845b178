/**
 * JSONL reading for folds: the lines of `util/lines.ts` (blocks read into a kept buffer, a decode
 * per line), each parsed with `JSON.parse`, handed out in batches so a fold's sink is driven
 * synchronously per batch. On this kind of machine that beat `Bun.JSONL.parseChunk` over stream
 * chunks, which this module used before (1.1-2.0 s against 0.75-0.95 s for split + parse of a
 * 244 MB log that is not pure ASCII; see `util/lines.ts`). Memory holds one block plus one batch.
 * Blank lines are skipped, a final line without its newline is torn (reported, not parsed, not
 * consumed), a bad line is reported with its number and the rest loads, and a line longer than
 * `MAX_LINE_BYTES` is reported and skipped rather than buffered without bound.
 */
import type { ReadIssue } from "../storage/contract.ts";
import { lines } from "../util/lines.ts";

/** Lines longer than this are reported and skipped rather than buffered without bound. */
export const MAX_LINE_BYTES = 32 * 1024 * 1024;

/** Values per batch (a batch also ends at the end of the file). */
const BATCH_VALUES = 1024;

export interface JsonlBatch {
  values: unknown[];
  /** The 1-based line number of `values[i]`. */
  lineOf(i: number): number;
  issues: ReadIssue[];
  /** Byte offset just past the last complete line consumed, and the number the next line has. */
  endOffset: number;
  nextLineNo: number;
}

const BLANK = /^\s*$/;

/** Read `path` from byte `fromOffset` in batches of parsed values. */
export async function* readJsonlBatches(
  path: string,
  options: { fromOffset?: number; firstLineNo?: number } = {},
): AsyncGenerator<JsonlBatch> {
  let values: unknown[] = [];
  let numbers: number[] = [];
  let issues: ReadIssue[] = [];
  let endOffset = options.fromOffset ?? 0;
  let nextLineNo = options.firstLineNo ?? 1;
  const take = (): JsonlBatch => {
    const lineNos = numbers;
    const batch = { values, lineOf: (i: number) => lineNos[i]!, issues, endOffset, nextLineNo };
    values = [];
    numbers = [];
    issues = [];
    return batch;
  };
  for (const line of lines(path, { ...options, maxLineBytes: MAX_LINE_BYTES })) {
    if (line.torn) {
      // Its own batch, after the values before it (a sink sees issues and values in line order).
      if (values.length > 0 || issues.length > 0) yield take();
      if (!BLANK.test(line.text) || line.tooLong) {
        const message = "torn last line (no newline; a write was cut short): skipped";
        issues.push({ file: path, line: line.lineNo, message, torn: true });
      }
      break;
    }
    endOffset = line.end;
    nextLineNo = line.lineNo + 1;
    if (line.tooLong) {
      const message = `line longer than ${MAX_LINE_BYTES} bytes: skipped`;
      issues.push({ file: path, line: line.lineNo, message, torn: false });
      continue;
    }
    try {
      values.push(JSON.parse(line.text));
      numbers.push(line.lineNo);
    } catch (error) {
      if (!BLANK.test(line.text)) {
        const message = `not valid JSON: ${(error as Error).message}`;
        issues.push({ file: path, line: line.lineNo, message, torn: false });
      }
    }
    if (values.length >= BATCH_VALUES) yield take();
  }
  if (values.length > 0 || issues.length > 0) yield take();
}
