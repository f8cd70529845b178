/**
 * Leaving a string field out of JSONL lines before they are parsed, for a reader that never reads
 * it. A skip names the lines by how they start (`{"type":"function.output",`: freecode writes an
 * event's `type` first) and the field (`output`); in each such line of a run, the field's string
 * value is blanked in place — `"…"` becomes `""` and spaces, which JSON allows between tokens — the
 * run is parsed, and the bytes are put back. The value then reads as `""`, and `JSON.parse` neither
 * scans nor copies the text: on the fold bench's real-shaped log, where tool outputs are a quarter
 * of the bytes, split + parse took ~1.1 s this way against ~1.6 s (medians of 6 alternating runs).
 *
 * The field's key is found by its bytes `,"field":"`. No JSON text holds `,"` inside a string (a
 * quote there is escaped, so a backslash comes before it), so a match is a key of the line's object
 * or of one nested in it; a reader that reads neither may have either blanked. The value ends at
 * the first quote after it that an even number of backslashes precedes; a line where no such quote
 * comes before its end (cut short, malformed) is left as it is.
 *
 * Only lines of at least `MIN_LINE_BYTES` are looked at: blanking costs ~0.5 µs a line (finding the
 * field, saving and putting back its bytes), which a short value does not repay. On the fold bench's
 * synthetic log (~240 B lines, 200-character outputs) looking at every output line made the trace
 * fold ~90 ms slower (1.29 s against 1.20 s, medians of 8).
 *
 * What a reader gives up: the blanked text is not checked. A raw control character or a bad escape
 * inside it (which no JSON writer emits; corrupted bytes could) no longer makes the line invalid for
 * this reader. Readers that must judge every byte (`rollout verify`, the replay fold, which reads
 * the outputs) do not skip.
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const SPACE = 0x20;
/** Shorter lines are parsed whole (see above). */
export const MIN_LINE_BYTES = 512;

/** Lines that start with `lineStart` have the string value of `field` left out. */
export interface SkipRule {
  lineStart: string;
  field: string;
}

/** The byte positions of a run of lines (see `util/lines.ts`'s `LineRun`). */
export interface RunBytes {
  buf: Buffer;
  start: number;
  nls: ArrayLike<number>;
  count: number;
}

/**
 * A skip, and the scratch memory blanking needs: `blank` a run, parse it, `restore` it, before the
 * next run. One run at a time: a run is blanked and restored within one synchronous call.
 */
export class FieldSkip {
  private readonly start: Buffer;
  private readonly key: Buffer;
  /** The blanked bytes, as they were. */
  private saved = Buffer.allocUnsafe(64 * 1024);
  /** Per blanked value: where it starts in the run's buffer, its length, where it is saved. */
  private edits: number[] = [];
  private blankedIn: Buffer | undefined;

  constructor(rule: SkipRule) {
    this.start = Buffer.from(rule.lineStart);
    this.key = Buffer.from(`,"${rule.field}":"`);
  }

  /** Blank the skipped field in the run's lines; true if any was (then `restore` must follow). */
  blank(run: RunBytes): boolean {
    if (this.blankedIn) throw new Error("FieldSkip: blank() again before restore()");
    const { buf, nls, count } = run;
    const key = this.key;
    let s = run.start;
    let savedAt = 0;
    // The first key at or after `searchedFrom` (-1: none up to the buffer's end). Lines come in
    // order, so a search is only made again past the last one found: the run is scanned once, not
    // to the buffer's end for every line that lacks the field.
    let searchedFrom = -1;
    let found = -1;
    for (let k = 0; k < count; k++) {
      const nl = nls[k]!;
      if (nl - s >= MIN_LINE_BYTES && this.startsLine(buf, s)) {
        // From the start's last byte: a start ending in `,` may be the key's own comma.
        const from = s + this.start.length - 1;
        if (searchedFrom < 0 || (found >= 0 && found < from)) {
          found = buf.indexOf(key, from);
          searchedFrom = from;
        }
        if (found >= 0 && found < nl) {
          const open = found + key.length - 1;
          const close = closingQuote(buf, open, nl);
          // Bytes open+1 .. close become `"` and spaces; `""` already, or no end in the line: left.
          if (close > open + 1) {
            savedAt = this.save(buf, open + 1, close + 1, savedAt);
            buf[open + 1] = QUOTE;
            buf.fill(SPACE, open + 2, close + 1);
          }
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
    for (let i = 0; i < e.length; i += 3) this.saved.copy(buf, e[i]!, e[i + 2]!, e[i + 2]! + e[i + 1]!);
    this.edits = [];
    this.blankedIn = undefined;
  }

  private startsLine(buf: Buffer, s: number): boolean {
    const start = this.start;
    for (let i = start.length - 1; i >= 0; i--) if (buf[s + i] !== start[i]) return false;
    return true;
  }

  /** Keep bytes `from`..`to` of `buf` at `savedAt`; returns where the next go. */
  private save(buf: Buffer, from: number, to: number, savedAt: number): number {
    const length = to - from;
    if (this.saved.length < savedAt + length) {
      const grown = Buffer.allocUnsafe(Math.max(this.saved.length * 2, savedAt + length));
      this.saved.copy(grown, 0, 0, savedAt);
      this.saved = grown;
    }
    buf.copy(this.saved, savedAt, from, to);
    this.edits.push(from, length, savedAt);
    return savedAt + length;
  }
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
