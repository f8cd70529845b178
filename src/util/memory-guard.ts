/**
 * Keeps a long streaming read's resident memory near what it really holds. JavaScriptCore lets
 * garbage pile up in proportion to the live heap before it collects, and the allocator keeps what
 * it grew to. Measured on the bench's 525 MB log with the trace fold holding ~50 MB of rows: no
 * guard, a 230 MB peak RSS; a full collection every 4 or 6 MiB of input, ~137-140 MB (every 8 MiB
 * ~144, every 16 MiB ~185).
 * Triggering on RSS growth instead did not help: the memory a collection frees is not handed back
 * at once, so RSS lags the garbage. A full collection over rows kept in typed arrays costs ~3-4 ms
 * (few objects to trace): ~4% of the fold's time on a long log at one per 6 MiB. Reads shorter
 * than `afterBytes` never pay.
 */
import { fullGC } from "bun:jsc";

export interface MemoryGuardOptions {
  /** No collection until this much has been read. */
  afterBytes?: number;
  /** Then one collection per this much read. */
  everyBytes?: number;
}

const MiB = 1024 * 1024;

/** A guard for one read: call `advance(bytes)` as input is consumed. */
export function createMemoryGuard(options: MemoryGuardOptions = {}) {
  const after = options.afterBytes ?? 64 * MiB;
  const every = options.everyBytes ?? 6 * MiB;
  let read = 0;
  let next = after;
  let collections = 0;
  return {
    advance(bytes: number): void {
      read += bytes;
      if (read < next) return;
      fullGC();
      collections++;
      next = read + every;
    },
    /** How many collections the guard ran. */
    get collections() {
      return collections;
    },
  };
}
