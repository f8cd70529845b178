/**
 * The shapes of the snapshots API (`snapshots.ts`): what `createSnapshots` takes, what a capture,
 * an undo or redo, and a listing give back.
 */
import type { FreecodeError } from "../errors.ts";
import type { EventInput } from "../rollout/events.ts";
import type { FileChange } from "./restore.ts";

export interface SnapshotsOptions {
  /** The freecode home: snapshots live in `<home>/snapshots/<project key>/`. */
  home: string;
  /** The project work tree (need not be a git repository). */
  projectPath: string;
  sessionId: string;
  /** Where `checkpoint.*` events go, e.g. `recorder.record` (omitted: nothing is recorded). */
  record?: (event: EventInput) => unknown;
  /** Files above this size are left out of snapshots (default 8 MiB). */
  maxFileBytes?: number;
  /** The git binary (default `git` on PATH). */
  git?: string;
}

/** A capture never throws for git's sake: it says why it took no snapshot instead. */
export type CaptureResult =
  | {
      captured: true;
      /** The git tree id. */
      snapshot: string;
      entryId?: string;
      /** False when the work tree equals the current snapshot (no new position). */
      isNew: boolean;
      /** Files left out for their size, and nested repositories (`dir/`). */
      skippedFiles: string[];
      durationMs: number;
    }
  | {
      captured: false;
      /**
       * `project_in_home`: the project is the freecode home or inside it; `restore_interrupted`: a
       * restore must be finished first (run it again).
       */
      reason: "git_missing" | "capture_failed" | "project_in_home" | "restore_interrupted";
      error: FreecodeError;
    };

export interface RestoreResult {
  direction: "undo" | "redo";
  dryRun: boolean;
  /** The tree the work tree now matches (or would match, with `dryRun`). */
  snapshot: string;
  entryId?: string;
  /** Its index in the list. */
  position: number;
  filesChanged: number;
  files: FileChange[];
  /** Changes no snapshot held were captured first (this tree), so `redo` brings them back. */
  autosaved?: string;
  /** It finished a restore that had been interrupted (see `SnapshotState.restoring`). */
  resumed?: boolean;
  durationMs: number;
}

export interface SnapshotListItem {
  index: number;
  snapshot: string;
  commit: string;
  entryId?: string;
  at: number;
  current: boolean;
  skippedFiles?: string[];
  /** Kept by a restore (changes no snapshot held): never dropped from the list. */
  kept?: boolean;
}

export interface SnapshotList {
  sessionId: string;
  projectPath: string;
  /** Our git directory's parent, `<home>/snapshots/<project key>`. */
  location: string;
  position: number;
  snapshots: SnapshotListItem[];
  /**
   * A restore to snapshot `to` (index) was interrupted: the work tree is between the current
   * snapshot and that one; running `direction` again finishes it (captures are refused until then).
   */
  interrupted?: { direction: "undo" | "redo"; to: number; snapshot: string };
}

export interface Snapshots {
  readonly sessionId: string;
  readonly projectPath: string;
  /** Snapshot the work tree and record `checkpoint.captured` (or `checkpoint.skipped`). */
  capture(entryId?: string): Promise<CaptureResult>;
  /** Restore the previous snapshot; `conflict` when there is none. */
  undo(options?: { dryRun?: boolean }): Promise<RestoreResult>;
  /** Restore the next snapshot; `conflict` when there is none or the work tree has uncaptured changes. */
  redo(options?: { dryRun?: boolean }): Promise<RestoreResult>;
  /** The snapshots and the current position (reads the state file). */
  list(): SnapshotList;
}
