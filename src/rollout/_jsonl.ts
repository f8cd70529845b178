/**
 * Fast JSONL reading for folds. Streams the file's bytes (`Bun.file().stream()`, 512 KiB chunks) and
 * parses each chunk's complete lines in one `Bun.JSONL.parseChunk` call, which beats splitting lines
 * and calling `JSON.parse` on each (measured in bench/fold.ts). Memory holds one chunk plus one
 * partial line. Same contract as `util/lines.ts`: blank lines are skipped, a final line without its
 * newline is torn (reported, not parsed), a bad line is reported with its number and the rest loads.
 * Line numbers of values are computed only when asked (only errors need them).
 */
import type { ReadIssue } from "../storage/contract.ts";

/** Lines longer than this are reported and skipped rather than buffered without bound. */
export const MAX_LINE_BYTES = 32 * 1024 * 1024;

export interface JsonlBatch {
  values: unknown[];
  /** The 1-based line number of `values[i]`. */
  lineOf(i: number): number;
  issues: ReadIssue[];
  /** Byte offset just past the last complete line consumed, and the number the next line has. */
  endOffset: number;
  nextLineNo: number;
}

const NL = 10;
const decoder = new TextDecoder();
const isSpace = (b: number | undefined) => b === 32 || b === 9 || b === 13 || b === NL;

/** Parse the complete lines in `buf[start, end)` (end just past a newline) starting at line `firstLine`. */
function parseRegion(buf: Uint8Array, start: number, end: number, firstLine: number, file: string) {
  const values: unknown[] = [];
  const issues: ReadIssue[] = [];
  const bad = new Set<number>(); // start offsets of lines that failed
  const lineAt = (offset: number) => {
    let line = firstLine;
    for (let p = buf.indexOf(NL, start); p !== -1 && p < offset; p = buf.indexOf(NL, p + 1)) line++;
    return line;
  };
  let pos = start;
  while (pos < end) {
    const r = Bun.JSONL.parseChunk(buf, pos, end);
    const got = r.values as unknown[];
    if (!r.error) {
      for (const v of got) values.push(v);
      break;
    }
    // The failing content starts at the first non-space byte after the last good value.
    let q = r.read;
    while (q < end && isSpace(buf[q])) q++;
    const lineStart = buf.lastIndexOf(NL, q - 1) + 1;
    // A value parsed from the start of the bad line (`{"a":1} garbage`) belongs to that bad line.
    const keep = lineStart < r.read && got.length > 0 ? got.length - 1 : got.length;
    for (let i = 0; i < keep; i++) values.push(got[i]);
    const lineEnd = buf.indexOf(NL, q);
    const stop = lineEnd === -1 || lineEnd >= end ? end : lineEnd + 1;
    bad.add(lineStart);
    issues.push({
      file,
      line: lineAt(lineStart),
      message: jsonError(buf.subarray(lineStart, stop)),
      torn: false,
    });
    pos = stop;
  }
  let lines: number[] | undefined;
  const lineOf = (i: number) => {
    lines ??= valueLines(buf, start, end, firstLine, bad);
    return lines[i] ?? firstLine;
  };
  return { values, issues, lineOf };
}

/** Line numbers of the non-blank, non-bad lines of a region, in order (one per parsed value). */
function valueLines(buf: Uint8Array, start: number, end: number, firstLine: number, bad: Set<number>) {
  const out: number[] = [];
  let line = firstLine;
  for (let s = start; s < end; line++) {
    const nl = buf.indexOf(NL, s);
    const e = nl === -1 || nl >= end ? end : nl;
    let blank = true;
    for (let k = s; k < e; k++) if (!isSpace(buf[k])) blank = false;
    if (!blank && !bad.has(s)) out.push(line);
    s = e + 1;
  }
  return out;
}

function jsonError(bytes: Uint8Array): string {
  try {
    JSON.parse(decoder.decode(bytes));
    return "not valid JSON Lines (several values on one line?)";
  } catch (error) {
    return `not valid JSON: ${(error as Error).message}`;
  }
}

function countLines(buf: Uint8Array, start: number, end: number): number {
  let n = 0;
  for (let p = buf.indexOf(NL, start); p !== -1 && p < end; p = buf.indexOf(NL, p + 1)) n++;
  return n;
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}

/** Read `path` from byte `fromOffset` in batches of parsed values. */
export async function* readJsonlBatches(
  path: string,
  options: { fromOffset?: number; firstLineNo?: number } = {},
): AsyncGenerator<JsonlBatch> {
  const from = options.fromOffset ?? 0;
  const file = Bun.file(path);
  let line = options.firstLineNo ?? 1;
  let base = from; // file offset of the current chunk's first byte
  let consumed = from; // file offset just past the last complete line
  let carry: Uint8Array | null = null;
  let skippingLong = false;
  const batch = (buf: Uint8Array, start: number, end: number, endOffset: number): JsonlBatch => {
    const r = parseRegion(buf, start, end, line, path);
    line += countLines(buf, start, end);
    consumed = endOffset;
    return { ...r, endOffset, nextLineNo: line };
  };
  for await (const chunk of (from > 0 ? file.slice(from) : file).stream()) {
    let s = 0;
    if (carry || skippingLong) {
      const nl = chunk.indexOf(NL);
      if (nl === -1) {
        if (carry) carry = concat(carry, chunk);
        if (carry && carry.length > MAX_LINE_BYTES) [carry, skippingLong] = [null, true];
        base += chunk.length;
        continue;
      }
      if (carry) {
        const head = concat(carry, chunk.subarray(0, nl + 1));
        yield batch(head, 0, head.length, base + nl + 1);
      } else {
        const message = `line longer than ${MAX_LINE_BYTES} bytes: skipped`;
        const issues = [{ file: path, line, message, torn: false }];
        consumed = base + nl + 1;
        line++;
        yield { values: [], lineOf: () => line - 1, issues, endOffset: consumed, nextLineNo: line };
      }
      carry = null;
      skippingLong = false;
      s = nl + 1;
    }
    const last = chunk.lastIndexOf(NL);
    if (last >= s) {
      yield batch(chunk, s, last + 1, base + last + 1);
      s = last + 1;
    }
    if (s < chunk.length) carry = chunk.slice(s);
    base += chunk.length;
  }
  if (carry?.some((b) => !isSpace(b))) {
    const message = "torn last line (no newline; a write was cut short): skipped";
    const issues = [{ file: path, line, message, torn: true }];
    yield { values: [], lineOf: () => line, issues, endOffset: consumed, nextLineNo: line };
  }
}
