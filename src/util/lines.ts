/**
 * Streaming line reader for JSONL files: reads bytes with `Bun.file().stream()`, splits on `\n`
 * without decoding the whole file, and never holds more than one chunk plus one line in memory.
 * A last line with no trailing newline is a torn write (a crash mid-append): it is yielded with
 * `torn: true` so callers can skip and report it rather than fail.
 */

/** One line of a file, with its 1-based number and the byte offset just past it. */
export interface Line {
  text: string;
  lineNo: number;
  /** Byte offset of the start of the line. */
  start: number;
  /** Byte offset just past the line's newline (where the next line starts). */
  end: number;
  /** True for a final line without a newline. */
  torn: boolean;
}

const decoder = new TextDecoder();
const NEWLINE = 10;

/** Yield the lines of `path` from byte `fromOffset` (default 0). Empty lines are skipped. */
export async function* readLines(
  path: string,
  options: { fromOffset?: number; firstLineNo?: number } = {},
): AsyncGenerator<Line> {
  const file = Bun.file(path);
  const fromOffset = options.fromOffset ?? 0;
  const stream = (fromOffset > 0 ? file.slice(fromOffset) : file).stream();
  let lineNo = (options.firstLineNo ?? 1) - 1;
  let offset = fromOffset;
  let carry: Uint8Array | null = null;
  for await (const chunk of stream) {
    let startInChunk = 0;
    for (;;) {
      const nl = chunk.indexOf(NEWLINE, startInChunk);
      if (nl === -1) break;
      let bytes: Uint8Array = chunk.subarray(startInChunk, nl);
      if (carry) {
        bytes = concat(carry, bytes);
        carry = null;
      }
      lineNo++;
      const start = offset;
      offset += bytes.length + 1;
      startInChunk = nl + 1;
      if (bytes.length === 0 || (bytes.length === 1 && bytes[0] === 13)) continue;
      yield { text: decoder.decode(bytes), lineNo, start, end: offset, torn: false };
    }
    if (startInChunk < chunk.length) {
      const rest = chunk.subarray(startInChunk);
      carry = carry ? concat(carry, rest) : rest.slice();
    }
  }
  if (carry && carry.length > 0) {
    lineNo++;
    yield { text: decoder.decode(carry), lineNo, start: offset, end: offset + carry.length, torn: true };
  }
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}

/** Split an in-memory buffer into lines the same way (for small files and stdin). */
export function splitLines(text: string): Line[] {
  const out: Line[] = [];
  let start = 0;
  let lineNo = 0;
  while (start < text.length) {
    const nl = text.indexOf("\n", start);
    const end = nl === -1 ? text.length : nl;
    lineNo++;
    const raw = text.slice(start, end).replace(/\r$/, "");
    if (raw.length > 0)
      out.push({ text: raw, lineNo, start, end: nl === -1 ? end : end + 1, torn: nl === -1 });
    start = end + 1;
  }
  return out;
}
