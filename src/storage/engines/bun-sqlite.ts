/**
 * Opening a bun:sqlite database file that several processes may open at the same moment.
 *
 * The busy timeout does not cover everything: switching a fresh file to WAL and running the schema
 * migration can fail at once with SQLITE_BUSY when another process is doing the same (SQLite skips
 * the busy handler where waiting could deadlock). So the first-open work — WAL, pragmas, `init`
 * (migrations) — runs under our cross-process lock file beside the database. Afterwards every
 * write is a `BEGIN IMMEDIATE` transaction, which does wait for the busy timeout.
 */
import { constants, Database } from "bun:sqlite";
import { closeSync, existsSync, openSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { FreecodeError } from "../../errors.ts";
import { ensureDir, FILE_MODE } from "../../util/atomic.ts";
import { withLockSync } from "../../util/lock.ts";
import { writable } from "../../util/writable.ts";

export interface OpenSqliteOptions {
  /** How long a statement waits for another process's lock (ms). */
  busyTimeoutMs: number;
  /** `PRAGMA synchronous` value. */
  synchronous?: "OFF" | "NORMAL" | "FULL";
  /** Use WAL (default true). */
  wal?: boolean;
  /** Schema creation / migration, run under the init lock. */
  init?: (db: Database) => void;
  /**
   * Whether the file is already set up (e.g. its `user_version` is current): then the init lock and
   * `init` are skipped, for databases opened at every process start. `init` must re-check under the
   * lock, since another process may have finished first.
   */
  isReady?: (db: Database) => boolean;
}

/** Open `file` (created 0600), with the busy timeout set first and initialisation serialised. */
export function openSqliteFile(file: string, options: OpenSqliteOptions): Database {
  ensureDir(dirname(file));
  // Create the file private: SQLite gives its -wal and -shm files the same mode.
  closeSync(openSync(file, "a", FILE_MODE));
  const db = new Database(file, { create: true, strict: true });
  try {
    db.exec(`PRAGMA busy_timeout = ${options.busyTimeoutMs}`);
    if (options.isReady?.(db)) {
      if (options.synchronous) db.exec(`PRAGMA synchronous = ${options.synchronous}`);
      return db;
    }
    withLockSync(
      `${file}.init.lock`,
      () => {
        if (options.wal !== false) db.exec("PRAGMA journal_mode = WAL");
        if (options.synchronous) db.exec(`PRAGMA synchronous = ${options.synchronous}`);
        options.init?.(db);
      },
      options.busyTimeoutMs,
    );
  } catch (error) {
    db.close();
    throw error;
  }
  return db;
}

/**
 * Open `file` to read only. In a directory this process cannot write (a read-only mount, another
 * user's home) SQLite cannot make the WAL's shared-memory file: a database whose WAL is empty is
 * opened as immutable; one whose WAL holds writes never folded into it is read through the
 * `-shm` file left beside it, and without one it cannot be read at all — refused, saying so, not
 * read without those writes (an immutable open ignores the WAL: a listing showed 1 session of 4).
 */
export function openSqliteToRead(file: string): Database {
  if (writable(dirname(file))) return new Database(file, { readonly: true });
  let walBytes = 0;
  try {
    walBytes = statSync(`${file}-wal`).size;
  } catch {}
  if (walBytes === 0)
    return new Database(
      `file:${encodeURI(file).replaceAll("?", "%3f").replaceAll("#", "%23")}?immutable=1`,
      constants.SQLITE_OPEN_READONLY | constants.SQLITE_OPEN_URI,
    );
  if (existsSync(`${file}-shm`)) return new Database(file, { readonly: true });
  throw new FreecodeError(
    "bad_input",
    `${file}-wal holds writes not yet in the database, which cannot be read where the file cannot be written: open it once where it can be (any freecode command folds them in), or copy the home somewhere writable`,
    { source: { file } },
  );
}
