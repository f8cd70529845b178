/**
 * Rows of numbers for the trace fold's state. A 500 MB log holds hundreds of thousands of spans;
 * kept as objects, each costs a hundred bytes or more, and because they are allocated among the
 * parser's garbage (JSC never moves objects) every survivor pins the memory block around it: on the
 * bench's 525 MB log, keeping one short string per tool call raised the peak RSS by ~70 MB. So a
 * span is a row of fields in fixed-size typed-array chunks, which the GC neither traces nor
 * scatters, and the Trace's span objects are thin views over the rows (see `_views.ts`).
 *
 * `NumberRows` holds doubles (times, durations, `seq`); `IntRows` holds counts, tokens, flags and
 * indices in 4 bytes, spilling a value that does not fit (negative, fractional or huge) to a map, so
 * nothing is ever rounded. `NaN` marks an absent value in both.
 */

const CHUNK_BITS = 12;
const CHUNK_ROWS = 1 << CHUNK_BITS;
const ROW_MASK = CHUNK_ROWS - 1;
/** The first chunk starts this small and doubles: most sessions have a few dozen spans, and a full
 * chunk per table per session cost page faults and GC in eval over many logs. */
const FIRST_ROWS = 16;

type Chunk = Float64Array | Int32Array;

/** Chunked storage shared by both row kinds. */
abstract class Rows<C extends Chunk> {
  protected chunks: C[] = [];
  length = 0;

  constructor(
    protected readonly width: number,
    private readonly make: (size: number) => C,
  ) {}

  /** Append a row with every field absent; returns its index. */
  add(): number {
    const n = this.length;
    if (n < CHUNK_ROWS) {
      // Inside the first chunk: grow it by doubling until it reaches the full chunk size.
      const first = this.chunks[0];
      const capacity = first ? first.length / this.width : 0;
      if (n === capacity) {
        const grown = this.make(this.width * Math.min(CHUNK_ROWS, Math.max(FIRST_ROWS, capacity * 2)));
        if (first) grown.set(first);
        this.chunks[0] = grown;
      }
    } else if ((n & ROW_MASK) === 0) {
      this.chunks.push(this.make(this.width * CHUNK_ROWS));
    }
    return this.length++;
  }

  /** Drop every row. */
  clear(): void {
    this.chunks = [];
    this.length = 0;
  }
}

/** Rows of doubles (absent: NaN; with `everySet`, every field of a row is always set, so fresh
 * chunks are left zeroed instead of filled). */
export class NumberRows extends Rows<Float64Array> {
  constructor(width: number, everySet = false) {
    super(
      width,
      everySet ? (size) => new Float64Array(size) : (size) => new Float64Array(size).fill(Number.NaN),
    );
  }

  get(row: number, field: number): number {
    return this.chunks[row >> CHUNK_BITS]![(row & ROW_MASK) * this.width + field]!;
  }

  set(row: number, field: number, value: number): void {
    this.chunks[row >> CHUNK_BITS]![(row & ROW_MASK) * this.width + field] = value;
  }
}

/**
 * A stored integer is its value + 1: 0 is absent (fresh chunks are zeroed, no fill), and -1 marks a
 * value kept in the spill map. Signed 32-bit cells: every load and comparison stays an int32 for the
 * JIT (a `Uint32Array` cell may not fit one, and those loads and sets ran ~2× slower).
 */
const SPILLED = -1;
const MAX_STORED = 0x7fff_fffe;

/** Rows of small non-negative integers (4 bytes a field); other values spill to a map. */
export class IntRows extends Rows<Int32Array> {
  private readonly spill = new Map<number, number>();

  constructor(width: number) {
    super(width, (size) => new Int32Array(size));
  }

  get(row: number, field: number): number {
    const raw = this.chunks[row >> CHUNK_BITS]![(row & ROW_MASK) * this.width + field]!;
    if (raw !== SPILLED) return raw === 0 ? Number.NaN : raw - 1;
    return this.spill.get(row * this.width + field)!;
  }

  set(row: number, field: number, value: number): void {
    const chunk = this.chunks[row >> CHUNK_BITS]!;
    const i = (row & ROW_MASK) * this.width + field;
    if (chunk[i] === SPILLED) this.spill.delete(row * this.width + field);
    if ((value | 0) === value && value >= 0 && value <= MAX_STORED) chunk[i] = value + 1;
    else if (Number.isNaN(value)) chunk[i] = 0;
    else {
      chunk[i] = SPILLED;
      this.spill.set(row * this.width + field, value);
    }
  }

  override clear(): void {
    super.clear();
    this.spill.clear();
  }
}

/**
 * One copy per distinct string (tool, model, provider, turn id), numbered: every parsed line has
 * its own copy of "Bash", and a row stores the number instead. Bounded, so a log of unique names
 * cannot grow the table without end (past the bound a value is kept in a spill list).
 */
export class StringTable {
  private readonly known = new Map<string, number>();
  private readonly values: string[] = [];

  constructor(private readonly limit = 10_000) {}

  /** The number of `s` (a new one for a string not seen yet, or past the bound). */
  id(s: string): number {
    let n = this.known.get(s);
    if (n === undefined) {
      n = this.values.push(s) - 1;
      if (this.known.size < this.limit) this.known.set(s, n);
    }
    return n;
  }

  /**
   * An `id` for one call site that remembers the last `size` strings it was asked for: a site sees
   * few names over and over (a provider, a model, a tool pair like Edit/Bash), and comparing a
   * short string costs less than hashing it into the map every time.
   */
  recent(size = 2): (s: string) => number {
    const keys: string[] = [];
    const ids: number[] = [];
    let next = 0;
    return (s) => {
      for (let i = 0; i < keys.length; i++) if (keys[i] === s) return ids[i]!;
      const n = this.id(s);
      keys[next] = s;
      ids[next] = n;
      next = (next + 1) % size;
      return n;
    };
  }

  /** The shared copy of `s`. */
  intern(s: string): string {
    return this.values[this.id(s)]!;
  }

  get(n: number): string {
    return this.values[n]!;
  }
}
