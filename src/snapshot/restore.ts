/**
 * Making the work tree match a snapshot. The difference between the tree just staged from the work
 * tree and the target decides everything: files changed or deleted since come back, files created
 * since go away (unless ignored, by the target's rules or today's: `_keep.ts`). Only paths in one of the two
 * trees are touched, so ignored files (never staged) and files left out for their size are never
 * written or removed, and a restore that would need to is refused before it starts. Unlike a
 * `git checkout` into the user's repository, nothing of theirs (HEAD, index, refs) moves.
 */
import { rmdirSync, unlinkSync } from "node:fs";
import { dirname, join } from "node:path";
import { FreecodeError } from "../errors.ts";
import { git, nulFields } from "./_git.ts";
import { blockers, ignoredPaths, type PlannedChange } from "./_keep.ts";
import type { SnapshotRepo } from "./repo.ts";
import { isSkipped, stageWorkTree } from "./stage.ts";

/** `added`: the target has it and the work tree not (restored); `deleted`: removed by the restore. */
export type FileChange = { path: string; change: "added" | "modified" | "deleted" };

const CHANGE = { A: "added", M: "modified", T: "modified", D: "deleted" } as const;

/** The raw difference of two trees, with the target's blob ids. */
async function diffTrees(repo: SnapshotRepo, from: string, to: string): Promise<PlannedChange[]> {
  const fields = nulFields(await git(repo.place, ["diff-tree", "-r", "-z", "--no-renames", from, to]));
  const changes: PlannedChange[] = [];
  for (let i = 0; i + 1 < fields.length; i += 2) {
    // `:<mode> <mode> <blob> <blob> <status>`, then the path.
    const [, , , blob, status] = fields[i]!.split(" ") as [string, string, string, string, string];
    const path = fields[i + 1]!;
    const change = CHANGE[status as keyof typeof CHANGE];
    if (!change)
      throw new FreecodeError("internal", `unexpected git diff-tree status "${status}" for ${path}`);
    changes.push({ path, change, blob });
  }
  return changes;
}

const listed = (paths: string[]) =>
  paths.length > 5 ? `${paths.slice(0, 5).join(", ")} and ${paths.length - 5} more` : paths.join(", ");

/**
 * What restoring `to` over a work tree staged as `from` will do (paths in `protect` left out):
 * a file absent from `to` that `to`'s rules or today's ignore is kept. Throws `conflict`, having touched
 * nothing, when the restore would remove or overwrite what neither tree holds.
 */
export async function planRestore(
  repo: SnapshotRepo,
  from: string,
  to: string,
  protect: readonly string[],
  direction: "undo" | "redo",
): Promise<FileChange[]> {
  let changes = (await diffTrees(repo, from, to)).filter((c) => !isSkipped(c.path, protect));
  const deletions = changes.filter((c) => c.change === "deleted").map((c) => c.path);
  const ignored = await ignoredPaths(repo, to, deletions);
  changes = changes.filter((c) => !(c.change === "deleted" && ignored.has(c.path)));
  const blocked = blockers(repo.projectPath, changes);
  if (blocked.length > 0)
    throw new FreecodeError(
      "conflict",
      `${direction} refused, nothing changed: it would remove or overwrite files no snapshot holds ` +
        `(ignored, over the size limit, or a nested repository) at ${listed(blocked)}: move them away first`,
    );
  return changes.map(({ path, change }) => ({ path, change }));
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
  await git(repo.place, ["checkout-index", "-f", "-z", "--stdin"], {
    stdin: `${writes.join("\0")}\0`,
  });
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

const why = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** One restore to run: `changes` (from `planRestore(from, to)`), and the snapshot `back` to return to. */
export interface RestoreRun {
  direction: "undo" | "redo";
  from: string;
  to: string;
  changes: FileChange[];
  /** The snapshot the work tree matched before the restore (its tree and left-out files). */
  back: { tree: string; skipped?: string[] };
  maxFileBytes: number;
}

/**
 * Apply a planned restore. When it fails part-way (a file git cannot write, a disk full), the work
 * tree is put back to `back` the same way, best effort: staged as it now is, diffed, applied.
 * Throws `RestoreFailedError` saying which of the two it is in.
 */
export async function restoreOrRollBack(repo: SnapshotRepo, run: RestoreRun): Promise<void> {
  try {
    await applyChanges(repo, run.from, run.to, run.changes);
    return;
  } catch (error) {
    const [to, back] = [run.to.slice(0, 12), run.back.tree.slice(0, 12)];
    try {
      const now = await stageWorkTree(repo, run.maxFileBytes);
      const protect = [...now.skipped, ...(run.back.skipped ?? []), ...repo.own];
      const changes = await planRestore(repo, now.tree, run.back.tree, protect, run.direction);
      await applyChanges(repo, now.tree, run.back.tree, changes);
    } catch (rollback) {
      throw new RestoreFailedError(
        `${run.direction} to snapshot ${to} failed part-way, and could not be rolled back: the work ` +
          `tree is between snapshots ${back} and ${to} (both kept). Fix the cause and run ` +
          `${run.direction} again to finish it: ${why(error)} (rollback: ${why(rollback)})`,
        false,
        error,
      );
    }
    throw new RestoreFailedError(
      `${run.direction} to snapshot ${to} failed and was rolled back: the work tree is as it was, at ` +
        `snapshot ${back}, nothing lost. Fix the cause and run ${run.direction} again: ${why(error)}`,
      true,
      error,
    );
  }
}
