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
 * A rule may let another string field, before it in the line, decide what of an object value to
 * keep (`keep`: the trace fold reads the path arguments of file-writing tools): all of it, none, or
 * the values of some of its members (the others are blanked one by one). A line where that field
 * comes later, is nested in an earlier one, or holds an escape, is left whole. And `active` is asked
 * once per run (the trace fold keeps a small log's arguments, so it skips them only in a log read
 * in parts).
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
const COLON = 0x3a;
const COMMA = 0x2c;
/** Shorter lines are parsed whole (see above). */
export const MIN_LINE_BYTES = 512;

/** Lines that start with `lineStart` have the value of `field` left out (see above). */
export interface SkipRule {
  lineStart: string;
  field: string;
  /**
   * What to keep of the value, by this string field before `field` in the line: `undefined` blanks
   * the value, `"all"` keeps it whole, a set keeps those members of an object value (the values of
   * the others are blanked).
   */
  keep?: { field: string; by: (value: string) => ReadonlySet<string> | "all" | undefined };
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
  keepKey: Buffer | undefined;
  keep: ((value: string) => ReadonlySet<string> | "all" | undefined) | undefined;
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
      keepKey: r.keep ? Buffer.from(`,"${r.keep.field}":"`) : undefined,
      keep: r.keep?.by,
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
    const first = buf[open];
    if (r.keepKey) {
      const decider = this.decider(r, buf, s, from, at);
      if (decider === undefined) return savedAt;
      const keep = r.keep!(decider);
      if (keep === "all") return savedAt;
      if (keep !== undefined)
        return first === BRACE ? this.blankMembers(buf, open, nl, keep, savedAt) : savedAt;
    }
    let end: number;
    if (first === QUOTE) end = closingQuote(buf, open, nl);
    else if (first === BRACE || first === BRACKET) end = closingBracket(buf, open, nl);
    else return savedAt;
    return this.blankValue(buf, open, end, savedAt);
  }

  /** Blank the value from `open` (its first byte) to `end` (its last); returns where the next save goes. */
  private blankValue(buf: Buffer, open: number, end: number, savedAt: number): number {
    // Bytes open+1 .. end become the closing byte and spaces; an empty value, or no end, is left.
    if (end <= open + 1) return savedAt;
    const closing = buf[end]!;
    savedAt = this.save(buf, open + 1, end + 1, savedAt);
    buf[open + 1] = closing;
    buf.fill(SPACE, open + 2, end + 1);
    return savedAt;
  }

  /**
   * Blank the values of the object at `open` whose keys are not in `keep` (strings, objects and
   * arrays; a key with an escape is kept). Stops at anything unexpected: what was blanked stays
   * consistent, the rest is left.
   */
  private blankMembers(
    buf: Buffer,
    open: number,
    nl: number,
    keep: ReadonlySet<string>,
    savedAt: number,
  ): number {
    let i = skipSpace(buf, open + 1, nl);
    while (buf[i] === QUOTE) {
      const keyEnd = closingQuote(buf, i, nl);
      if (keyEnd < 0) return savedAt;
      const key = buf.subarray(i + 1, keyEnd);
      const kept = key.includes(BACKSLASH) || keep.has(key.toString("utf8"));
      i = skipSpace(buf, keyEnd + 1, nl);
      if (buf[i] !== COLON) return savedAt;
      i = skipSpace(buf, i + 1, nl);
      const c = buf[i];
      let end: number;
      if (c === QUOTE) end = closingQuote(buf, i, nl);
      else if (c === BRACE || c === BRACKET) end = closingBracket(buf, i, nl);
      else end = scalarEnd(buf, i, nl);
      if (end < 0) return savedAt;
      if (!kept && (c === QUOTE || c === BRACE || c === BRACKET))
        savedAt = this.blankValue(buf, i, end, savedAt);
      i = skipSpace(buf, end + 1, nl);
      if (buf[i] !== COMMA) return savedAt;
      i = skipSpace(buf, i + 1, nl);
    }
    return savedAt;
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

/** The first byte at or after `i` (before `end`) that is not JSON whitespace. */
function skipSpace(buf: Buffer, i: number, end: number): number {
  while (i < end) {
    const c = buf[i];
    if (c !== SPACE && c !== 0x09 && c !== 0x0d && c !== 0x0a) return i;
    i++;
  }
  return end;
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
