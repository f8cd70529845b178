/**
 * A file-system error that reached the CLI (a home that is a plain file, a directory without
 * permission, a read-only or full disk) as one line naming the path and the reason, instead of an
 * internal error's stack trace: it is the machine's state, not a bug. Exit 74 (`EX_IOERR`), or 3 for
 * a path that does not exist.
 */
import { existsSync, statSync } from "node:fs";
import { dirname } from "node:path";

const REASONS: Record<string, string> = {
  ENOTDIR: "not a directory",
  EACCES: "permission denied",
  EPERM: "operation not permitted",
  EROFS: "read-only file system",
  ENOSPC: "no space left on the device",
  EDQUOT: "disk quota exceeded",
  EFBIG: "file too large",
  EIO: "input/output error",
  EISDIR: "is a directory",
  EEXIST: "already exists",
  ENOENT: "no such file or directory",
  EMFILE: "too many open files",
  ENFILE: "too many open files in the system",
  ENAMETOOLONG: "file name too long",
  ELOOP: "too many levels of symbolic links",
  EBUSY: "resource busy",
  ETXTBSY: "text file busy",
  // Our own (`util/store-file-open.ts`): a store file freecode will not read or write in place.
  EFTYPE: "not a regular file (a pipe, a device or a socket): freecode reads and writes only regular files",
  ESYMLINK: "it is a symbolic link: freecode does not write a store file through one",
  // SQLite's own (bun:sqlite), by primary code: the machine's state as much as an errno is.
  SQLITE_FULL: "database or disk is full",
  SQLITE_IOERR: "input/output error",
  SQLITE_READONLY: "the database is read-only",
  SQLITE_CANTOPEN: "cannot open the database file",
};

/** `SQLITE_IOERR_WRITE` → `SQLITE_IOERR`; errno codes as they are. */
const primary = (code: string) => (code.startsWith("SQLITE_") ? code.split("_").slice(0, 2).join("_") : code);

const VERBS: Record<string, string> = {
  mkdir: "cannot create directory",
  open: "cannot open",
  write: "cannot write",
  read: "cannot read",
  rename: "cannot rename to",
  unlink: "cannot remove",
  rmdir: "cannot remove",
  scandir: "cannot list",
  opendir: "cannot list",
  stat: "cannot read",
  lstat: "cannot read",
  copyfile: "cannot copy to",
  fsync: "cannot sync",
  ftruncate: "cannot truncate",
  access: "cannot access",
};

/** The exit code of an I/O error (as `EX_IOERR`; also stdout that cannot be written). */
export const IO_ERROR_EXIT = 74;
const NOT_FOUND_EXIT = 3;

interface ErrnoLike {
  code: string;
  syscall?: string;
  path?: string;
  dest?: string;
}

/** `error`, or the first error of its `cause` chain, when it is a file-system error we know. */
function errnoOf(error: unknown): ErrnoLike | undefined {
  for (let e = error, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && primary(code) in REASONS) return e as ErrnoLike;
  }
  return undefined;
}

/** For "not a directory": the nearest existing part of `path` that is a file, if there is one. */
function fileInTheWay(path: string): string | undefined {
  for (let p = dirname(path), up = path; p !== up; up = p, p = dirname(p)) {
    try {
      if (existsSync(p)) return statSync(p).isDirectory() ? undefined : p;
    } catch {
      return undefined;
    }
  }
  return undefined;
}

const isFile = (path: string) => {
  try {
    return !statSync(path).isDirectory();
  } catch {
    return false;
  }
};

/**
 * The one-line message and exit code for a file-system error, or undefined for anything else.
 * `home`: where the command keeps its store, named when the error names no path (a write the
 * runtime reports without one: `cannot write: no space left on the device` said where nothing).
 */
export function fsErrorLine(error: unknown, home?: string): { line: string; code: number } | undefined {
  const e = errnoOf(error);
  if (!e) return undefined;
  let reason = REASONS[primary(e.code)]!;
  const path = e.dest ?? e.path;
  if (e.code === "ENOTDIR" && path) {
    const file = fileInTheWay(path);
    if (file) reason = `${file} is a file, not a directory`;
  }
  if (e.code === "EEXIST" && e.syscall === "mkdir" && path && isFile(path)) reason = "it is a file";
  const verb = (e.syscall && VERBS[e.syscall]) ?? (e.syscall ? `${e.syscall} failed on` : "cannot use");
  const line = path
    ? `${verb} ${path}: ${reason} (${e.code})`
    : home
      ? `${verb} in the store at ${home}: ${reason} (${e.code})`
      : `${verb}: ${reason} (${e.code})`;
  return { line, code: e.code === "ENOENT" ? NOT_FOUND_EXIT : IO_ERROR_EXIT };
}
