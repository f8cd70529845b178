/**
 * The lock files under a freecode home (`*.lock`: sessions' and logs' locks, the listing index's,
 * the import state's, a database file's), for `freecode store unlock`. A lock of this host whose
 * process is gone is broken by whoever next wants it; one held from another host never is (its
 * process cannot be checked from here), and this is how a user clears it once they know it is gone.
 */
import { join } from "node:path";
import { clearLock, inspectLock, isClearable, type LockInfo } from "../util/lock.ts";

export interface LockReport extends LockInfo {
  /** The lock file, relative to the home. */
  file: string;
  /** Whether the file was removed (or, in a dry run, would be). */
  removed: boolean;
}

const LOCKS = new Bun.Glob("**/*.lock");

/** The lock files under `home`, sorted (none when the home does not exist). */
export function lockFiles(home: string): string[] {
  try {
    return [...LOCKS.scanSync({ cwd: home, onlyFiles: true, followSymlinks: false })].sort();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
}

/**
 * Remove the locks under `home` that no live process can hold: those of this host whose process is
 * gone, garbled ones, and with `host` those held from that host. `dryRun` only says which.
 */
export function unlockHome(home: string, opts: { host?: string; dryRun?: boolean } = {}): LockReport[] {
  const out: LockReport[] = [];
  for (const file of lockFiles(home)) {
    const path = join(home, file);
    if (opts.dryRun) {
      const info = inspectLock(path);
      if (info) out.push({ file, ...info, removed: isClearable(info, opts.host) });
      continue;
    }
    const { info, removed } = clearLock(path, opts.host);
    if (info) out.push({ file, ...info, removed });
  }
  return out;
}
