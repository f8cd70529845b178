/**
 * Making the work tree match a snapshot. The difference between the tree just staged from the work
 * tree and the target decides everything: files changed or deleted since come back, files created
 * since go away (unless ignored, by the target's rules or today's: `_keep.ts`). Only paths in one of the two
 * trees are touched, so ignored files (never staged) and files left out for their size are never
 * written or removed, and a restore that would need to is refused before it starts. Unlike a
 * `git checkout` into the user's repository, nothing of theirs (HEAD, index, refs) moves.
 */
import { isUtf8 } from "node:buffer";
import { chmodSync, lstatSync, rmdirSync, unlinkSync } from "node:fs";
import { dirname, join } from "node:path";
import { FreecodeError } from "../errors.ts";
import { git, nulFields, shownName } from "./_git.ts";
import { blockers, ignoredPaths, type PlannedChange } from "./_keep.ts";
import type { SnapshotRepo } from "./repo.ts";
import { isSkipped, type StagedTree, stageWorkTree, trackedButIgnored } from "./stage.ts";

/** `added`: the target has it and the work tree not (restored); `deleted`: removed by the restore. */
export type FileChange = { path: string; change: "added" | "modified" | "deleted" };

const CHANGE = { A: "added", M: "modified", T: "modified", D: "deleted" } as const;

/** The raw difference of two trees, with the target's blob ids (and `mode blob`, as `version`). */
async function diffTrees(
  repo: SnapshotRepo,
  from: string,
  to: string,
): Promise<(PlannedChange & { version: string })[]> {
  const raw = await git(repo.place, ["diff-tree", "-r", "-z", "--no-renames", from, to], { raw: true });
  const fields = nulFields(raw);
  const changes: (PlannedChange & { version: string })[] = [];
  for (let i = 0; i + 1 < fields.length; i += 2) {
    // `:<mode> <mode> <blob> <blob> <status>`, then the path.
    const [, mode, , blob, status] = fields[i]!.split(" ") as [string, string, string, string, string];
    const bytes = Buffer.from(fields[i + 1]!, "latin1");
    // Snapshots leave such names out (`stage.ts`); one taken by an older version may hold one.
    if (!isUtf8(bytes))
      throw new FreecodeError(
        "conflict",
        `refused, nothing changed: the snapshots differ in a file whose name is not UTF-8 (${shownName(bytes)}), ` +
          "which freecode cannot remove or write back by name (this version leaves such files out of snapshots)",
      );
    const path = bytes.toString("utf8");
    const change = CHANGE[status as keyof typeof CHANGE];
    if (!change)
      throw new FreecodeError("internal", `unexpected git diff-tree status "${status}" for ${path}`);
    changes.push({ path, change, blob, version: `${mode} ${blob}` });
  }
  return changes;
}

const listed = (paths: string[]) =>
  paths.length > 5 ? `${paths.slice(0, 5).join(", ")} and ${paths.length - 5} more` : paths.join(", ");

/**
 * Paths a restore leaves alone: `standing`, what the work tree holds that its staging left out
 * (files over the size limit, nested repositories: `StagedTree.skipped`), and `also` (the target's
 * own left-out paths, the freecode home).
 */
export interface Protected {
  standing: readonly string[];
  also: readonly string[];
}

/**
 * What restoring `to` over a work tree staged as `from` will do (protected paths left out, and,
 * given `only`, every path not in it): a file absent from `to` that `to`'s rules or today's ignore
 * is kept. Throws `conflict`, having touched nothing, when the restore would remove or overwrite
 * what neither tree holds — files of `to` where a nested repository now stands included (they were
 * skipped unsaid, and the restore called done with the work tree unlike its snapshot). A file grown
 * past the size limit is left as it is, by design: a log a tool appended to does not block an undo.
 */
export async function planRestore(
  repo: SnapshotRepo,
  from: string,
  to: string,
  protect: Protected,
  direction: "undo" | "redo",
  only?: ReadonlySet<string>,
): Promise<FileChange[]> {
  const wanted = (await diffTrees(repo, from, to)).filter((c) => only === undefined || only.has(c.path));
  const repos = protect.standing.filter((s) => s.endsWith("/"));
  const standing = wanted
    .filter((c) => c.change !== "deleted" && isSkipped(c.path, repos))
    .map((c) => repos.find((s) => isSkipped(c.path, [s]))!.slice(0, -1));
  let changes: PlannedChange[] = wanted.filter(
    (c) => !isSkipped(c.path, protect.standing) && !isSkipped(c.path, protect.also),
  );
  const deletions = changes.filter((c) => c.change === "deleted").map((c) => c.path);
  const ignored = await ignoredPaths(repo, to, deletions);
  // A file the project's repository tracks is not ignored, whatever a rule says (as in git): a
  // force-tracked file created since the target goes away like any other.
  if (ignored.size > 0) for (const p of (await trackedButIgnored(repo)).names) ignored.delete(p);
  changes = changes.filter((c) => !(c.change === "deleted" && ignored.has(c.path)));
  const blocked = [...new Set([...standing, ...blockers(repo.projectPath, changes)])].sort();
  if (blocked.length > 0)
    throw new FreecodeError(
      "conflict",
      `${direction} refused, nothing changed: it would remove or overwrite files no snapshot holds ` +
        `(ignored, over the size limit, or a nested repository) at ${listed(blocked)}: move them away first`,
    );
  return changes.map(({ path, change }) => ({ path, change }));
}

/**
 * Whether the work tree staged as `now` holds nothing but a restore from `from` to `to` done in
 * part: every path where it differs from `from` is as `to` has it. Otherwise something else wrote
 * to it meanwhile (a tool, the user's editor), and only `now` holds that work.
 */
export async function isPartOf(repo: SnapshotRepo, now: string, from: string, to: string): Promise<boolean> {
  if (now === from || now === to) return true;
  const target = new Map((await diffTrees(repo, from, to)).map((c) => [c.path, c.version]));
  return (await diffTrees(repo, from, now)).every((c) => target.get(c.path) === c.version);
}

/** Remove `dir` and its parents below `stop` while they are empty. */
function pruneEmptyDirs(dir: string, stop: string): void {
  for (let d = dir; d.length > stop.length && d.startsWith(stop); d = dirname(d)) {
    try {
      rmdirSync(d);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ENOTEMPTY" || code === "EEXIST" || code === "ENOENT") return;
      throw error;
    }
  }
}

/**
 * Apply `changes` (from `diffTrees(from, to)`): deletions first (a file may give way to a
 * directory), then the target's versions of everything else, written by git from our index.
 */
export async function applyChanges(
  repo: SnapshotRepo,
  from: string,
  to: string,
  changes: FileChange[],
): Promise<void> {
  const root = repo.projectPath;
  for (const c of changes) {
    if (c.change !== "deleted") continue;
    const abs = join(root, c.path);
    try {
      unlinkSync(abs);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    }
    pruneEmptyDirs(dirname(abs), root);
  }
  // Two-tree read keeps the cached stat data of unchanged files: the next capture stays cheap.
  await git(repo.place, ["read-tree", "-m", from, to]);
  const writes = changes.filter((c) => c.change !== "deleted").map((c) => c.path);
  if (writes.length === 0) return;
  const modes = modesOf(root, changes);
  await git(repo.place, ["checkout-index", "-f", "-z", "--stdin"], {
    stdin: `${writes.join("\0")}\0`,
  });
  restoreModes(root, modes);
}

/**
 * The permission bits of the files a restore overwrites. git writes a file anew, with the umask's
 * mode and the executable bit of its tree: a 0600 file a tool edited came back readable by all.
 */
function modesOf(root: string, changes: FileChange[]): Map<string, number> {
  const modes = new Map<string, number>();
  for (const c of changes) {
    if (c.change !== "modified") continue;
    try {
      const st = lstatSync(join(root, c.path));
      if (st.isFile()) modes.set(c.path, st.mode & 0o7777);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    }
  }
  return modes;
}

/** Put back the permission bits `modesOf` saw, the executable bit as git wrote it (the snapshot's). */
function restoreModes(root: string, modes: Map<string, number>): void {
  for (const [path, mode] of modes) {
    const abs = join(root, path);
    const st = lstatSync(abs);
    if (!st.isFile()) continue;
    const exec = (st.mode & 0o100) !== 0;
    const want = exec ? mode | ((mode & 0o444) >> 2) : mode & ~0o111;
    if ((st.mode & 0o7777) !== want) chmodSync(abs, want);
  }
}

/** A restore that failed part-way; `rolledBack`: the work tree was put back as it was before it. */
export class RestoreFailedError extends FreecodeError {
  constructor(
    message: string,
    readonly rolledBack: boolean,
    cause: unknown,
  ) {
    super("internal", message, { cause });
  }
}

const count = (n: number) => (n === 1 ? "1 file" : `${n} files`);

const why = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** One restore to run: `changes` (from `planRestore(from, to)`), over a work tree staged as `from`. */
export interface RestoreRun {
  direction: "undo" | "redo";
  from: string;
  to: string;
  changes: FileChange[];
  /** Files left out of `from` (size, nested repositories): a rollback neither writes nor removes them. */
  skipped: string[];
  /** The tree of the snapshot at the position (what a work tree left between two snapshots is between). */
  here: string;
  /** It finishes an interrupted restore: rolled back, it is still unfinished. */
  resumed: boolean;
  /**
   * Keep a tree no snapshot holds (the work tree as a rollback found it, with edits made meanwhile)
   * reachable, before anything of it is put back.
   */
  keep: (now: StagedTree) => Promise<void>;
  maxFileBytes: number;
}

/**
 * Apply a planned restore. When it fails part-way (a file git cannot write, a disk full), it is
 * rolled back, best effort: the work tree is staged as it now is and, if it holds anything besides
 * the restore's own work (edits or new files made meanwhile), kept first (`run.keep`); then only the
 * paths of `run.changes` are put back as `from` had them, nothing else is touched.
 * Throws `RestoreFailedError` saying which of the two it is in.
 */
export async function restoreOrRollBack(repo: SnapshotRepo, run: RestoreRun): Promise<void> {
  try {
    await applyChanges(repo, run.from, run.to, run.changes);
    return;
  } catch (error) {
    const [to, here] = [run.to.slice(0, 12), run.here.slice(0, 12)];
    let kept: string | undefined;
    try {
      const now = await stageWorkTree(repo, run.maxFileBytes);
      if (!(await isPartOf(repo, now.tree, run.from, run.to))) {
        await run.keep(now);
        kept = now.tree;
      }
      const protect = { standing: now.skipped, also: [...run.skipped, ...repo.own] };
      const only = new Set(run.changes.map((c) => c.path));
      const back = await planRestore(repo, now.tree, run.from, protect, run.direction, only);
      await applyChanges(repo, now.tree, run.from, back);
    } catch (rollback) {
      const also = kept
        ? `; the work tree as the rollback found it is kept too, as snapshot ${kept.slice(0, 12)}`
        : "";
      throw new RestoreFailedError(
        `${run.direction} to snapshot ${to} failed part-way, and could not be rolled back: the work ` +
          `tree is between snapshots ${here} and ${to} (both kept${also}). Fix the cause and run ` +
          `${run.direction} again to finish it: ${why(error)} (rollback: ${why(rollback)})`,
        false,
        error,
      );
    }
    const meanwhile = kept
      ? `; changes made meanwhile were kept first, with the work tree as it was, as snapshot ${kept.slice(0, 12)} (the last in the list)`
      : "";
    const still = run.resumed
      ? `; the interrupted ${run.direction} is still unfinished: fix the cause and run ${run.direction} again to finish it`
      : `; the position has not moved. Fix the cause and run ${run.direction} again`;
    throw new RestoreFailedError(
      `${run.direction} to snapshot ${to} failed and was rolled back: the ${count(run.changes.length)} it ` +
        `was changing are as they were before it, nothing else was touched${meanwhile}` +
        `${still}: ${why(error)}`,
      true,
      error,
    );
  }
}
