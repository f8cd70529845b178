/**
 * Using the thread store: open it, bring it up to date, answer from it, close it. Damage can show
 * at any of those steps — a zeroed page may only be read by the refresh or by the query — so a
 * damaged file met anywhere is set aside and the whole use runs once more on a fresh one.
 */

import { keepsState } from "../home.ts";
import type { StorageAdapter } from "../storage/contract.ts";
import { type RefreshStats, refreshThreads } from "./refresh.ts";
import { openThreadStore, type ThreadStore } from "./store.ts";

export interface UseThreadsOptions {
  /** Re-derive every thread (`store reindex`), after checking the file's integrity. */
  full?: boolean;
  /**
   * Use the store only if this holds (else neither refresh nor `fn`: the result is undefined).
   * Search asks for an indexed store: refreshing one it would then scan around is wasted work.
   */
  when?: (store: ThreadStore) => boolean;
}

/** Run `fn` on the up-to-date thread store of `adapter` under `home`. */
export async function withThreads<T>(
  adapter: StorageAdapter,
  home: string,
  fn: (store: ThreadStore, stats: RefreshStats) => T | Promise<T>,
  options: UseThreadsOptions = {},
): Promise<T | undefined> {
  for (let attempt = 1; ; attempt++) {
    // In memory where the store keeps nothing or the home cannot be written (`session show --turns`
    // on a read-only home died on the JSON store's lock; a mistyped --home was made by a search).
    const store = await openThreadStore(home, {
      inMemory: !adapter.capabilities.persistent || !keepsState(home),
    });
    let open = true;
    try {
      if (options.when && !options.when(store)) return undefined;
      if (options.full) store.check?.();
      const stats = await refreshThreads(adapter, store, options.full);
      return await fn(store, stats);
    } catch (error) {
      if (attempt > 1 || !store.discard || !store.damaged?.(error)) throw error;
      open = false;
      store.discard();
    } finally {
      if (open) store.close();
    }
  }
}
