/**
 * A damaged thread store file: how to tell, and how to get it out of the way. The store is derived
 * data, so a file SQLite calls corrupt (or whose FTS5 table no longer loads) is renamed aside
 * with its `-wal` and `-shm` — a new file must not pick up the old one's log — and rebuilt.
 */
import { renameSync, statSync } from "node:fs";
import { FreecodeError } from "../errors.ts";

/** Whether `error` says the database file is damaged (not busy, not full: those pass). */
export function isDamage(error: unknown): boolean {
  // The session store's own errors are said already (`corrupt journal line … (no such table: …)`
  // of a sqljs store read as this file's damage: it was set aside on every search, the store's
  // journal replayed again, and a wrong line and reason reported).
  if (error instanceof FreecodeError) return false;
  const { code = "", message = "" } = (error ?? {}) as { code?: unknown; message?: unknown };
  if (typeof code === "string" && /^SQLITE_(CORRUPT|NOTADB|CONSTRAINT)/.test(code)) return true;
  if (code === "thread_store_version") return true;
  // A damaged FTS5 shadow table surfaces as a plain SQLITE_ERROR from its constructor; a table or
  // column gone (the file edited by hand, or by another tool) as one naming it. A file that passes
  // `quick_check` can still be missing a table, and rows that break a constraint (the index and
  // its rows apart): search and reindex died with a stack trace.
  return (
    typeof message === "string" &&
    /vtable constructor failed|database disk image is malformed|no such (table|column)|constraint failed|has \d+ columns but/.test(
      message,
    )
  );
}

/** The file's device and inode, to tell whether a path still names the file opened. */
export function fileIdentity(file: string): string | undefined {
  const st = statSync(file, { throwIfNoEntry: false });
  return st ? `${st.dev}:${st.ino}` : undefined;
}

/** Rename `file`, `file-wal` and `file-shm` to `<name>.corrupt-<time>…`; absent ones are skipped. */
export function setAside(file: string): void {
  const aside = `${file}.corrupt-${Date.now()}`;
  for (const ext of ["", "-wal", "-shm"]) {
    try {
      renameSync(file + ext, aside + ext);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    }
  }
}
