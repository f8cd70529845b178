/**
 * Text on its way to a descriptor, gathered as UTF-8 in one buffer kept for the writer's life and
 * handed to `flush` when full (and on `drain`). A fresh buffer per write is freed only when it is
 * collected: a long output written that way held hundreds of MB of them. Text too long for the
 * buffer goes out on its own. Used by stdout (`cli/_stdout.ts`) and atomic file writes.
 */
export function gatherText(size: number, flush: (bytes: Uint8Array) => void) {
  let buffer: Buffer | undefined;
  let used = 0;
  const drain = (): void => {
    if (used === 0) return;
    const n = used;
    used = 0; // taken before the flush: what a failed flush held is dropped, not written twice
    flush(buffer!.subarray(0, n));
  };
  return {
    /** Queue `text`. */
    write(text: string): void {
      // UTF-8 takes at most 3 bytes per UTF-16 unit.
      if (used + text.length * 3 > size) drain();
      if (text.length * 3 > size) {
        flush(Buffer.from(text));
        return;
      }
      buffer ??= Buffer.allocUnsafe(size);
      used += buffer.write(text, used);
    },
    /** Hand over what is queued. */
    drain,
    /** Bytes queued. */
    get pending(): number {
      return used;
    },
  };
}
