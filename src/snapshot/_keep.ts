/**
 * What a restore must leave alone although the diff of the two trees names it, decided before
 * anything changes: ignored files, by the target snapshot's rules or today's (they were kept out of
 * it, not absent from the work tree), and what stands in the way of a file the target needs but is in
 * neither tree (ignored files, files over the size limit, nested repositories): git would remove it.
 */
import { createHash } from "node:crypto";
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type GitPlace, git, nulFields } from "./_git.ts";
import type { SnapshotRepo } from "./repo.ts";

/** A change with the target's blob id (all zeros for a deletion). */
export interface PlannedChange {
  path: string;
  change: "added" | "modified" | "deleted";
  blob: string;
}

/**
 * Ask `git check-ignore` in `place` which of `paths` its rules ignore. Each path goes as `./path`:
 * a name starting with `:` would otherwise be read as pathspec magic, and check-ignore refuses
 * `GIT_LITERAL_PATHSPECS` (it echoes each path as given, so the prefix comes off again).
 */
async function checkIgnore(place: GitPlace, paths: string[]): Promise<string[]> {
  const out = await git(place, ["check-ignore", "--no-index", "-z", "--stdin"], {
    stdin: `${paths.map((p) => `./${p}`).join("\0")}\0`,
    okCodes: [1],
  });
  return nulFields(out).map((p) => p.replace(/^\.\//, ""));
}

/**
 * Which of `paths` (absent from tree `to`) the rules of `to` ignore: its `.gitignore` files, written
 * to a scratch work tree, and our `info/exclude`.
 */
async function ignoredByTarget(repo: SnapshotRepo, to: string, paths: string[]): Promise<string[]> {
  const scratch = mkdtempSync(join(tmpdir(), "freecode-rules-"));
  try {
    const place = { ...repo.place, workTree: join(scratch, "tree"), indexFile: join(scratch, "index") };
    mkdirSync(place.workTree);
    await git(place, ["read-tree", to]);
    // Our own pathspec (glob magic on purpose), not a user's file name.
    const rules = nulFields(await git(place, ["ls-files", "-z", "--", ":(glob)**/.gitignore"]));
    if (rules.length > 0)
      await git(place, ["checkout-index", "-z", "--stdin"], { stdin: `${rules.join("\0")}\0` });
    return await checkIgnore(place, paths);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/**
 * Which of `paths` (files a restore to tree `to` would delete) are ignored, by the rules of `to` or
 * by the work tree's rules now (its `.gitignore` files and our `info/exclude`): a restore never
 * removes an ignored file. The target's rules alone miss a `.gitignore` that ignores itself: it is
 * in no snapshot, but still in the work tree.
 */
export async function ignoredPaths(repo: SnapshotRepo, to: string, paths: string[]): Promise<Set<string>> {
  if (paths.length === 0) return new Set();
  const [then, now] = await Promise.all([ignoredByTarget(repo, to, paths), checkIgnore(repo.place, paths)]);
  return new Set([...then, ...now]);
}

const statOf = (abs: string) => {
  try {
    return lstatSync(abs);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return undefined;
    throw error;
  }
};

/** Whether the directory `rel` holds a file (at any depth) that the restore does not delete. */
function holdsOthers(root: string, rel: string, deleted: Set<string>): boolean {
  for (const e of readdirSync(join(root, rel), { withFileTypes: true })) {
    const path = `${rel}/${e.name}`;
    if (e.isDirectory() ? holdsOthers(root, path, deleted) : !deleted.has(path)) return true;
  }
  return false;
}

/** Whether the file or symlink at `abs` already holds blob `blob` (writing it over loses nothing). */
function holdsBlob(abs: string, isLink: boolean, blob: string): boolean {
  const bytes = isLink ? Buffer.from(readlinkSync(abs)) : readFileSync(abs);
  const hash = createHash(blob.length === 64 ? "sha256" : "sha1");
  hash.update(`blob ${bytes.length}\0`).update(bytes);
  return hash.digest("hex") === blob;
}

/**
 * Paths holding what is in neither tree that applying `changes` would remove or overwrite: a
 * directory (not emptied by the deletions) or a file where the target needs a file, or a file where
 * it needs a directory. Empty when the restore is safe.
 */
export function blockers(root: string, changes: PlannedChange[]): string[] {
  const deleted = new Set(changes.filter((c) => c.change === "deleted").map((c) => c.path));
  const found = new Set<string>();
  for (const c of changes) {
    if (c.change === "deleted") continue;
    const parts = c.path.split("/");
    // Below a missing directory or a symlink nothing is in the way (and nothing outside is looked at).
    let reachable = true;
    for (let i = 1; i < parts.length && reachable; i++) {
      const dir = parts.slice(0, i).join("/");
      const st = statOf(join(root, dir));
      reachable = st?.isDirectory() === true;
      if (st && !reachable && !deleted.has(dir)) found.add(dir);
    }
    const st = reachable ? statOf(join(root, c.path)) : undefined;
    if (!st) continue;
    if (st.isDirectory()) {
      if (holdsOthers(root, c.path, deleted)) found.add(c.path);
    } else if (c.change === "added") {
      const plain = st.isFile() || st.isSymbolicLink();
      if (!plain || !holdsBlob(join(root, c.path), st.isSymbolicLink(), c.blob)) found.add(c.path);
    }
  }
  return [...found].sort();
}
