/**
 * Leaving fields out of JSONL lines before they are parsed, for a reader that never reads them. A
 * rule names the lines by how they start (`{"type":"function.output",`: freecode writes an event's
 * `type` first) and the field (`output`); a run of lines is made into one JSON array text (as
 * `util/json-lines.ts` parses runs) with each such field's value left empty — a string `""`, an
 * object `{}`, an array `[]` — so `JSON.parse` neither decodes, scans nor builds it. The run's own
 * bytes are not changed. On the fold bench's real-shaped log, where tool outputs and call arguments
 * are half the bytes, split + parse took ~1.1 s leaving out the outputs and ~0.9-1.1 s leaving out
 * both, against ~1.4-1.6 s whole (mins and medians of 6 alternating runs).
 *
 * A rule may let another string field, before it in the line, decide what of an object value to
 * keep (`keep`: the trace fold reads the path arguments of file-writing tools): all of it, none, or
 * the values of some of its members (the others are left empty one by one). A line where that field
 * comes later, is nested in an earlier one, or holds an escape, is left whole. And `active` is asked
 * once per run (the trace fold keeps a small log's arguments, so it skips them only in a log read
 * in parts).
 *
 * The field's key is found by its bytes `,"field":`. No JSON text holds `,"` inside a string (a
 * quote there is escaped, so a backslash comes before it), so a match is a key of the line's object
 * or of one nested in it; a reader that reads neither may have either left out. A string ends at the
 * first quote after it that an even number of backslashes precedes; an object or array at its
 * matching bracket, strings hopped over. A line where the value does not end before the line does
 * (cut short, malformed) is left as it is.
 *
 * Only lines of at least `MIN_LINE_BYTES` are looked at: finding the field costs ~0.5 µs a line,
 * which a short value does not repay. On the fold bench's synthetic log (~240 B lines, 200-character
 * outputs) looking at every output line made the trace fold ~90 ms slower (1.29 s against 1.20 s,
 * medians of 8).
 *
 * What a reader gives up: the text left out is not checked. A raw control character or a bad escape
 * inside it (which no JSON writer emits; corrupted bytes could) no longer makes the line invalid for
 * this reader. Readers that must judge every byte (`rollout verify`, the replay fold, which reads
 * outputs and arguments) do not skip.
 */

import type { LineRun } from "./lines.ts";

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const SPACE = 0x20;
const BRACE = 0x7b;
const BRACE_END = 0x7d;
const BRACKET = 0x5b;
const BRACKET_END = 0x5d;
const COLON = 0x3a;
const COMMA = 0x2c;
/** Shorter lines are parsed whole (see above). */
export const MIN_LINE_BYTES = 512;

/** Lines that start with `lineStart` have the value of `field` left out (see above). */
export interface SkipRule {
  lineStart: string;
  field: string;
  /**
   * What to keep of the value, by this string field before `field` in the line: `undefined` leaves
   * the value out, `"all"` keeps it whole, a set keeps those members of an object value (the values
   * of the others are left out).
   */
  keep?: { field: string; by: (value: string) => ReadonlySet<string> | "all" | undefined };
  /** Asked once per run: whether the rule applies now (default: always). */
  active?: () => boolean;
}

/** The part of a run of lines (`util/lines.ts`) a skip reads. */
export type RunBytes = Pick<LineRun, "buf" | "start" | "nls" | "count">;

interface Compiled {
  start: Buffer;
  key: Buffer;
  keepKey: Buffer | undefined;
  keep: ((value: string) => ReadonlySet<string> | "all" | undefined) | undefined;
  active: (() => boolean) | undefined;
  /** Per run: the first key at or after `searchedFrom` (-1: none to the buffer's end). */
  searchedFrom: number;
  found: number;
}

/**
 * Where a run's array text is made, shared by every skip (`arrayText` is synchronous and its result
 * a fresh string): eval folds thousands of small logs, each with a skip of its own, and a buffer
 * each would be fresh memory each.
 */
let scratch: Buffer | undefined;

/** The UTF-8 bytes of a rule's text, made once (a fold makes its skip per log). */
const encoded = new Map<string, Buffer>();
function bytesOf(text: string): Buffer {
  let b = encoded.get(text);
  if (!b) encoded.set(text, (b = Buffer.from(text)));
  return b;
}

/** Rules, and what one run's reading found. */
export class FieldSkip {
  private readonly rules: Compiled[];
  private readonly on: Compiled[] = [];
  /** Per value left out: the first byte dropped, the byte past the last, and the byte put in its
   * place after the value's first (`"`, `}` or `]`: the value becomes empty). In line order. */
  private edits: number[] = [];

  constructor(rules: readonly SkipRule[]) {
    this.rules = rules.map((r) => ({
      start: bytesOf(r.lineStart),
      key: bytesOf(`,"${r.field}":`),
      keepKey: r.keep ? bytesOf(`,"${r.keep.field}":"`) : undefined,
      keep: r.keep?.by,
      active: r.active,
      searchedFrom: -1,
      found: -1,
    }));
  }

  /**
   * The run's lines as one JSON array text (`[line,line,…]`) with the skipped values left empty;
   * undefined when there is nothing to leave out (parse the run as it is).
   */
  arrayText(run: RunBytes): string | undefined {
    const on = this.on;
    on.length = 0;
    for (const r of this.rules) {
      if (r.active && !r.active()) continue;
      r.searchedFrom = -1;
      r.found = -1;
      on.push(r);
    }
    if (on.length === 0) return undefined;
    const { buf, nls, count } = run;
    const edits = this.edits;
    edits.length = 0;
    let s = run.start;
    for (let k = 0; k < count; k++) {
      const nl = nls[k]!;
      if (nl - s >= MIN_LINE_BYTES) {
        for (const r of on) {
          if (!startsWith(buf, s, r.start)) continue;
          this.findIn(r, buf, s, nl);
          break;
        }
      }
      s = nl + 1;
    }
    if (edits.length === 0) return undefined;
    return this.write(run);
  }

  /** Copy the run into the scratch buffer as an array, the edits applied; decode it. */
  private write(run: RunBytes): string {
    const { buf, nls, count } = run;
    const edits = this.edits;
    const last = nls[count - 1]!;
    const size = last - run.start + 2;
    let out = scratch;
    if (!out || out.length < size) scratch = out = Buffer.allocUnsafe(Math.max(size, 64 * 1024));
    let at = 0;
    out[at++] = BRACKET;
    let from = run.start;
    let e = 0;
    for (let k = 0; k < count; k++) {
      const nl = nls[k]!;
      for (; e < edits.length && edits[e]! < nl; e += 3) {
        at += buf.copy(out, at, from, edits[e]!);
        out[at++] = edits[e + 2]!;
        from = edits[e + 1]!;
      }
      at += buf.copy(out, at, from, nl);
      out[at++] = k === count - 1 ? BRACKET_END : COMMA;
      from = nl + 1;
    }
    return out.toString("utf8", 0, at);
  }

  /** Note `r`'s field in the line `s`..`nl` as left out, if it is there. */
  private findIn(r: Compiled, buf: Buffer, s: number, nl: number): void {
    // From the start's last byte: a start ending in `,` may be the key's own comma. Lines come in
    // order, so a search is made again only past the last key found: the run is scanned once, not
    // to the buffer's end for every line that lacks the field.
    const from = s + r.start.length - 1;
    if (r.searchedFrom < 0 || (r.found >= 0 && r.found < from)) {
      r.found = buf.indexOf(r.key, from);
      r.searchedFrom = from;
    }
    const at = r.found;
    if (at < 0 || at >= nl) return;
    const open = at + r.key.length;
    const first = buf[open];
    if (r.keepKey) {
      const decider = this.decider(r, buf, s, from, at);
      if (decider === undefined) return;
      const keep = r.keep!(decider);
      if (keep === "all") return;
      if (keep !== undefined) {
        if (first === BRACE) this.leaveMembers(buf, open, nl, keep);
        return;
      }
    }
    if (first === QUOTE || first === BRACE || first === BRACKET)
      this.leave(buf, open, valueEnd(buf, open, nl));
  }

  /** Leave out the value from `open` (its first byte) to `end` (its last): it becomes empty. */
  private leave(buf: Buffer, open: number, end: number): void {
    // Already empty, or no end in the line: kept as it is.
    if (end <= open + 1) return;
    this.edits.push(open + 1, end + 1, buf[end]!);
  }

  /**
   * Leave out the values of the object at `open` whose keys are not in `keep` (strings, objects and
   * arrays; a key with an escape is kept). Stops at anything unexpected: what was left out stays
   * consistent, the rest is kept.
   */
  private leaveMembers(buf: Buffer, open: number, nl: number, keep: ReadonlySet<string>): void {
    let i = skipSpace(buf, open + 1, nl);
    while (buf[i] === QUOTE) {
      const keyEnd = closingQuote(buf, i, nl);
      if (keyEnd < 0) return;
      const key = buf.subarray(i + 1, keyEnd);
      const kept = key.includes(BACKSLASH) || keep.has(key.toString("utf8"));
      i = skipSpace(buf, keyEnd + 1, nl);
      if (buf[i] !== COLON) return;
      i = skipSpace(buf, i + 1, nl);
      const c = buf[i];
      const end = valueEnd(buf, i, nl);
      if (end < 0) return;
      if (!kept && (c === QUOTE || c === BRACE || c === BRACKET)) this.leave(buf, i, end);
      i = skipSpace(buf, end + 1, nl);
      if (buf[i] !== COMMA) return;
      i = skipSpace(buf, i + 1, nl);
    }
  }

  /**
   * The value of `r`'s deciding field, if it is a plain string and a key of the line's own object
   * (not of one nested in an earlier field), between the line's start `s` (`from` is past the rule's
   * start) and the key at `at`; otherwise undefined, and the line is left whole.
   */
  private decider(r: Compiled, buf: Buffer, s: number, from: number, at: number): string | undefined {
    const u = buf.subarray(0, at).indexOf(r.keepKey!, from);
    if (u < 0 || !topLevel(buf, s, u)) return undefined;
    const open = u + r.keepKey!.length - 1;
    const close = closingQuote(buf, open, at);
    if (close < 0) return undefined;
    const value = buf.subarray(open + 1, close);
    // An escaped value is not compared (it may spell another one).
    if (value.includes(BACKSLASH)) return undefined;
    return value.toString("utf8");
  }
}

function startsWith(buf: Buffer, s: number, start: Buffer): boolean {
  for (let i = start.length - 1; i >= 0; i--) if (buf[s + i] !== start[i]) return false;
  return true;
}

/** The quote ending the string that opens at `open`, before `end`; -1 if there is none. */
function closingQuote(buf: Buffer, open: number, end: number): number {
  let q = open;
  for (;;) {
    q = buf.indexOf(QUOTE, q + 1);
    if (q < 0 || q >= end) return -1;
    let b = q - 1;
    while (buf[b] === BACKSLASH) b--;
    if ((q - 1 - b) % 2 === 0) return q;
  }
}

/** The bracket closing the object or array that opens at `open`, before `end`; -1 if there is none. */
function closingBracket(buf: Buffer, open: number, end: number): number {
  let depth = 0;
  for (let i = open; i < end; i++) {
    const c = buf[i];
    if (c === QUOTE) {
      i = closingQuote(buf, i, end);
      if (i < 0) return -1;
    } else if (c === BRACE || c === BRACKET) depth++;
    else if (c === BRACE_END || c === BRACKET_END) {
      if (--depth === 0) return i;
    }
  }
  return -1;
}

/** Whether `at` is in the object that opens at `s` itself: no bracket opened since is still open. */
function topLevel(buf: Buffer, s: number, at: number): boolean {
  let depth = 0;
  for (let i = s + 1; i < at; i++) {
    const c = buf[i];
    if (c === QUOTE) {
      i = closingQuote(buf, i, at);
      if (i < 0) return false;
    } else if (c === BRACE || c === BRACKET) depth++;
    else if (c === BRACE_END || c === BRACKET_END) depth--;
  }
  return depth === 0;
}

/** The first byte at or after `i` (before `end`) that is not JSON whitespace. */
function skipSpace(buf: Buffer, i: number, end: number): number {
  while (i < end) {
    const c = buf[i];
    if (c !== SPACE && c !== 0x09 && c !== 0x0d && c !== 0x0a) return i;
    i++;
  }
  return end;
}

/** The last byte of the JSON value that starts at `i`, before `end`; -1 if it does not end there. */
function valueEnd(buf: Buffer, i: number, end: number): number {
  const c = buf[i];
  if (c === QUOTE) return closingQuote(buf, i, end);
  if (c === BRACE || c === BRACKET) return closingBracket(buf, i, end);
  return scalarEnd(buf, i, end);
}

/** The last byte of the number, `true`, `false` or `null` at `i` (before `end`); -1 if it runs on. */
function scalarEnd(buf: Buffer, i: number, end: number): number {
  for (let j = i; j < end; j++) {
    const c = buf[j];
    if (c === COMMA || c === BRACE_END || c === BRACKET_END || c === SPACE || c === 0x09 || c === 0x0d)
      return j - 1;
  }
  return -1;
}
