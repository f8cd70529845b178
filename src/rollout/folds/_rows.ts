/**
 * Rows of numbers for the trace fold's working state. A 500 MB log holds hundreds of thousands of
 * spans; kept as objects while the log streams, each costs a few hundred bytes and lands among the
 * parser's garbage, so the GC heap grows with the log and every collection walks every span. Here a
 * row is `width` doubles in a fixed-size `Float64Array` chunk: no per-row object, nothing for the GC
 * to trace, no copy when the table grows. `NaN` marks an absent value (JSON never carries NaN, and
 * the catalogue rejects it). Spans become objects only when the fold hands out a Trace.
 */

const CHUNK_BITS = 12;
const CHUNK_ROWS = 1 << CHUNK_BITS;
const ROW_MASK = CHUNK_ROWS - 1;
/** The first chunk starts this small and doubles: most sessions have a few dozen spans, and a full
 * chunk (~0.5 MB, NaN-filled) per table per session cost page faults and GC in eval over many logs. */
const FIRST_ROWS = 16;

/** A growable table of numeric rows with a fixed number of fields. */
export class NumberRows {
  private chunks: Float64Array[] = [];
  length = 0;

  constructor(private readonly width: number) {}

  /** Append a row with every field absent (NaN); returns its index. */
  add(): number {
    const n = this.length;
    if (n < CHUNK_ROWS) {
      // Inside the first chunk: grow it by doubling until it reaches the full chunk size.
      const first = this.chunks[0];
      const capacity = first ? first.length / this.width : 0;
      if (n === capacity) {
        const grown = new Float64Array(this.width * Math.max(FIRST_ROWS, capacity * 2)).fill(Number.NaN);
        if (first) grown.set(first);
        this.chunks[0] = grown;
      }
    } else if ((n & ROW_MASK) === 0) {
      this.chunks.push(new Float64Array(this.width * CHUNK_ROWS).fill(Number.NaN));
    }
    return this.length++;
  }

  get(row: number, field: number): number {
    return this.chunks[row >> CHUNK_BITS]![(row & ROW_MASK) * this.width + field]!;
  }

  set(row: number, field: number, value: number): void {
    this.chunks[row >> CHUNK_BITS]![(row & ROW_MASK) * this.width + field] = value;
  }

  /** Drop every row (the sealed fold lets its chunks go while the Trace it made lives on). */
  clear(): void {
    this.chunks = [];
    this.length = 0;
  }
}

/**
 * One copy per distinct string (tool, model, provider, turn id): every parsed line has its own copy
 * of "Bash", and a span that keeps it keeps the copy. Bounded, so a log of unique names cannot grow
 * the table without end (past the bound a value is simply kept as it came).
 */
export function createInterner(limit = 10_000): (s: string) => string {
  const known = new Map<string, string>();
  return (s) => {
    const hit = known.get(s);
    if (hit !== undefined) return hit;
    if (known.size < limit) known.set(s, s);
    return s;
  };
}
