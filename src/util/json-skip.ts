/**
 * Leaving fields out of JSONL lines before they are parsed, for a reader that never reads them. A
 * rule names the lines by how they start (`{"type":"function.output",`: freecode writes an event's
 * `type` first) and the field (`output`); in each such line of a run, the field's value is blanked
 * in place — a string `"…"` becomes `""` and spaces, an object `{…}` becomes `{}` and spaces (an
 * array `[]`), which JSON allows between tokens — the run is parsed, and the bytes are put back.
 * `JSON.parse` then neither scans nor builds the value. On the fold bench's real-shaped log, where
 * tool outputs and call arguments are half the bytes, split + parse took ~1.1 s leaving out the
 * outputs and ~0.9-1.1 s leaving out both, against ~1.4-1.6 s whole (mins and medians of 6
 * alternating runs).
 *
 * A rule may hold only `unless` another string field, before it in the line, has one of some values
 * (the trace fold reads the arguments of file-writing tools): a line where that field comes later,
 * or holds an escape, is left whole. And `active` is asked once per run (the trace fold keeps a small
 * log's arguments, so it skips them only in a log read in parts).
 *
 * The field's key is found by its bytes `,"field":`. No JSON text holds `,"` inside a string (a
 * quote there is escaped, so a backslash comes before it), so a match is a key of the line's object
 * or of one nested in it; a reader that reads neither may have either blanked. A string ends at the
 * first quote after it that an even number of backslashes precedes; an object or array at its
 * matching bracket, strings hopped over. A line where the value does not end before the line does
 * (cut short, malformed) is left as it is.
 *
 * Only lines of at least `MIN_LINE_BYTES` are looked at: blanking costs ~0.5 µs a line (finding the
 * field, saving and putting back its bytes), which a short value does not repay. On the fold bench's
 * synthetic log (~240 B lines, 200-character outputs) looking at every output line made the trace
 * fold ~90 ms slower (1.29 s against 1.20 s, medians of 8).
 *
 * What a reader gives up: the blanked text is not checked. A raw control character or a bad escape
 * inside it (which no JSON writer emits; corrupted bytes could) no longer makes the line invalid for
 * this reader. Readers that must judge every byte (`rollout verify`, the replay fold, which reads
 * outputs and arguments) do not skip.
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const SPACE = 0x20;
const BRACE = 0x7b;
const BRACE_END = 0x7d;
const BRACKET = 0x5b;
const BRACKET_END = 0x5d;
/** Shorter lines are parsed whole (see above). */
export const MIN_LINE_BYTES = 512;

/** Lines that start with `lineStart` have the value of `field` left out (see above). */
export interface SkipRule {
  lineStart: string;
  field: string;
  /** Not when this string field, before `field` in the line, has one of these values. */
  unless?: { field: string; values: ReadonlySet<string> };
  /** Asked once per run: whether the rule applies now (default: always). */
  active?: () => boolean;
}

/** The byte positions of a run of lines (see `util/lines.ts`'s `LineRun`). */
export interface RunBytes {
  buf: Buffer;
  start: number;
  nls: ArrayLike<number>;
  count: number;
}

interface Compiled {
  start: Buffer;
  key: Buffer;
  unlessKey: Buffer | undefined;
  unless: ReadonlySet<string> | undefined;
  active: (() => boolean) | undefined;
  /** Per run: the first key at or after `searchedFrom` (-1: none to the buffer's end). */
  searchedFrom: number;
  found: number;
}

/**
 * Rules, and the scratch memory blanking needs: `blank` a run, parse it, `restore` it, before the
 * next run. One run at a time: a run is blanked and restored within one synchronous call.
 */
export class FieldSkip {
  private readonly rules: Compiled[];
  private readonly on: Compiled[] = [];
  /** The blanked bytes, as they were (made at the first blank). */
  private saved: Buffer | undefined;
  /** Per blanked value: where it starts in the run's buffer, its length, where it is saved. */
  private edits: number[] = [];
  private blankedIn: Buffer | undefined;

  constructor(rules: readonly SkipRule[]) {
    this.rules = rules.map((r) => ({
      start: Buffer.from(r.lineStart),
      key: Buffer.from(`,"${r.field}":`),
      unlessKey: r.unless ? Buffer.from(`,"${r.unless.field}":"`) : undefined,
      unless: r.unless?.values,
      active: r.active,
      searchedFrom: -1,
      found: -1,
    }));
  }

  /** Blank the skipped fields in the run's lines; true if any was (then `restore` must follow). */
  blank(run: RunBytes): boolean {
    if (this.blankedIn) throw new Error("FieldSkip: blank() again before restore()");
    const on = this.on;
    on.length = 0;
    for (const r of this.rules) {
      if (r.active && !r.active()) continue;
      r.searchedFrom = -1;
      r.found = -1;
      on.push(r);
    }
    if (on.length === 0) return false;
    const { buf, nls, count } = run;
    let s = run.start;
    let savedAt = 0;
    for (let k = 0; k < count; k++) {
      const nl = nls[k]!;
      if (nl - s >= MIN_LINE_BYTES) {
        for (const r of on) {
          if (!startsWith(buf, s, r.start)) continue;
          savedAt = this.blankIn(r, buf, s, nl, savedAt);
          break;
        }
      }
      s = nl + 1;
    }
    if (this.edits.length === 0) return false;
    this.blankedIn = buf;
    return true;
  }

  /** Put back what `blank` changed. */
  restore(): void {
    const buf = this.blankedIn;
    if (!buf) return;
    const e = this.edits;
    for (let i = 0; i < e.length; i += 3) this.saved!.copy(buf, e[i]!, e[i + 2]!, e[i + 2]! + e[i + 1]!);
    this.edits = [];
    this.blankedIn = undefined;
  }

  /** Blank `r`'s field in the line `s`..`nl`, if it is there; returns where the next save goes. */
  private blankIn(r: Compiled, buf: Buffer, s: number, nl: number, savedAt: number): number {
    // From the start's last byte: a start ending in `,` may be the key's own comma. Lines come in
    // order, so a search is made again only past the last key found: the run is scanned once, not
    // to the buffer's end for every line that lacks the field.
    const from = s + r.start.length - 1;
    if (r.searchedFrom < 0 || (r.found >= 0 && r.found < from)) {
      r.found = buf.indexOf(r.key, from);
      r.searchedFrom = from;
    }
    const at = r.found;
    if (at < 0 || at >= nl) return savedAt;
    const open = at + r.key.length;
    if (r.unlessKey && !this.allowed(r, buf, s, from, at)) return savedAt;
    const first = buf[open];
    let end: number;
    let blank: number;
    if (first === QUOTE) {
      end = closingQuote(buf, open, nl);
      blank = QUOTE;
    } else if (first === BRACE || first === BRACKET) {
      end = closingBracket(buf, open, nl);
      blank = first === BRACE ? BRACE_END : BRACKET_END;
    } else return savedAt;
    // Bytes open+1 .. end become the closing byte and spaces; an empty value, or no end, is left.
    if (end <= open + 1) return savedAt;
    savedAt = this.save(buf, open + 1, end + 1, savedAt);
    buf[open + 1] = blank;
    buf.fill(SPACE, open + 2, end + 1);
    return savedAt;
  }

  /**
   * Whether `r`'s `unless` field lets the field go: it must be a key of the line's own object (not of
   * one nested in an earlier field), between the line's start `s` (`from` is past the rule's start)
   * and the key at `at`.
   */
  private allowed(r: Compiled, buf: Buffer, s: number, from: number, at: number): boolean {
    const u = buf.subarray(0, at).indexOf(r.unlessKey!, from);
    if (u < 0 || !topLevel(buf, s, u)) return false;
    const open = u + r.unlessKey!.length - 1;
    const close = closingQuote(buf, open, at);
    if (close < 0) return false;
    const value = buf.subarray(open + 1, close);
    // An escaped value is not compared (it may spell a listed one); the line is parsed whole.
    if (value.includes(BACKSLASH)) return false;
    return !r.unless!.has(value.toString("utf8"));
  }

  /** Keep bytes `from`..`to` of `buf` at `savedAt`; returns where the next go. */
  private save(buf: Buffer, from: number, to: number, savedAt: number): number {
    const length = to - from;
    let saved = this.saved;
    if (!saved || saved.length < savedAt + length) {
      const grown = Buffer.allocUnsafe(Math.max(saved ? saved.length * 2 : 64 * 1024, savedAt + length));
      saved?.copy(grown, 0, 0, savedAt);
      this.saved = saved = grown;
    }
    buf.copy(saved, savedAt, from, to);
    this.edits.push(from, length, savedAt);
    return savedAt + length;
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
