/**
 * Staging the work tree into the session's own index and writing it as a git tree: the snapshot.
 * What git would leave out is left out (the project's `.gitignore` files, its `.git/info/exclude`,
 * `.git` itself). Files larger than `maxFileBytes` are left out too, before git hashes them, so one
 * build artefact or dataset cannot bloat the store by its size at every tool run (OpenCode's snapshot
 * store grew without bound that way); they are listed so a restore leaves them alone. So are nested
 * repositories (a vendored checkout, a submodule): their contents are theirs, not ours. The freecode
 * home, when inside the project (`repo.own`), is never staged, whatever the project's rules say.
 */
import { lstatSync } from "node:fs";
import { join } from "node:path";
import { git, nulFields, pathList, shownName, utf8Names } from "./_git.ts";
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
      // Gone, or a parent directory became a file (`--modified` lists deleted paths too).
      if (isGone(error)) return false;
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

/**
 * Files the project's own repository tracks although a rule ignores them (`git add -f`'d there: a
 * built bundle, a `.log` fixture). Ignore rules do not apply to tracked files, in git as here: they
 * are snapshotted like any other (they were left out, and undo left a tool's edits to them in place).
 * Listed from the user's repository (its index is only read); none where the project is in none.
 */
export async function trackedButIgnored(repo: SnapshotRepo): Promise<{ names: string[]; others: Buffer[] }> {
  const out = await git(repo.place, ["ls-files", "-z", "--cached", "--ignored", "--exclude-standard"], {
    unplaced: true,
    cwd: repo.projectPath,
    // 128: not in a repository (or one git will not read).
    okCodes: [128],
    raw: true,
  });
  return utf8Names(out);
}

/**
 * A path that is not there to read: gone, a parent directory became a file, or a parent became a
 * link that loops (`build -> build`; it failed every capture and undo with ELOOP until removed).
 */
const isGone = (error: unknown) => {
  const code = (error as NodeJS.ErrnoException).code;
  return code === "ENOENT" || code === "ENOTDIR" || code === "ELOOP";
};

/**
 * Regular files (and links) among `paths` that exist: not a directory (a submodule's gitlink), and
 * not beyond a symbolic link (a directory replaced by a link to one holding a file of that name:
 * git refuses such a path, and every capture and undo failed).
 */
function presentFiles(projectPath: string, paths: string[]): string[] {
  const plainDir = new Map<string, boolean>();
  const isPlainDir = (dir: string): boolean => {
    let known = plainDir.get(dir);
    if (known === undefined) {
      const parent = dir.includes("/") ? dir.slice(0, dir.lastIndexOf("/")) : "";
      try {
        known = (parent === "" || isPlainDir(parent)) && lstatSync(join(projectPath, dir)).isDirectory();
      } catch (error) {
        if (!isGone(error)) throw error;
        known = false;
      }
      plainDir.set(dir, known);
    }
    return known;
  };
  return paths.filter((p) => {
    const slash = p.lastIndexOf("/");
    if (slash > 0 && !isPlainDir(p.slice(0, slash))) return false;
    try {
      return !lstatSync(join(projectPath, p)).isDirectory();
    } catch (error) {
      if (isGone(error)) return false;
      throw error;
    }
  });
}

/** Stage the whole work tree into the session's index and return its tree id. */
export async function stageWorkTree(repo: SnapshotRepo, maxFileBytes: number): Promise<StagedTree> {
  // Only what git would hash now: untracked (not ignored) and changed files, and what the project's
  // repository tracks although it is ignored.
  const tracked = await trackedButIgnored(repo);
  const forced = presentFiles(
    repo.projectPath,
    tracked.names.filter((p) => !isSkipped(p, repo.own)),
  );
  const listed = utf8Names(
    await git(repo.place, ["ls-files", "-z", "--others", "--modified", "--exclude-standard"], { raw: true }),
  );
  const candidates = [...listed.names, ...forced];
  // Names that are not UTF-8 are left out, as their bytes (see `utf8Names`), and listed with their
  // bad bytes escaped: a restore could neither remove nor write them back by name.
  const unnamed = [...listed.others, ...tracked.others].map((b) =>
    b.at(-1) === 0x2f ? b.subarray(0, -1) : b,
  );
  // A nested repository (`dir/`) would be added as a gitlink, or fail `git add` when it has no commit.
  const ours = candidates.filter((p) => !isSkipped(p, repo.own));
  const nested = ours.filter((p) => p.endsWith("/"));
  const files = ours.filter((p) => !p.endsWith("/"));
  const skipped = [...new Set([...nested, ...oversized(repo.projectPath, files, maxFileBytes)])].sort();
  const left = [...skipped, ...repo.own];
  if (left.length > 0 || unnamed.length > 0) {
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
      { stdin: pathList(left.map(unslash), unnamed), env: { GIT_LITERAL_PATHSPECS: "1" } },
    );
  }
  // Naming an ignored path, even to exclude it, fails `git add`: our home is named only when the
  // project's own rules re-include it (it is in our `info/exclude`).
  const reincluded = repo.own.filter((o) => candidates.some((p) => isSkipped(p, [o])));
  const specs = [".", ...[...skipped, ...reincluded].map((p) => `:(exclude,literal)${unslash(p)}`)];
  const exclude = Buffer.from(":(exclude,literal)");
  await git(repo.place, ["add", "-A", "--pathspec-from-file=-", "--pathspec-file-nul"], {
    stdin: pathList(
      specs,
      unnamed.map((b) => Buffer.concat([exclude, b])),
    ),
  });
  // Only what our index does not hold yet: one held is updated by `add -A` like any tracked file,
  // and a pathspec per file made every capture of a repository force-tracking 10,000 files take
  // 1.5 s (5.4 s for 20,000: quadratic), with nothing changed.
  const held =
    forced.length > 0 ? new Set(nulFields(await git(repo.place, ["ls-files", "-z", "--cached"]))) : new Set();
  const force = forced.filter((p) => !held.has(p) && !isSkipped(p, skipped));
  // Paths, not pathspecs: `add -f` with one per file took 1.6 s for 10,000 (matching each against
  // each); `update-index` reads them in one pass, and ignore rules are not its business.
  if (force.length > 0)
    await git(repo.place, ["update-index", "--add", "-z", "--stdin"], { stdin: `${force.join("\0")}\0` });
  const tree = (await git(repo.place, ["write-tree"])).trim();
  return { tree, skipped: [...skipped, ...unnamed.map(shownName)].sort() };
}
