/**
 * Git snapshots of a project work tree, for one session (seed 001): an agent calls `capture` before
 * and after each tool run; `undo` puts the work tree back to the snapshot before the current one and
 * `redo` walks forward again. The list and the position live in a state file, so they survive a
 * restart. A capture that differs from the current snapshot, taken after an undo, drops the redo
 * branch (as an editor does), except snapshots a restore kept: those are never dropped. An undo's
 * autosave drops nothing: it is inserted just after the position. Every step is written to the
 * session's rollout as `checkpoint.*`.
 * A restore git fails part-way is rolled back, or else recorded as interrupted (`state.ts`).
 *
 * Nothing of the user's repository is read or written except its work tree files (and its ignore
 * rules, read: `_ignores.ts`): the git directory, index, refs and config are ours.
 */

import * as v from "valibot";
import { badInput, FreecodeError } from "../errors.ts";
import type { EventInput } from "../rollout/events.ts";
import { SessionIdSchema } from "../storage/records.ts";
import { withLock } from "../util/lock.ts";
import { GitMissingError } from "./_git.ts";
import { clearStaleGitLocks } from "./_stale.ts";
import {
  canonicalProject,
  ensureRepo,
  keepTree,
  ProjectInHomeError,
  repoExists,
  type SnapshotRepo,
  snapshotRepo,
} from "./repo.ts";
import { isPartOf, planRestore, RestoreFailedError, restoreOrRollBack } from "./restore.ts";
import { DEFAULT_MAX_FILE_BYTES, type StagedTree, stageWorkTree } from "./stage.ts";
import {
  appendEntry,
  insertEntry,
  pushEntry,
  RestoreInterruptedError,
  readState,
  type SnapshotEntry,
  settled,
  targetOf,
  writeState,
} from "./state.ts";
import type { CaptureResult, RestoreResult, Snapshots, SnapshotsOptions } from "./types.ts";

const asFreecodeError = (error: unknown) =>
  error instanceof FreecodeError
    ? error
    : new FreecodeError("internal", `snapshot failed: ${(error as Error)?.message ?? String(error)}`, {
        cause: error,
      });

const elapsed = (t0: number) => Math.round(performance.now() - t0);

const skipReason = (error: unknown) =>
  error instanceof GitMissingError
    ? "git_missing"
    : error instanceof ProjectInHomeError
      ? "project_in_home"
      : error instanceof RestoreInterruptedError
        ? "restore_interrupted"
        : "capture_failed";

function newEntry(staged: StagedTree, commit: string, entryId?: string): SnapshotEntry {
  return {
    tree: staged.tree,
    commit,
    ...(entryId === undefined ? {} : { entryId }),
    at: Date.now(),
    ...(staged.skipped.length ? { skipped: staged.skipped } : {}),
  };
}

/** The snapshots of one session's project work tree (nothing is created until the first capture). */
export function createSnapshots(options: SnapshotsOptions): Snapshots {
  const id = v.safeParse(SessionIdSchema, options.sessionId);
  if (!id.success) throw badInput(`bad session id: ${v.summarize(id.issues)}`);
  const projectPath = canonicalProject(options.projectPath);
  const repo: SnapshotRepo = snapshotRepo(options.home, projectPath, options.sessionId, options.git);
  const maxFileBytes = options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
  const load = () => readState(repo.statePath, repo.sessionId, projectPath);
  const emit = async (events: EventInput[]) => {
    for (const e of events) await options.record?.(e);
  };
  const locked = async <T>(fn: () => Promise<T>) => {
    // Before the session lock, whose file would be the first thing created in the home.
    if (repo.homeAbove) throw new ProjectInHomeError(repo.projectPath, repo.homeAbove);
    // The store (and our state file) first, under the store lock alone: a lock is never waited for
    // holding another (a process holding the store lock that waited for a session lock, whose holder
    // waited for the store lock, blocked both until the timeout). Should a forget of this session
    // remove them before the session lock is ours, they are made again.
    for (;;) {
      await ensureRepo(repo);
      // Callers of this process take turns (parallel tool calls); other processes wait for the file.
      const done = await withLock(repo.lockPath, async () => {
        if (!repoExists(repo)) return undefined;
        await clearStaleGitLocks(repo.place, repo.ref); // left by a git killed mid-call
        return { value: await fn() };
      });
      if (done) return done.value;
    }
  };

  async function capture(entryId?: string): Promise<CaptureResult> {
    const t0 = performance.now();
    let outcome: { staged: StagedTree; isNew: boolean };
    try {
      outcome = await locked(async () => {
        const state = load();
        if (state.restoring) throw new RestoreInterruptedError(repo.sessionId, state, state.restoring);
        const staged = await stageWorkTree(repo, maxFileBytes);
        const isNew = state.entries[state.position]?.tree !== staged.tree;
        if (isNew) {
          const commit = await keepTree(repo, staged.tree, entryId ? `snapshot ${entryId}` : "snapshot");
          writeState(repo.statePath, pushEntry(state, newEntry(staged, commit, entryId)));
        }
        return { staged, isNew };
      });
    } catch (error) {
      const reason = skipReason(error);
      await emit([{ type: "checkpoint.skipped", reason }]);
      return { captured: false, reason, error: asFreecodeError(error) };
    }
    const durationMs = elapsed(t0);
    const snapshot = outcome.staged.tree;
    await emit([{ type: "checkpoint.captured", snapshot, durationMs, ...(entryId ? { entryId } : {}) }]);
    return {
      captured: true,
      snapshot,
      ...(entryId ? { entryId } : {}),
      isNew: outcome.isNew,
      skippedFiles: outcome.staged.skipped,
      durationMs,
    };
  }

  async function walk(direction: "undo" | "redo", dryRun: boolean): Promise<RestoreResult> {
    const t0 = performance.now();
    const events: EventInput[] = [];
    const run = async () => {
      let state = load();
      if (!state.entries[state.position])
        throw new FreecodeError(
          "conflict",
          `session ${repo.sessionId} has no snapshots: nothing to ${direction}`,
        );
      const resumed = state.restoring;
      if (resumed && resumed.direction !== direction)
        throw new RestoreInterruptedError(repo.sessionId, state, resumed);
      const staged = await stageWorkTree(repo, maxFileBytes);
      // An interrupted restore is run again from where it stopped: what differs is its own work.
      const target = resumed ? resumed.to : targetOf(state, staged.tree, direction);
      const to = state.entries[target]!;
      const here = state.entries[state.position]!;
      const protect = { standing: staged.skipped, also: [...(to.skipped ?? []), ...repo.own] };
      const files = await planRestore(repo, staged.tree, to.tree, protect, direction);
      // Changes no snapshot holds are kept before the work tree is touched. An undo over them inserts
      // them just after the position (`insertEntry`: nothing dropped or reordered), the position while
      // the restore runs; the target is at or before the old position, so one redo brings them back. An interrupted restore left the work tree
      // between two snapshots; anything else in it was written since (captures were refused
      // meanwhile): it is kept as the last snapshot, nothing dropped, and redo reaches it. Kept
      // snapshots are marked so: a later capture moves them before itself, never drops them.
      const dirty = resumed
        ? !(await isPartOf(repo, staged.tree, here.tree, to.tree))
        : direction === "undo" && staged.tree !== here.tree;
      const autosaved = dirty ? staged.tree : undefined;
      if (!dryRun) {
        const position = state.position; // where a rolled-back undo leaves it (the target is at or before it)
        const restoring = { to: target, direction };
        const keep = async (tree: StagedTree, last: boolean) => {
          const commit = await keepTree(repo, tree.tree, "snapshot (kept before a restore)");
          // Kept: never dropped from the list (the message says it was kept).
          const entry: SnapshotEntry = { ...newEntry(tree, commit), kept: true };
          state = last ? appendEntry(state, entry) : insertEntry(state, entry);
          events.push({ type: "checkpoint.captured", snapshot: tree.tree, durationMs: elapsed(t0) });
          // On disk before the work tree is touched (again).
          writeState(repo.statePath, { ...state, restoring });
        };
        if (autosaved) await keep(staged, resumed !== undefined);
        else writeState(repo.statePath, { ...state, restoring });
        try {
          await restoreOrRollBack(repo, {
            direction,
            from: staged.tree,
            to: to.tree,
            changes: files,
            skipped: staged.skipped,
            here: state.entries[state.position]!.tree,
            resumed: resumed !== undefined,
            keep: (now) => keep(now, true),
            maxFileBytes,
          });
        } catch (error) {
          // Rolled back, a new restore never happened: the position is where it was (an autosave stays
          // listed after it, nothing dropped); a resumed one is still as interrupted as it was.
          if (error instanceof RestoreFailedError && error.rolledBack && !resumed)
            writeState(repo.statePath, settled(state, position));
          throw error;
        }
        writeState(repo.statePath, settled(state, target));
      }
      return { to, target, files, autosaved, resumed: resumed !== undefined };
    };
    let result: Awaited<ReturnType<typeof run>>;
    try {
      result = await locked(run);
    } catch (error) {
      await emit(events); // an autosave made before the restore failed is still a capture
      throw error;
    }
    const durationMs = elapsed(t0);
    const { to, files } = result;
    const entry = to.entryId === undefined ? {} : { entryId: to.entryId };
    if (!dryRun)
      events.push({
        type: "checkpoint.restored",
        snapshot: to.tree,
        ...entry,
        filesChanged: files.length,
        durationMs,
      });
    await emit(events);
    return {
      direction,
      dryRun,
      snapshot: to.tree,
      ...entry,
      position: result.target,
      filesChanged: files.length,
      files,
      ...(result.autosaved ? { autosaved: result.autosaved } : {}),
      ...(result.resumed ? { resumed: true } : {}),
      durationMs,
    };
  }

  return {
    sessionId: repo.sessionId,
    projectPath,
    capture,
    undo: (o = {}) => walk("undo", o.dryRun === true),
    redo: (o = {}) => walk("redo", o.dryRun === true),
    list() {
      const state = load();
      return {
        sessionId: repo.sessionId,
        projectPath,
        location: repo.root,
        position: state.position,
        snapshots: state.entries.map((e, index) => ({
          index,
          snapshot: e.tree,
          commit: e.commit,
          ...(e.entryId === undefined ? {} : { entryId: e.entryId }),
          at: e.at,
          current: index === state.position,
          ...(e.skipped ? { skippedFiles: e.skipped } : {}),
          ...(e.kept ? { kept: true } : {}),
        })),
        ...(state.restoring
          ? {
              interrupted: {
                direction: state.restoring.direction,
                to: state.restoring.to,
                snapshot: state.entries[state.restoring.to]!.tree,
              },
            }
          : {}),
      };
    },
  };
}
