/**
 * One spelling per project directory. Windows paths ignore case, and agents record the working
 * directory as the shell gave it: the corpus holds one Claude Code project as both `C:\Users\…` and
 * `c:\Users\…`, which listed as two projects. The drive letter is made upper case (as Explorer and
 * `process.cwd()` from a fresh shell spell it); the rest of the path is kept as written, since it
 * is shown to the user.
 */
const DRIVE = /^([a-z]):(?=[\\/]|$)/;

export const normalizeProjectPath = (path: string): string =>
  DRIVE.test(path) ? path[0]!.toUpperCase() + path.slice(1) : path;
