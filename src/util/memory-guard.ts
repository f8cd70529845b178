/**
 * Keeps a long streaming read's resident memory near what it really holds. JavaScriptCore lets
 * garbage pile up in proportion to the live heap before it collects, and the allocator keeps what
 * it grew to; on these VMs every page it grows by also costs a page fault (~16 µs per 4 KiB).
 * So after the first `afterBytes` of a read, a young-generation collection (`edenGC`) runs every
 * `everyBytes`: the parser's garbage is young, so each is cheap, and it is reused before the heap
 * grows. Measured on the fold bench's logs (trace fold, each run alone in a fresh process):
 * - no guard: 206-208 MB resident after a 244 MB log (42,000 page faults), 230 MB peak on 525 MB;
 * - a full collection every 6 MiB after 64 MiB (the previous guard): 132-134 MB, ~24,000 faults,
 *   134-153 MB peak on 525 MB;
 * - an eden collection every 1 MiB after 16 MiB (this guard): 118-123 MB, ~21,000 faults,
 *   133-134 MB peak on 525 MB, and the 1M-event fold ~8% faster (1.48-1.67 s against 1.76-1.96 s).
 * Triggering on RSS growth instead did not help: the memory a collection frees is not handed back
 * at once, so RSS lags the garbage. Reads shorter than `afterBytes` never pay.
 */
import { edenGC, fullGC } from "bun:jsc";

export interface MemoryGuardOptions {
  /** No collection until this much has been read. */
  afterBytes?: number;
  /** Then one collection per this much read. */
  everyBytes?: number;
}

const MiB = 1024 * 1024;

/** A guard for one read: call `advance(bytes)` as input is consumed. */
export function createMemoryGuard(options: MemoryGuardOptions = {}) {
  const after = options.afterBytes ?? 16 * MiB;
  const every = options.everyBytes ?? MiB;
  let read = 0;
  let next = after;
  let collections = 0;
  return {
    advance(bytes: number): void {
      read += bytes;
      if (read < next) return;
      edenGC();
      collections++;
      next = read + every;
    },
    /** How many collections the guard ran. */
    get collections() {
      return collections;
    },
  };
}

/**
 * `write` for a long output made of many pieces (a waterfall's lines, a JSON document's parts), with
 * a guard advanced by each piece's length: each piece is garbage once written, and is collected
 * young rather than piling up the memory it took to make it.
 */
export function guardedWriter(write: (text: string) => void): (text: string) => void {
  const guard = createMemoryGuard();
  return (text) => {
    write(text);
    guard.advance(text.length);
  };
}

/**
 * Full collections at points where much of what was read just became garbage (an importer's part
 * written out): `due(bytes)` after each such point says whether to collect, `collect()` does it. A
 * full collection costs with the live heap (~0.8 ms per MB here), so the spacing adapts: after a
 * collection that took `t` ms, the next waits until `t / maxMsPerMiB` MiB more were read (never
 * less than `everyBytes`), which keeps the collections' cost per MiB read bounded in a process whose
 * live heap is large. Process-wide: one pace per reader kind.
 */
export function createCollectionPace(options: { everyBytes: number; maxMsPerMiB: number }) {
  let spacing = options.everyBytes;
  let read = 0;
  let collections = 0;
  return {
    /** `bytes` more were read; true when a collection is due now. */
    due(bytes: number): boolean {
      read += bytes;
      return read >= spacing;
    },
    collect(): void {
      const t0 = performance.now();
      fullGC();
      const ms = performance.now() - t0;
      collections++;
      read = 0;
      spacing = Math.max(options.everyBytes, (ms / options.maxMsPerMiB) * MiB);
    },
    /** How many collections ran, and the current spacing in bytes. */
    get stats() {
      return { collections, spacing };
    },
  };
}
