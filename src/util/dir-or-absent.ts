/** Whether a path is a directory already or could be made one, without making it. */
import { statSync } from "node:fs";
import { dirname } from "node:path";

/**
 * `true` when `dir` is a directory, or is missing and its nearest existing ancestor is one (making
 * it would work); `false` when it, or an ancestor, is something else — a plain file given as the
 * home — whose error a reader must meet as it always has.
 */
export function dirOrAbsent(dir: string): boolean {
  for (let d = dir; ; d = dirname(d)) {
    let st: ReturnType<typeof statSync>;
    try {
      st = statSync(d, { throwIfNoEntry: false });
    } catch {
      return false; // ENOTDIR, EACCES: not ours to judge here
    }
    if (st) return st.isDirectory();
    if (dirname(d) === d) return false;
  }
}
