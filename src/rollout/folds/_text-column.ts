/**
 * Many short strings (call ids, tool arguments as JSON) kept as UTF-8 bytes in 1 MiB chunks, not
 * as one heap string each. A kept string is allocated among the parser's garbage and pins its
 * memory block (see `_rows.ts`); measured on the bench's 525 MB log, 20 MB of kept strings cost
 * ~35 MB of peak RSS held as strings (even batched and joined), and about their size as bytes here.
 * The first chunk starts at 4 KiB and doubles up to 1 MiB, as the rows' first chunk does: a fold
 * of a small session (most of them) needs a few hundred bytes, and a zero-filled 1 MiB chunk per
 * column per session cost eval over 1,000 sessions ~4 ms a session in page faults.
 */
import { IntRows } from "./_rows.ts";

const CHUNK_BITS = 20;
const CHUNK = 1 << CHUNK_BITS;
const FIRST_CHUNK = 4 * 1024;
/** Longer strings are kept as they are (a large allocation pins nothing). */
const LONG = 64 * 1024;
const POS = 0;
type Utf8Writable = Buffer & { utf8Write(s: string, offset: number): number };
const LEN = 1;

/** `size` doubled until it holds `need` bytes (at most `CHUNK`: a kept string is below `LONG`). */
function sizeFor(size: number, need: number): number {
  while (size < need) size *= 2;
  return size;
}

/** An append-only list of strings; `add` returns the index `get` takes. */
export class TextColumn {
  private readonly chunks: Buffer[] = [];
  private readonly entries = new IntRows(2);
  private readonly long = new Map<number, string>();
  /** Bytes used in the last chunk. */
  private used = 0;

  get length(): number {
    return this.entries.length;
  }

  add(s: string): number {
    const i = this.entries.add();
    // UTF-8 takes at most 3 bytes per UTF-16 unit.
    if (s.length * 3 > LONG) {
      this.long.set(i, s);
      return i;
    }
    const last = this.chunks[this.chunks.length - 1];
    if (last === undefined) {
      this.chunks.push(Buffer.allocUnsafe(sizeFor(FIRST_CHUNK, s.length * 3)));
      this.used = 0;
    } else if (this.used + s.length * 3 > last.length) {
      if (last.length < CHUNK) {
        // The first chunk, still growing: double it (offsets into it stay valid).
        const grown = Buffer.allocUnsafe(sizeFor(last.length * 2, this.used + s.length * 3));
        last.copy(grown, 0, 0, this.used);
        this.chunks[0] = grown;
      } else {
        this.chunks.push(Buffer.allocUnsafe(CHUNK));
        this.used = 0;
      }
    }
    const chunk = this.chunks.length - 1;
    // `utf8Write` (Node's, in Bun too) skips `write`'s argument juggling: ~2x faster per call here.
    const written = (this.chunks[chunk] as Utf8Writable).utf8Write(s, this.used);
    this.entries.set(i, POS, chunk * CHUNK + this.used);
    this.entries.set(i, LEN, written);
    this.used += written;
    return i;
  }

  get(i: number): string {
    const pos = this.entries.get(i, POS);
    if (Number.isNaN(pos)) return this.long.get(i)!;
    const start = pos % CHUNK;
    return this.chunks[Math.floor(pos / CHUNK)]!.toString("utf8", start, start + this.entries.get(i, LEN));
  }
}
