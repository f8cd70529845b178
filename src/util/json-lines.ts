/**
 * Parsing a run of JSONL lines (`util/lines.ts`) with one `JSON.parse` call instead of one per line.
 * The run's bytes are made into one JSON array in place: the byte before the run becomes `[`, each
 * newline a `,` and the last one `]`; the run is decoded once and parsed once, and the bytes are put
 * back. Per line this saves a decode call, a string and a parse call: on the fold bench's 1M-event
 * log (~240 B a line) split + parse took 0.51 s this way against 0.76 s line by line (1 MiB runs),
 * and the trace fold ~1.2 s against ~1.55 s (small runs: see `RUN_BYTES`; 1 MiB runs made the
 * fold slower than line by line). With lines of ~590 B the parse itself gains little.
 *
 * The array is used only if it parses and holds exactly one value per line. Otherwise (a blank or
 * malformed line, a byte-order mark, a torn line followed by more, bytes that are not UTF-8 when
 * the sink asks about them) the run is parsed line by line,
 * exactly as before, so every value, error and line number is what a line-by-line read gives.
 * One case escapes that check: lines that are not JSON values on their own but were made to cancel
 * out (one split in two, another joined with its neighbour: `{"a":[{}` then `{}]}`) parse as the
 * same number of values. Lines cut short by a crash never do (a prefix of a value never closes what
 * it opened), but a reader that must judge every line on its own (`rollout verify`) passes
 * `exact`.
 */
import type { FieldSkip } from "./json-skip.ts";
import { decodeLine, isBlankLine, type LineRun } from "./lines.ts";
import { badUtf8InLine, hasReplacement, invalidUtf8At } from "./utf8.ts";

/** Where a run's lines go, in order. Blank lines are skipped. */
export interface JsonLineSink {
  /** A line's value; `start` is its first byte's file offset, `end` the offset past its newline. */
  value(value: unknown, lineNo: number, start: number, end: number): void;
  /** A line that is not valid JSON, with its text and `JSON.parse`'s error. */
  invalid(error: Error, text: string, lineNo: number, start: number, end: number): void;
  /**
   * A line holding bytes that are not UTF-8 (`at`: the first one's offset in the line), told before
   * its `value` or `invalid`, which see the text with U+FFFD in their place. Without this method the
   * bytes are not looked for (the text is used as decoded).
   */
  badUtf8?(at: number, lineNo: number, start: number, end: number): void;
}

/**
 * The run size readers use: the values of a run wait until it is handed out, and the longer they
 * wait the more a young collection promotes. On the fold bench's real-shaped log (~590 B a line) the
 * trace fold peaked at 109-114 MB with 8-16 KiB runs, 124 MB with 32 KiB, 108 MB line by line; the
 * time is the same within this machine's noise.
 */
export const RUN_BYTES = 16 * 1024;

/**
 * Runs of fewer lines (longer than ~2 KiB on average) are parsed line by line: with long lines the
 * calls saved are few, and one character past Latin-1 decodes the whole run as two-byte text, which
 * parses slower. Split + parse, medians: the 1M-event synthetic log (~240 B a line) 0.80 s line by
 * line, 0.59 s every run in one call, 0.57 s with this bound; the real-shaped log (~590 B) 1.44,
 * 1.36, 1.26 s; a Claude Code transcript (~2.5 KB) no faster in one call, and up to 1.5× slower.
 */
const MIN_LINES = 8;

const OPEN = 0x5b; // [
const COMMA = 0x2c;
const CLOSE = 0x5d; // ]
const NEWLINE = 10;

/**
 * Parse the lines of `run` into `sink`, in one call when it can (see above), else line by line.
 * `skip` leaves out fields the reader never reads (`util/json-skip.ts`); not with `exact`.
 */
export function parseRun(run: LineRun, sink: JsonLineSink, exact = false, skip?: FieldSkip): void {
  if (!exact && run.count >= MIN_LINES) {
    const values = parseWhole(run, sink.badUtf8 !== undefined, skip);
    if (values !== undefined) {
      const { base, nls, count, lineNo } = run;
      let s = run.start;
      for (let k = 0; k < count; k++) {
        const nl = nls[k]!;
        sink.value(values[k], lineNo + k, base + s, base + nl + 1);
        s = nl + 1;
      }
      return;
    }
  }
  // Line by line, each line whole: a run that did not parse as one holds a line that is not a
  // value, and that line's error must be the one a plain parse gives.
  parseLines(run, sink);
}

/**
 * The run's values from one parse, or undefined when that is not one value per line, or (`utf8`)
 * when the run holds bytes that are not UTF-8 (its lines are then read one by one, to say which).
 * The text is the run's own bytes made an array in place, or the array `skip` makes with fields left
 * out (so a bad byte inside a value left out is not seen: the reader never reads it).
 */
function parseWhole(run: LineRun, utf8: boolean, skip?: FieldSkip): unknown[] | undefined {
  const { buf, nls, count } = run;
  const first = run.start;
  let s = first;
  for (let k = 0; k < count; k++) {
    const nl = nls[k]!;
    if (isBlankLine(buf, s, nl)) return undefined;
    s = nl + 1;
  }
  const last = nls[count - 1]!;
  let text = skip?.arrayText(run);
  if (text === undefined) {
    const before = buf[first - 1]!;
    buf[first - 1] = OPEN;
    for (let k = 0; k < count - 1; k++) buf[nls[k]!] = COMMA;
    buf[last] = CLOSE;
    try {
      text = buf.toString("utf8", first - 1, last + 1);
    } finally {
      buf[first - 1] = before;
      for (let k = 0; k < count; k++) buf[nls[k]!] = NEWLINE;
    }
  }
  // A U+FFFD is rare, and free to look for in text that is all Latin-1; the bytes tell a real one.
  if (utf8 && hasReplacement(text) && invalidUtf8At(buf, first, last) !== -1) return undefined;
  return valuesOf(text, count);
}

/** The `count` values of an array text, or undefined when it is not one (or not that long). */
function valuesOf(text: string, count: number): unknown[] | undefined {
  let values: unknown;
  try {
    values = JSON.parse(text);
  } catch {
    return undefined;
  }
  return Array.isArray(values) && values.length === count ? values : undefined;
}

/** The run line by line: each non-blank line decoded and parsed on its own. */
function parseLines(run: LineRun, sink: JsonLineSink): void {
  const { buf, base, nls, count, lineNo } = run;
  let s = run.start;
  for (let k = 0; k < count; k++) {
    const nl = nls[k]!;
    if (!isBlankLine(buf, s, nl)) {
      const text = decodeLine(buf, s, nl);
      if (sink.badUtf8) {
        const at = badUtf8InLine(text, buf, s, nl);
        if (at !== -1) sink.badUtf8(at, lineNo + k, base + s, base + nl + 1);
      }
      let value: unknown;
      let error: Error | undefined;
      try {
        value = JSON.parse(text);
      } catch (e) {
        error = e as Error;
      }
      if (error) sink.invalid(error, text, lineNo + k, base + s, base + nl + 1);
      else sink.value(value, lineNo + k, base + s, base + nl + 1);
    }
    s = nl + 1;
  }
}
