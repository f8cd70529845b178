/**
 * Lock files git leaves in our store when it is killed mid-call (a hard kill of freecode's process
 * group, an OOM kill): `index/<hex>.lock`, `refs/freecode/sessions/<hex>.lock`, `packed-refs.lock`.
 * git never removes another process's lock, so every later capture or restore of the session failed
 * "File exists", for good. They are cleared before a session's git calls, holding its session lock.
 *
 * Why a lock removed here cannot be a live git's: holding the session lock, no other freecode process
 * runs git for the session, and this one has no git call under way. A git of the session can still be
 * running only as the orphan of a freecode process killed alone; every git we run has the session's
 * index in `GIT_INDEX_FILE`, so it is found by its environment (Linux `/proc/<pid>/environ`), waited
 * for (it removes its own lock as it ends), and its lock is never touched. It is looked for before
 * every call, lock file or not: a `checkout-index` of a killed restore takes no lock and goes on
 * writing the work tree, which a resumed restore must not race. Store-wide locks, which
 * other sessions' gits take, are removed only when no git runs in our git directory at all and the
 * file is over `STORE_LOCK_MS` old (so a lock taken after that look is never the one removed).
 * Where environments cannot be read (no `/proc`), only a lock older than `UNCHECKED_MS` is removed.
 */
import { readdirSync, readFileSync, statSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { FreecodeError } from "../errors.ts";
import type { GitPlace } from "./_git.ts";

/** A store-wide lock younger than this is left alone (another session's git may have just taken it). */
export const STORE_LOCK_MS = 2_000;
/** Without `/proc`, a lock file this old is taken to be dead (no snapshot git call takes this long). */
export const UNCHECKED_MS = 60_000;
/** How long an orphaned git of the session is waited for before giving up. */
const ORPHAN_WAIT_MS = 10_000;

/** Pids of processes (not this one) whose environment has `name=value`; null without `/proc`. */
function processesWith(name: string, value: string): number[] | null {
  let pids: string[];
  try {
    pids = readdirSync("/proc").filter((n) => /^\d+$/.test(n) && Number(n) !== process.pid);
  } catch {
    return null;
  }
  const needle = `${name}=${value}`;
  const found: number[] = [];
  for (const pid of pids) {
    try {
      if (readFileSync(`/proc/${pid}/environ`, "utf8").split("\0").includes(needle)) found.push(Number(pid));
    } catch {
      // gone meanwhile, or another user's (never one of our gits)
    }
  }
  return found;
}

const ageOf = (path: string): number | undefined => {
  try {
    return Date.now() - statSync(path).mtimeMs;
  } catch {
    return undefined; // none
  }
};

function remove(path: string): void {
  try {
    unlinkSync(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return;
    throw new FreecodeError(
      "locked",
      `a lock file a killed git left in the snapshot store cannot be removed (${code}): delete ${path}`,
      { cause: error },
    );
  }
}

/**
 * Wait for the gits of the session whose index is `place.indexFile` still running (orphans of a
 * freecode process killed alone), then remove the stale git lock files of the session, whose ref is
 * `ref` (and stale store-wide ones); call it holding the session lock, before running git. An orphan
 * is waited for whether or not it holds a lock: `checkout-index` takes none, and still writes the
 * work tree. Throws `locked` naming the pid when one is still running after `waitMs`, or naming the
 * file when a lock cannot be removed.
 */
export async function clearStaleGitLocks(
  place: GitPlace,
  ref: string,
  waitMs = ORPHAN_WAIT_MS,
): Promise<void> {
  const session = [`${place.indexFile}.lock`, join(place.gitDir, `${ref}.lock`)];
  const store = [join(place.gitDir, "packed-refs.lock"), join(place.gitDir, "index.lock")];
  const deadline = Date.now() + waitMs;
  for (;;) {
    const orphans = processesWith("GIT_INDEX_FILE", place.indexFile);
    if (orphans === null) {
      for (const p of [...session, ...store]) if ((ageOf(p) ?? 0) > UNCHECKED_MS) remove(p);
      return;
    }
    if (orphans.length === 0) break;
    if (Date.now() > deadline) {
      const held = session.filter((p) => ageOf(p) !== undefined);
      const holding = held.length ? ` (holding ${held.join(", ")})` : "";
      throw new FreecodeError(
        "locked",
        `git (pid ${orphans.join(", ")}) of an interrupted freecode run still works on this session's ` +
          `snapshots${holding}: wait for it to end, or stop it, and retry`,
      );
    }
    await Bun.sleep(50);
  }
  if (![...session, ...store].some((p) => ageOf(p) !== undefined)) return; // the usual case
  for (const p of session) remove(p);
  // Looked at after the look for gits: a lock taken since is young, and stays.
  const storeGits = processesWith("GIT_DIR", place.gitDir) ?? [];
  if (storeGits.length === 0) for (const p of store) if ((ageOf(p) ?? 0) > STORE_LOCK_MS) remove(p);
}
