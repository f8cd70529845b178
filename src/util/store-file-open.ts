/**
 * Opening a store file to write it in place (append to a log, cut a torn tail): never through a
 * symbolic link, and only a regular file. A log replaced by a link to a file outside the home had
 * that file cut back to its last newline and written to; a log replaced by a FIFO took appended
 * lines into the pipe (counted in the meta, gone) and failed at the fsync with a stack trace. Such a
 * file is refused with an error the CLI names as a file-system error (exit 74, the path).
 * Rewrites go by rename (`atomic.ts`), which replaces a link rather than writing through it.
 */
import { closeSync, constants, fstatSync, openSync } from "node:fs";
import { FILE_MODE } from "./atomic.ts";

const NOFOLLOW = constants.O_NOFOLLOW ?? 0;

/**
 * A file-system error of our own, shaped as the runtime's (`code`, `syscall`, `path`): a directory
 * is `EISDIR`, as the runtime says it; anything else that is not a regular file `EFTYPE`.
 */
function notRegular(path: string, fd: number): NodeJS.ErrnoException {
  const dir = fstatSync(fd).isDirectory();
  closeSync(fd);
  const code = dir ? "EISDIR" : "EFTYPE";
  return Object.assign(new Error(`${code}: not a regular file, open '${path}'`), {
    code,
    syscall: "open",
    path,
  });
}

/**
 * Open `path` to read it, never waiting: a FIFO in a log's place hung every reader (`session show`,
 * `store verify`) until something wrote to it. Refused as any non-regular file is.
 */
export function openToRead(path: string): number {
  const fd = openSync(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  if (!fstatSync(fd).isFile()) throw notRegular(path, fd);
  return fd;
}

/**
 * Open `path`: `append` (read and append, created when missing, as `a+`) or `update` (read and
 * write in place, as `r+`).
 */
export function openStoreFile(path: string, how: "append" | "update"): number {
  const flags =
    how === "append"
      ? constants.O_RDWR | constants.O_APPEND | constants.O_CREAT | NOFOLLOW
      : constants.O_RDWR | NOFOLLOW;
  let fd: number;
  try {
    fd = openSync(path, flags, FILE_MODE);
  } catch (error) {
    // O_NOFOLLOW on a link: ELOOP, which says "too many levels of symbolic links": say what it is.
    if ((error as NodeJS.ErrnoException).code === "ELOOP")
      throw Object.assign(new Error(`ESYMLINK: a symbolic link, open '${path}'`), {
        code: "ESYMLINK",
        syscall: "open",
        path,
      });
    throw error;
  }
  if (!fstatSync(fd).isFile()) throw notRegular(path, fd);
  return fd;
}
