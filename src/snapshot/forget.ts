/**
 * Forgetting the snapshots of sessions: what `session delete --purge` and `freecode gc` call, so
 * erasing a session erases its snapshots too. A session's snapshot set is its ref, index file and
 * state file in each project's snapshot store (`repo.ts`); when the last set of a store goes, the
 * whole store goes (its objects with it). Until then nothing is pruned: git would only spare the
 * objects named by the forgotten session's index, not those another session has staged but not
 * yet committed (each session has its own index file), and would delete them under it. The store
 * is removed under its store lock, which a first capture holds while it creates the store and its
 * state file (`ensureRepo`): a store is never removed under a capture.
 */
import { existsSync, readdirSync, renameSync, rmSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { homePaths } from "../home.ts";
import { inspectLock, withLock } from "../util/lock.ts";
import { GitMissingError, type GitPlace, git } from "./_git.ts";
import { clearStaleGitLocks } from "./_stale.ts";
import { hexId, withStoreLock } from "./repo.ts";

/** One session's snapshots in one project's store. */
export interface SnapshotSet {
  /** `<home>/snapshots/<project key>`. */
  root: string;
  sessionId: string;
}

const STATE = /^([0-9a-f]+)\.json$/;

/** Every session's snapshot set under `home` (none when nothing was ever snapshotted). */
export function snapshotSets(home: string): SnapshotSet[] {
  const base = homePaths(home).snapshots;
  if (!existsSync(base)) return [];
  const sets: SnapshotSet[] = [];
  for (const project of readdirSync(base, { withFileTypes: true })) {
    if (!project.isDirectory()) continue;
    const root = join(base, project.name);
    const sessions = join(root, "sessions");
    if (!existsSync(sessions)) continue;
    for (const name of readdirSync(sessions)) {
      const hex = STATE.exec(name)?.[1];
      if (hex && hex.length % 2 === 0)
        sets.push({ root, sessionId: Buffer.from(hex, "hex").toString("utf8") });
    }
  }
  return sets;
}

/**
 * Remove one set: the session's ref, index and state files (its objects stay, unreferenced, until
 * the store goes with its last set). Under the session's snapshot lock, as captures take it.
 */
export async function forgetSet(set: SnapshotSet, bin = "git"): Promise<void> {
  const hex = hexId(set.sessionId);
  const sessions = join(set.root, "sessions");
  const place: GitPlace = {
    bin,
    gitDir: join(set.root, "git"),
    workTree: set.root,
    indexFile: join(set.root, "index", hex),
  };
  const ref = `refs/freecode/sessions/${hex}`;
  await withLock(join(sessions, `${hex}.lock`), async () => {
    rmSync(join(sessions, `${hex}.json`), { force: true });
    rmSync(place.indexFile, { force: true });
    const others = readdirSync(sessions).some((n) => STATE.test(n));
    if (!others) return;
    try {
      await clearStaleGitLocks(place, ref); // a killed git's lock would fail the delete
      await git(place, ["update-ref", "-d", ref]);
    } catch (error) {
      // Without git the ref stays: the files are gone, the objects wait for the store's last set.
      if (!(error instanceof GitMissingError)) throw error;
    }
  });
  // The last set takes the store with it, unless a session has begun to use it meanwhile. Moved
  // aside first: a capture waiting for the store lock (removed with the store) then starts afresh
  // instead of creating files in a directory still being removed.
  const aside = await withStoreLock(set.root, async () => {
    if (inUse(sessions)) return undefined;
    const to = join(dirname(set.root), `.${basename(set.root)}.removed-${process.pid}-${Date.now()}`);
    renameSync(set.root, to);
    return to;
  });
  if (aside) rmSync(aside, { recursive: true, force: true });
}

/** Whether a session has a state file in the store, or holds its session lock (a capture runs). */
function inUse(sessions: string): boolean {
  if (!existsSync(sessions)) return false;
  return readdirSync(sessions).some((n) => {
    if (STATE.test(n)) return true;
    if (!n.endsWith(".lock")) return false;
    const held = inspectLock(join(sessions, n));
    return held !== null && held.state !== "stale";
  });
}

/** Forget every snapshot set of `sessionId` under `home`; how many there were. */
export async function forgetSnapshots(home: string, sessionId: string, bin = "git"): Promise<number> {
  const sets = snapshotSets(home).filter((s) => s.sessionId === sessionId);
  for (const set of sets) await forgetSet(set, bin);
  return sets.length;
}
