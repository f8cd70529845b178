/** Whether this process may write in a directory: not on a read-only mount, not another user's. */
import { accessSync, constants } from "node:fs";

/**
 * `false` when writing in `dir` is refused (EACCES, EPERM, EROFS: a read-only mount, a cache
 * restored read-only, another user's home); `true` otherwise, a missing `dir` included (it is made
 * where it is needed, and that fails on its own terms).
 */
export function writable(dir: string): boolean {
  try {
    accessSync(dir, constants.W_OK);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code !== "EACCES" && code !== "EPERM" && code !== "EROFS";
  }
}
