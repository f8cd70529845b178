/**
 * The sqlite adapter: one database file, `state/store.db`, through the built-in `bun:sqlite`.
 * WAL lets readers run beside a writer; every write is one `BEGIN IMMEDIATE` transaction, and the
 * busy timeout makes concurrent writers from other processes wait their turn instead of failing
 * with SQLITE_BUSY (reference/bun-engineering.md §3). The schema is versioned (`_sql-schema.ts`).
 */

import { Database as BunDatabase, type Database } from "bun:sqlite";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { FreecodeError } from "../../errors.ts";
import { homePaths } from "../../home.ts";
import { dirOrAbsent } from "../../util/dir-or-absent.ts";
import { writable } from "../../util/writable.ts";
import type { AdapterFactory } from "../contract.ts";
import { openSqliteFile, openSqliteToRead } from "../engines/bun-sqlite.ts";
import { rebuildCounters, type SqlHost, sqlAdapter } from "./_sql-core.ts";
import { bunSqliteDriver, inTransaction, type SqlDriver } from "./_sql-driver.ts";
import { migrate, SCHEMA_VERSION, schemaVersion } from "./_sql-schema.ts";

/** How long a writer waits for another process's transaction before giving up. */
export const BUSY_TIMEOUT_MS = 15_000;
/** In `batch` mode the WAL reaches the disk within this long of a write. */
const GROUP_COMMIT_MS = 100;

/** The database file of the sqlite adapter under `home`. */
export const sqliteStorePath = (home: string) => join(homePaths(home).state, "store.db");

/** Open (creating and migrating) a store database with the adapter's pragmas. */
export function openSqliteStore(file: string, fsync: "never" | "batch" | "always" = "batch"): SqlDriver {
  if (existsSync(file) && !writable(dirname(file))) return openReadOnly(file);
  let d: SqlDriver | undefined;
  try {
    openSqliteFile(file, {
      busyTimeoutMs: BUSY_TIMEOUT_MS,
      synchronous: fsync === "always" ? "FULL" : fsync === "never" ? "OFF" : "NORMAL",
      init: (db) => {
        d = bunSqliteDriver(db);
        migrate(d, file);
      },
    });
  } catch (error) {
    throw engineError(error, file);
  }
  return d!;
}

/**
 * A store in a directory this process cannot write (a read-only mount, another user's home): opened
 * to read (`openSqliteToRead`), and a write to it is refused as one (`SQLITE_READONLY`). It must be
 * of this version's schema: none can be migrated here.
 */
function openReadOnly(file: string): SqlDriver {
  let db: Database | undefined;
  try {
    db = openSqliteToRead(file);
    // Errors name the file, not the URI it was opened by.
    const d = bunSqliteDriver(db, file);
    const version = schemaVersion(d);
    if (version !== SCHEMA_VERSION)
      throw new FreecodeError(
        "bad_input",
        `the sqlite store is of schema ${version}, and this freecode reads ${SCHEMA_VERSION}: it cannot be migrated in a directory this process cannot write`,
        { source: { file } },
      );
    return d;
  } catch (error) {
    db?.close();
    throw engineError(error, file);
  }
}

/**
 * What opening or using the database can fail with, as our errors, never a raw engine error with its stack:
 * SQLITE_BUSY past the timeout is `locked` (exit 4); a file that is not a database, or one damaged
 * past opening, is one line naming it (exit 2, as a json store's corrupt journal).
 */
function engineError(error: unknown, file: string): unknown {
  const code = (error as { code?: string }).code ?? "";
  if (code === "SQLITE_BUSY" || code === "SQLITE_LOCKED") {
    return new FreecodeError("locked", `${file} stayed locked for ${BUSY_TIMEOUT_MS} ms`, { cause: error });
  }
  if (/^SQLITE_(NOTADB|CORRUPT)/.test(code))
    return new FreecodeError(
      "bad_input",
      `the sqlite store is damaged (${(error as Error).message}): \`freecode store verify\` checks it; restore it from a backup, or move it aside to start an empty store`,
      { source: { file }, cause: error },
    );
  return error;
}

const factory: AdapterFactory = (options) => {
  const file = sqliteStorePath(options.home);
  const fsync = options.fsync ?? "batch";
  let driver: SqlDriver | undefined;
  let closed = false;
  let syncTimer: ReturnType<typeof setTimeout> | undefined;

  /** An empty store in memory: what a read sees before the file exists (opening would make it). */
  let none: SqlDriver | undefined;
  const db = () => {
    if (closed) throw new FreecodeError("internal", `the sqlite store ${file} is closed`);
    return (driver ??= openSqliteStore(file, fsync));
  };
  const toRead = () => {
    if (driver || closed || existsSync(file) || !dirOrAbsent(dirname(file))) return db();
    if (!none) {
      none = bunSqliteDriver(new BunDatabase(":memory:", { strict: true }), file);
      migrate(none, file);
    }
    return none;
  };
  const checkpoint = () => {
    syncTimer = undefined;
    // A passive checkpoint syncs the WAL (and copies what it can) without waiting for readers.
    if (driver && !closed) driver.exec("PRAGMA wal_checkpoint(PASSIVE)");
  };

  const host: SqlHost = {
    read: async (fn) => {
      try {
        return fn(toRead());
      } catch (error) {
        throw engineError(error, file);
      }
    },
    write: async (fn) => {
      const d = db();
      try {
        const result = inTransaction(d, () => fn(d));
        if (fsync === "batch" && !syncTimer) {
          syncTimer = setTimeout(checkpoint, GROUP_COMMIT_MS);
          syncTimer.unref();
        }
        return result;
      } catch (error) {
        throw engineError(error, file);
      }
    },
    async close() {
      if (closed) return;
      if (syncTimer) clearTimeout(syncTimer);
      syncTimer = undefined;
      driver?.close();
      none?.close();
      closed = true;
      driver = undefined;
    },
  };

  return sqlAdapter("sqlite", file, { crossProcess: true, fullTextSearch: false, persistent: true }, host, {
    reindex: () => host.write((d) => ({ sessions: rebuildCounters(d) })),
  });
};

export default factory;
