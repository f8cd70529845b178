/**
 * The lock files of a freecode home, for `freecode store unlock`. Every lock freecode takes lives
 * under `state/` (sessions' and logs' locks in `state/locks/`, the listing index's, the import
 * state's, a database file's next to it), but the git snapshots' (`snapshots/<project>/store.lock`
 * and `…/sessions/<id>.lock`): only there is looked at, so a home pointed at the wrong folder never
 * loses a project's `yarn.lock`. A directory under `state/` that is a symlink (a
 * `state/locks` kept on another disk) is followed, once. A lock of this host whose process is
 * gone is broken by whoever next wants it; one held from another host never is (its process
 * cannot be checked from here), and this is how a user clears it once they know it is gone.
 */
import { lstatSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { homePaths } from "../home.ts";
import { clearLock, inspectLock, isClearable, type LockInfo } from "../util/lock.ts";

export interface LockReport extends Partial<LockInfo> {
  /** The lock file, relative to the home. */
  file: string;
  /** Whether the file was removed (never in a dry run). */
  removed: boolean;
  /** In a dry run: whether it would be removed. */
  wouldRemove?: boolean;
  /** Why the file could not be looked at (it is kept). */
  error?: string;
}

const LOCKS = new Bun.Glob("**/*.lock");

/** The lock files under `home`'s `state/` and its snapshots, relative to the home, sorted. */
export function lockFiles(home: string): string[] {
  const state = homePaths(home).state;
  const found = new Set<string>();
  const scan = (dir: string, prefix: string) => {
    for (const f of LOCKS.scanSync({ cwd: dir, onlyFiles: true, followSymlinks: false }))
      found.add(join(prefix, f));
  };
  let hasState = true;
  try {
    scan(state, "state");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    hasState = false; // the snapshots' locks are still looked at
  }
  if (hasState)
    for (const name of readdirSync(state)) {
      const path = join(state, name);
      if (lstatSync(path).isSymbolicLink() && statSync(path, { throwIfNoEntry: false })?.isDirectory())
        scan(path, join("state", name));
    }
  // The git snapshots' own locks (a project store's, a session's), not git's inside their git dirs:
  // the `locked` error of a snapshot names `store unlock` too.
  const snapshots = homePaths(home).snapshots;
  if (statSync(snapshots, { throwIfNoEntry: false })?.isDirectory())
    for (const glob of SNAPSHOT_LOCKS)
      for (const f of glob.scanSync({ cwd: snapshots, onlyFiles: true, followSymlinks: false }))
        found.add(join("snapshots", f));
  return [...found].sort();
}

const SNAPSHOT_LOCKS = [new Bun.Glob("*/store.lock"), new Bun.Glob("*/sessions/*.lock")];

/**
 * Remove the locks under `home` that no live process can hold: those of this host whose process is
 * gone, garbled ones, and with `host` those held from that host. `dryRun` only says which. A lock
 * that cannot be read is reported and kept; the others are still seen to.
 */
export function unlockHome(home: string, opts: { host?: string; dryRun?: boolean } = {}): LockReport[] {
  const out: LockReport[] = [];
  for (const file of lockFiles(home)) {
    const path = join(home, file);
    try {
      if (opts.dryRun) {
        const info = inspectLock(path);
        if (info) out.push({ file, ...info, removed: false, wouldRemove: isClearable(info, opts.host) });
        continue;
      }
      const { info, removed } = clearLock(path, opts.host);
      if (info) out.push({ file, ...info, removed });
    } catch (error) {
      const e = error as NodeJS.ErrnoException;
      out.push({
        file,
        removed: false,
        error: e.code ? `${e.code}: ${e.message.split("\n")[0]}` : String(e),
      });
    }
  }
  return out;
}
