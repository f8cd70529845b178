/**
 * Copying the snapshot stores of one home into another, for `store migrate --to-home`: a session's
 * `checkpoint.*` events name trees only its snapshot store holds (`repo.ts`), so a migration that
 * left them behind broke `session undo` in the new home ("no snapshots") while its log still named
 * them. A project's store the target home does not have is copied whole (lock files left out); one
 * it has already gets the source's objects and session refs by `git fetch` (no ref is forced: a
 * session whose ref the target holds otherwise fails the fetch, named, and nothing is overwritten)
 * and the session state files it lacks. Each store is read under its store lock and every one of its
 * sessions' locks, so no capture, restore or forget runs meanwhile (a capture running during the
 * copy left a ref to a commit the copy lacked, and the session could never snapshot there). A store
 * that cannot be locked in time is a problem named, not a half copy. The same home or snapshots
 * under another name (a link to them) are no other: nothing is copied.
 */
import { cpSync, existsSync, readdirSync, realpathSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { homePaths } from "../home.ts";
import { acquireLock, type LockHandle } from "../util/lock.ts";
import { git } from "./_git.ts";
import { withStoreLock } from "./repo.ts";

export interface SnapshotCopy {
  /** Project stores copied whole, and merged into one the target had. */
  copied: number;
  merged: number;
  /** What could not be copied, one line each. */
  problems: string[];
}

const notLock = (path: string) => !basename(path).endsWith(".lock");

/** `path` with its links resolved (as given, resolved, when it does not exist). */
function real(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return resolve(path);
  }
}

/** Whether two homes are one directory (a link to it is the same home). */
export const samePlace = (a: string, b: string): boolean => real(a) === real(b);

/**
 * Run `fn` holding the lock of every session of the project store at `root`, taken one after the
 * other and given back together (nested, one call deep per session, 10,000 sessions overflowed the
 * stack and nothing was copied). Nothing else of this process takes them meanwhile.
 */
async function withSessionLocks<T>(root: string, fn: () => Promise<T>): Promise<T> {
  const dir = join(root, "sessions");
  const held: LockHandle[] = [];
  try {
    if (existsSync(dir))
      for (const name of readdirSync(dir))
        if (name.endsWith(".json"))
          held.push(acquireLock(join(dir, `${name.slice(0, -".json".length)}.lock`)));
    return await fn();
  } finally {
    for (const lock of held) lock.release();
  }
}

/** Copy every project snapshot store of `fromHome` into `toHome` (see above). */
export async function copySnapshots(fromHome: string, toHome: string, gitBin = "git"): Promise<SnapshotCopy> {
  const out: SnapshotCopy = { copied: 0, merged: 0, problems: [] };
  const from = homePaths(fromHome).snapshots;
  const to = homePaths(toHome).snapshots;
  // The same snapshots under another name (the home, or its snapshots, a link to the other's).
  if (!existsSync(from) || samePlace(fromHome, toHome) || samePlace(from, to)) return out;
  for (const project of readdirSync(from, { withFileTypes: true })) {
    if (!project.isDirectory()) continue;
    const source = join(from, project.name);
    const target = join(to, project.name);
    if (samePlace(source, target)) continue;
    try {
      await withStoreLock(source, () =>
        withSessionLocks(source, async () => {
          if (!existsSync(target)) {
            cpSync(source, target, { recursive: true, filter: notLock, errorOnExist: false, force: false });
            out.copied++;
          } else {
            await withStoreLock(target, () => merge(source, target, project.name));
            out.merged++;
          }
        }),
      );
    } catch (error) {
      out.problems.push(`snapshots of ${project.name}: ${(error as Error).message.split("\n")[0]}`);
    }
  }
  return out;

  /** Into a store the target home has: objects and refs fetched, state files it lacks copied. */
  async function merge(source: string, target: string, name: string): Promise<void> {
    const gitDir = join(target, "git");
    await git(
      { bin: gitBin, gitDir, workTree: target, indexFile: join(target, "index", ".fetch") },
      [
        "--git-dir",
        gitDir,
        "fetch",
        "--quiet",
        "--no-tags",
        join(source, "git"),
        "refs/freecode/*:refs/freecode/*",
      ],
      { unplaced: true, cwd: target },
    );
    // The sessions' positions; not their index files, which may name objects no ref reaches
    // (staged, not yet committed): the next capture stages afresh without one.
    const sessions = join(source, "sessions");
    if (!existsSync(sessions)) return;
    for (const file of readdirSync(sessions)) {
      if (!notLock(file)) continue;
      const dest = join(target, "sessions", file);
      if (existsSync(dest))
        out.problems.push(`snapshots of ${name}: sessions/${file} kept as the target had it`);
      else cpSync(join(sessions, file), dest);
    }
  }
}
