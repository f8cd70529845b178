/**
 * File-descriptor calls (`readSync`, `writeSync`) fail with errors that name no file: `cannot read:
 * is a directory (EISDIR)` did not say which of a store's logs it was. These put the path on the
 * error, where the exit-74 line takes it from.
 */

/** `error`, naming `path` if it is a file-system error that names none. */
export function namingPath(error: unknown, path: string): unknown {
  const e = error as NodeJS.ErrnoException | null;
  if (e && typeof e === "object" && typeof e.code === "string" && e.path === undefined) e.path = path;
  return error;
}

/** `fn()`, its file-system error naming `path`. */
export function onPath<T>(path: string, fn: () => T): T {
  try {
    return fn();
  } catch (error) {
    throw namingPath(error, path);
  }
}
