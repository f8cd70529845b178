/**
 * Telling invalid UTF-8 from the real thing, and saying where it is. `Buffer.toString` (what the line
 * readers decode with) puts U+FFFD in place of bytes that are not UTF-8, silently; a fatal
 * `TextDecoder` throws but does not say where. The readers look twice only at text that holds a
 * U+FFFD (`hasReplacement`: free on one-byte strings, where it cannot occur), then check the bytes
 * (`isUtf8`, simdutf: ~0.6 µs per 16 KiB here); `invalidUtf8At` finds the byte to name, on the error
 * path only.
 */
import { isUtf8 } from "node:buffer";
import { badInput } from "../errors.ts";

const REPLACEMENT = "\uFFFD";
const NEWLINE = 10;

/** Whether decoded text holds a U+FFFD (a real one, or one put in place of a bad byte). */
export const hasReplacement = (text: string): boolean => text.includes(REPLACEMENT);

/**
 * The offset of the first byte of `bytes[start, end)` that does not start a valid UTF-8 sequence
 * (the lead byte of a broken or overlong one, a surrogate, past U+10FFFF, or a sequence cut short by
 * `end`), or -1 when every byte is valid. What WHATWG's decoder accepts, checked by hand.
 */
export function invalidUtf8At(bytes: Uint8Array, start = 0, end = bytes.length): number {
  if (isUtf8(bytes.subarray(start, end))) return -1;
  let i = start;
  while (i < end) {
    const c = bytes[i]!;
    if (c < 0x80) {
      i++;
      continue;
    }
    let need: number;
    let lo = 0x80;
    let hi = 0xbf;
    if (c >= 0xc2 && c <= 0xdf) need = 1;
    else if (c >= 0xe0 && c <= 0xef) {
      need = 2;
      if (c === 0xe0)
        lo = 0xa0; // overlong
      else if (c === 0xed) hi = 0x9f; // surrogate
    } else if (c >= 0xf0 && c <= 0xf4) {
      need = 3;
      if (c === 0xf0)
        lo = 0x90; // overlong
      else if (c === 0xf4) hi = 0x8f; // past U+10FFFF
    } else return i;
    for (let k = 1; k <= need; k++) {
      const d = bytes[i + k];
      if (i + k >= end || d === undefined || d < lo || d > hi) return i;
      lo = 0x80;
      hi = 0xbf;
    }
    i += need + 1;
  }
  return -1;
}

/**
 * Where the first byte that is not UTF-8 is in the line `bytes[start, end)` that decoded as `text`
 * (an offset from `start`), or -1. Cheap when the text holds no U+FFFD: the bytes are looked at
 * only when it does.
 */
export function badUtf8InLine(text: string, bytes: Uint8Array, start: number, end: number): number {
  if (!hasReplacement(text)) return -1;
  const at = invalidUtf8At(bytes, start, end);
  return at === -1 ? -1 : at - start;
}

/** What a reader says of a line holding bytes that are not UTF-8 (`at`: the first's offset in it). */
export const badUtf8Message = (at: number): string =>
  `invalid UTF-8 at byte ${at + 1} of the line: read with U+FFFD in its place`;

/** The 1-based number of the line holding byte `offset` of `bytes`. */
export function lineOfByte(bytes: Uint8Array, offset: number): number {
  let line = 1;
  for (let i = bytes.indexOf(NEWLINE); i !== -1 && i < offset; i = bytes.indexOf(NEWLINE, i + 1)) line++;
  return line;
}

/**
 * Throw a `bad_input` error naming `file` and the line of the first byte of `bytes` that is not
 * UTF-8, if there is one: what a case file or stdin must be (read lossily, a bad byte would pass as
 * U+FFFD).
 */
export function checkUtf8(bytes: Uint8Array, file: string, message = "not valid UTF-8"): void {
  const at = invalidUtf8At(bytes);
  if (at !== -1) throw badInput(`${message} (byte ${at + 1})`, { file, line: lineOfByte(bytes, at) });
}

const decoder = new TextDecoder();

/**
 * `bytes` as text, or undefined when they are not valid UTF-8 (an HTTP body, a stdio request). A
 * leading byte-order mark is dropped, as `TextDecoder` does.
 */
export function decodeUtf8(bytes: Uint8Array): string | undefined {
  return isUtf8(bytes) ? decoder.decode(bytes) : undefined;
}
