/**
 * The thread store where SQLite cannot start: `state/threads.json`, read whole, rewritten
 * atomically under a lock once per batch. It has no index: `search` is left out and callers scan
 * the sessions (same rows, same ranking, same result shape — see search-text.ts).
 */
import { existsSync, readFileSync } from "node:fs";
import * as v from "valibot";
import { writeFileAtomic } from "../util/atomic.ts";
import { withLockSync } from "../util/lock.ts";
import type { ThreadStore } from "./store.ts";
import { type DerivedThread, ThreadSchema, type ThreadSource, TurnSchema } from "./types.ts";

/**
 * Bump to rebuild existing files (2: leading messages open no turn; log change stamps; 3: a
 * rollout-only call and its refusal are one call; 4: a turn that ended on a provider error says so,
 * and a rollout-only call keeps what it printed; 5: a compacted session's turns are numbered as the
 * session counts them; 6: words fold a Greek final sigma and read Chinese and Japanese as pairs; 7:
 * as the SQL store's schema 10; 8: as its schema 11; 9: as its schema 12; 10: as its schema 13; 11: as its schema 14;
 * 12: as its schema 15; 13: as its schema 16).
 */
const VERSION = 13;

const FileSchema = v.object({
  version: v.literal(VERSION),
  threads: v.record(
    v.string(),
    v.object({
      thread: ThreadSchema,
      turns: v.array(TurnSchema),
      source: v.object({
        updatedAt: v.number(),
        messageCount: v.number(),
        lastSeq: v.number(),
        metaHash: v.string(),
        eventStamp: v.optional(v.string()),
      }),
    }),
  ),
});
type Stored = DerivedThread & { source: ThreadSource };

/** Open the JSON thread store at `file` (in memory only when `file` is undefined). */
export function openJsonThreadStore(file: string | undefined): ThreadStore {
  let threads = new Map<string, Stored>();
  let loaded = false;
  const load = () => {
    loaded = true;
    threads = new Map();
    if (!file || !existsSync(file)) return;
    try {
      const parsed = v.parse(FileSchema, JSON.parse(readFileSync(file, "utf8")));
      threads = new Map(Object.entries(parsed.threads) as [string, Stored][]);
    } catch {
      // Derived data: unreadable means rebuild (the refresh that follows fills it again).
      threads = new Map();
    }
  };
  const save = () => {
    if (!file) return;
    writeFileAtomic(file, JSON.stringify({ version: VERSION, threads: Object.fromEntries(threads) }), {
      fsync: false,
    });
  };
  // Read on first use: a search that finds this store has no index scans without it.
  const current = () => {
    if (!loaded) load();
    return threads;
  };
  let depth = 0;

  const store: ThreadStore = {
    engine: "json",
    location: file ?? ":memory:",
    sources: () => new Map([...current()].map(([id, t]) => [id, t.source])),
    put: (derived, _rows, source) =>
      store.batch(() => threads.set(derived.thread.id, { ...derived, source })),
    remove: (id) => store.batch(() => threads.delete(id)),
    batch<T>(fn: () => T): T {
      if (depth > 0) return fn();
      const run = () => {
        depth++;
        try {
          // Re-read under the lock: another process may have refreshed meanwhile.
          load();
          const result = fn();
          save();
          return result;
        } finally {
          depth--;
        }
      };
      return file ? withLockSync(`${file}.lock`, run) : run();
    },
    getThread: (id) => current().get(id)?.thread,
    listThreads(filter = {}) {
      const list = [...current().values()]
        .map((t) => t.thread)
        .filter(
          (t) =>
            (filter.projectPath === undefined || t.projectPath === filter.projectPath) &&
            (filter.status === undefined || t.status === filter.status),
        )
        .sort((a, b) => b.updatedAt - a.updatedAt || (a.id < b.id ? -1 : 1));
      const offset = filter.offset ?? 0;
      return list.slice(offset, filter.limit === undefined ? undefined : offset + filter.limit);
    },
    getTurns: (id) => current().get(id)?.turns ?? [],
    close() {},
  };
  return store;
}
