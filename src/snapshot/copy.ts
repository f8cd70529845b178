/**
 * Copying the snapshot stores of one home into another, for `store migrate --to-home`: a session's
 * `checkpoint.*` events name trees only its snapshot store holds (`repo.ts`), so a migration that
 * left them behind broke `session undo` in the new home ("no snapshots") while its log still named
 * them. A project's store the target home does not have is copied whole (lock files left out); one
 * it has already gets the source's objects and session refs by `git fetch` (no ref is forced: a
 * session whose ref the target holds otherwise fails the fetch, named, and nothing is overwritten)
 * and the session state files it lacks. Each store is read under its store lock, so no first capture or forget runs meanwhile.
 */
import { cpSync, existsSync, readdirSync } from "node:fs";
import { basename, join } from "node:path";
import { homePaths } from "../home.ts";
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

/** Copy every project snapshot store of `fromHome` into `toHome` (see above). */
export async function copySnapshots(fromHome: string, toHome: string, gitBin = "git"): Promise<SnapshotCopy> {
  const out: SnapshotCopy = { copied: 0, merged: 0, problems: [] };
  const from = homePaths(fromHome).snapshots;
  const to = homePaths(toHome).snapshots;
  if (!existsSync(from) || from === to) return out;
  for (const project of readdirSync(from, { withFileTypes: true })) {
    if (!project.isDirectory()) continue;
    const source = join(from, project.name);
    const target = join(to, project.name);
    await withStoreLock(source, async () => {
      if (!existsSync(target)) {
        cpSync(source, target, { recursive: true, filter: notLock, errorOnExist: false, force: false });
        out.copied++;
        return;
      }
      await withStoreLock(target, async () => {
        try {
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
        } catch (error) {
          out.problems.push(`snapshots of ${project.name}: ${(error as Error).message.split("\n")[0]}`);
          return;
        }
        // The sessions' positions; not their index files, which may name objects no ref reaches
        // (staged, not yet committed): the next capture stages afresh without one.
        const sessions = join(source, "sessions");
        if (existsSync(sessions))
          for (const name of readdirSync(sessions)) {
            if (!notLock(name)) continue;
            const dest = join(target, "sessions", name);
            if (existsSync(dest))
              out.problems.push(`snapshots of ${project.name}: sessions/${name} kept as the target had it`);
            else cpSync(join(sessions, name), dest);
          }
        out.merged++;
      });
    });
  }
  return out;
}
