/**
 * Records → JSONL bytes for the files adapter. Each record is stringified once and its line is
 * encoded straight into a buffer that is kept between batches; the lines are never joined into one
 * string first. For a large batch (an import writes megabytes at once) two costs used to exceed the
 * `JSON.stringify` itself: joining strings that mix one- and two-byte characters and encoding the
 * joined string, and touching freshly allocated memory (a page fault per 4 KiB — tens of ms for a
 * few MB on a VM). A reused buffer is already mapped.
 */

/** The largest buffer kept for the next batch; a bigger batch gets memory of its own. */
const KEEP_BYTES = 16 * 1024 * 1024;
let scratch: Buffer | undefined;
let busy = false;

/** A buffer of at least `size` bytes: the kept one when it is big enough and free. */
function take(size: number): Buffer {
  if (!busy && scratch && scratch.length >= size) return scratch;
  const buf = Buffer.allocUnsafe(size);
  if (!busy && size <= KEEP_BYTES) scratch = buf;
  return buf;
}

/**
 * Encode `records` as JSONL (one line per record, each ending in a newline) and hand the bytes to
 * `use`, which must consume them before returning: the buffer is reused by the next call.
 * Returns the number of bytes.
 */
export function withJsonLines(records: readonly unknown[], use: (bytes: Uint8Array) => void): number {
  let buf = take(0);
  let off = 0;
  for (let i = 0; i < records.length; i++) {
    // Encoded as soon as it is made: the string dies young instead of a batch of them living on.
    const line = JSON.stringify(records[i]);
    if (buf.length - off < line.length * 3 + 1) {
      const need = Buffer.byteLength(line) + 1;
      if (buf.length - off < need) {
        const bigger = take(Math.max(buf.length * 2, off + need, 64 * 1024));
        buf.copy(bigger, 0, 0, off);
        buf = bigger;
      }
    }
    off += buf.write(line, off);
    buf[off++] = 10;
  }
  busy = true;
  try {
    use(buf.subarray(0, off));
  } finally {
    busy = false;
  }
  return off;
}
