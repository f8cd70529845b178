/**
 * Staging the work tree into the session's own index and writing it as a git tree: the snapshot.
 * What git would leave out is left out (the project's `.gitignore` files, its `.git/info/exclude`,
 * `.git` itself). Files larger than `maxFileBytes` are left out too, before git hashes them, so one
 * build artefact or dataset cannot bloat the store by its size at every tool run (OpenCode's snapshot
 * store grew without bound that way); they are listed so a restore leaves them alone. So are nested
 * repositories (a vendored checkout, a submodule): their contents are theirs, not ours.
 */
import { lstatSync } from "node:fs";
import { join } from "node:path";
import { git, nulFields } from "./_git.ts";
import type { SnapshotRepo } from "./repo.ts";

/** Files above this size are not snapshotted (default 8 MiB). */
export const DEFAULT_MAX_FILE_BYTES = 8 * 1024 * 1024;

export interface StagedTree {
  tree: string;
  /** Paths (relative, `/`-separated) left out for their size; nested repositories as `dir/`. */
  skipped: string[];
}

/** Regular files among `paths` larger than `max` bytes (a path gone meanwhile is not one). */
function oversized(projectPath: string, paths: string[], max: number): string[] {
  return paths.filter((p) => {
    try {
      const st = lstatSync(join(projectPath, p));
      return st.isFile() && st.size > max;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return false;
      throw error;
    }
  });
}

const unslash = (p: string) => (p.endsWith("/") ? p.slice(0, -1) : p);

/** Whether `path` is one of `skipped`, or inside a skipped directory (`dir/`). */
export function isSkipped(path: string, skipped: Iterable<string>): boolean {
  for (const s of skipped) if (path === s || (s.endsWith("/") && path.startsWith(s))) return true;
  return false;
}

/** Stage the whole work tree into the session's index and return its tree id. */
export async function stageWorkTree(repo: SnapshotRepo, maxFileBytes: number): Promise<StagedTree> {
  // Only what git would hash now: untracked (not ignored) and changed files.
  const candidates = nulFields(
    await git(repo.place, ["ls-files", "-z", "--others", "--modified", "--exclude-standard"]),
  );
  // A nested repository (`dir/`) would be added as a gitlink, or fail `git add` when it has no commit.
  const nested = candidates.filter((p) => p.endsWith("/"));
  const files = candidates.filter((p) => !p.endsWith("/"));
  const skipped = [...new Set([...nested, ...oversized(repo.projectPath, files, maxFileBytes)])].sort();
  if (skipped.length > 0) {
    // What grew past the limit (or became a repository) leaves the index: no stale copy stays in the tree.
    await git(
      repo.place,
      [
        "rm",
        "--cached",
        "-r",
        "-f",
        "-q",
        "--ignore-unmatch",
        "--pathspec-from-file=-",
        "--pathspec-file-nul",
      ],
      { stdin: `${skipped.map(unslash).join("\0")}\0`, env: { GIT_LITERAL_PATHSPECS: "1" } },
    );
  }
  const specs = [".", ...skipped.map((p) => `:(exclude,literal)${unslash(p)}`)];
  await git(repo.place, ["add", "-A", "--pathspec-from-file=-", "--pathspec-file-nul"], {
    stdin: `${specs.join("\0")}\0`,
  });
  const tree = (await git(repo.place, ["write-tree"])).trim();
  return { tree, skipped };
}
