/**
 * The thread store interface, and where it lives: `state/freecode.db` (bun:sqlite with an FTS5
 * index) when SQLite starts here, else `state/threads.json` (search then scans the sessions).
 * Either is derived data: a missing, old or corrupt one is thrown away and rebuilt from the logs.
 */

import { existsSync } from "node:fs";
import { join } from "node:path";
import { usageError } from "../errors.ts";
import { homePaths } from "../home.ts";
import type { SearchQuery, SearchResult, SearchRow } from "./search-text.ts";
import { isDamage, setAside } from "./sql-damage.ts";
import type { DerivedThread, Thread, ThreadFilter, ThreadSource, Turn } from "./types.ts";

export interface ThreadStore {
  /** `sqlite` (indexed search with FTS5) or `json` (search scans). */
  readonly engine: "sqlite" | "json";
  readonly location: string;
  /** What each stored thread was derived from (for incremental refresh). */
  sources(): Map<string, ThreadSource>;
  /** Replace a thread's rows (thread, turns, tool calls, search rows). */
  put(derived: DerivedThread, rows: SearchRow[], source: ThreadSource): void;
  remove(id: string): void;
  /**
   * Leave nothing of deleted rows in the file: what a purged session or a re-import under
   * `--redact` replaced stayed in the full-text index's old segments, free pages and the WAL.
   */
  scrub?(): void;
  /** Run a batch of changes as one unit (one transaction or one file write). */
  batch<T>(fn: () => T): T;
  getThread(id: string): Thread | undefined;
  listThreads(filter?: ThreadFilter): Thread[];
  getTurns(id: string): Turn[];
  /** Indexed full-text search; absent when the engine has none (callers scan). */
  search?(query: SearchQuery, terms: string[]): SearchResult;
  /** Whether an error this store threw says its file is damaged (then `discard` and rebuild). */
  damaged?(error: unknown): boolean;
  /** Close, and set the damaged file aside (if the path still names the file this store opened). */
  discard?(): void;
  /** Throw a damage error if the file fails its integrity checks (`store reindex` runs it). */
  check?(): void;
  close(): void;
}

export const threadDbPath = (home: string) => join(homePaths(home).state, "freecode.db");
export const threadJsonPath = (home: string) => join(homePaths(home).state, "threads.json");

export interface OpenThreadStoreOptions {
  /** Keep it in memory (the store under it is not persistent, e.g. the memory adapter). */
  inMemory?: boolean;
  /** Force an engine (`FREECODE_THREADS=json` does the same): tests of the scan fallback. */
  engine?: "sqlite" | "json";
}

/** `FREECODE_THREADS`: `sqlite`, `json` or unset; any other value is bad usage (`JSON` used SQLite unsaid). */
function forcedEngine(value: string | undefined): "sqlite" | "json" | undefined {
  if (value === undefined || value === "") return undefined;
  if (value === "sqlite" || value === "json") return value;
  throw usageError(`unknown thread store engine "${value}" in FREECODE_THREADS (expected sqlite or json)`);
}

/** Open the thread store under `home`: SQLite when it starts (and has FTS5), JSON otherwise. */
export async function openThreadStore(
  home: string,
  options: OpenThreadStoreOptions = {},
): Promise<ThreadStore> {
  const forced = options.engine ?? forcedEngine(process.env.FREECODE_THREADS);
  if (forced !== "json") {
    try {
      const { openSqlThreadStore } = await import("./sql-store.ts");
      const file = options.inMemory ? ":memory:" : threadDbPath(home);
      try {
        return openSqlThreadStore(file);
      } catch (error) {
        // Derived data: a damaged or foreign file is moved aside and rebuilt, never trusted.
        if (file === ":memory:" || !existsSync(file) || !isDamage(error)) throw error;
        setAside(file);
        return openSqlThreadStore(file);
      }
    } catch (error) {
      if (forced === "sqlite") throw error;
    }
  }
  const { openJsonThreadStore } = await import("./json-store.ts");
  return openJsonThreadStore(options.inMemory ? undefined : threadJsonPath(home));
}
