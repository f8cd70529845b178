/**
 * `freecode gc` as a library call: take stock, plan, and (when enforcing) remove. Enforcing runs under
 * the home's `state/gc.lock`, so two gc runs never remove from one plan twice or interleave; plan and
 * removal happen inside it, and each removal re-checks its session under the session's own lock
 * (see `applyRemovals`). A dry run or a warning takes no lock and writes nothing.
 */
import { statSync } from "node:fs";
import { join } from "node:path";
import { homePaths } from "../home.ts";
import { recoverCrashed } from "../session/status.ts";
import { forgetSet, type SnapshotSet, snapshotSets } from "../snapshot/forget.ts";
import { hexId } from "../snapshot/repo.ts";
import type { StorageAdapter } from "../storage/contract.ts";
import { ensureDir } from "../util/atomic.ts";
import { withLock } from "../util/lock.ts";
import { applyRemovals, type GcResult } from "./apply.ts";
import type { SizeMethod } from "./disk-usage.ts";
import { takeInventory } from "./inventory.ts";
import { type GcPlan, type GcRemoval, planGc, type StoreTotals } from "./plan.ts";
import type { GcPolicy } from "./policy.ts";

export interface GcOptions {
  /** The freecode home (where `state/gc.lock` lives). */
  home: string;
  policy: GcPolicy;
  /** Plan only, whatever the mode. */
  dryRun?: boolean;
  now?: number;
  /** How long to wait for another gc's lock (default 10 s). */
  lockTimeoutMs?: number;
  /** Also remove the snapshot sets of sessions this store does not hold (see `GcReport.snapshots`). */
  pruneSnapshots?: boolean;
}

/** A planned removal and what became of it (`would-remove` when nothing was carried out). */
export interface GcItem extends GcRemoval {
  result: "would-remove" | GcResult;
  /** Why it was skipped or what failed. */
  error?: string;
}

/** What a gc run planned and did: the shape `freecode gc --json` prints. */
export interface GcReport {
  policy: GcPolicy;
  /** Whether removals were carried out (mode `enforce` and not a dry run). */
  enforced: boolean;
  dryRun: boolean;
  sizeMethod: SizeMethod;
  /** Every session the policy removes, in the order the rules took them. */
  sessions: GcItem[];
  before: StoreTotals;
  /** What remains: once enforced, counting only what was removed; else once the plan is done. */
  after: StoreTotals;
  /** Limits the plan cannot meet because what is left is running or pinned. */
  unmet: string[];
  /**
   * Git snapshot sets (`session snapshots`): `removed`, those of the sessions this run removed (a
   * session's snapshots go with it; not enforced: would remove); `unstored`, sets of sessions this store does not hold, past
   * the empty-shell grace — reported, and removed only with `pruneSnapshots` (another store in the
   * same home, or an agent that snapshots with the library before it stores anything, may own
   * them); `failed`, sets that could not be removed, with why.
   */
  snapshots: { removed: string[]; unstored: string[]; failed: { session: string; error: string }[] };
}

/** The outcome of `runGc`: the report, and the first removal that failed (for the exit code). */
export interface GcOutcome {
  report: GcReport;
  firstError?: unknown;
}

/** The lock that serialises gc runs on a home. */
export const gcLockPath = (home: string) => join(homePaths(home).state, "gc.lock");

/** Plan a gc of `adapter` and, when the policy's mode is `enforce` and this is no dry run, carry it out. */
export async function runGc(adapter: StorageAdapter, options: GcOptions): Promise<GcOutcome> {
  const dryRun = options.dryRun === true;
  const plan = async () => {
    const inventory = await takeInventory(adapter);
    return { plan: planGc(inventory, options.policy, options.now), sizeMethod: inventory.sizeMethod };
  };
  const report = (
    p: GcPlan,
    sizeMethod: SizeMethod,
    sessions: GcItem[],
    enforced: boolean,
    snapshots: GcReport["snapshots"],
  ): GcReport => ({
    policy: p.policy,
    enforced,
    dryRun,
    sizeMethod,
    sessions,
    before: p.before,
    after: p.after,
    unmet: p.unmet,
    snapshots,
  });
  const now = options.now ?? Date.now();
  /** Snapshot sets of the sessions in `of`, and those of sessions not stored, past the grace. */
  const setsOf = async (of: Set<string>) => {
    const mine: SnapshotSet[] = [];
    const unstored: SnapshotSet[] = [];
    for (const set of snapshotSets(options.home)) {
      if (of.has(set.sessionId)) mine.push(set);
      else if (
        (await adapter.getMeta(set.sessionId)) === undefined &&
        now - snapshotTime(set) > options.policy.emptyGraceMs
      )
        unstored.push(set);
    }
    return { mine, unstored };
  };
  const ids = (sets: SnapshotSet[]) => [...new Set(sets.map((s) => s.sessionId))];
  if (dryRun || options.policy.mode !== "enforce") {
    const { plan: p, sizeMethod } = await plan();
    const items = p.removals.map((r) => ({ ...r, result: "would-remove" as const }));
    const { mine, unstored } = await setsOf(new Set(p.removals.map((r) => r.id)));
    // Not enforced: `removed` names the sets that would go, as `would-remove` does for sessions —
    // with --prune-snapshots, those of sessions this store does not hold too, as enforce does.
    const snapshots = options.pruneSnapshots
      ? { removed: ids([...mine, ...unstored]), unstored: [], failed: [] }
      : { removed: ids(mine), unstored: ids(unstored), failed: [] };
    return { report: report(p, sizeMethod, items, false, snapshots) };
  }
  ensureDir(homePaths(options.home).state); // a missing directory would cost the lock a retry sleep
  return withLock(
    gcLockPath(options.home),
    async () => {
      // As `session list` does first: a session left running by a process that is gone is
      // interrupted (gc kept such a session for running, never evicted, until a listing ran).
      await recoverCrashed(adapter);
      const { plan: p, sizeMethod } = await plan();
      const { applied, firstError } = await applyRemovals(adapter, p.removals);
      const removed = applied.filter((a) => a.result === "removed");
      const after = {
        sessions: p.before.sessions - removed.length,
        bytes: removed.reduce((n, a) => n - a.bytes, p.before.bytes),
      };
      const { mine, unstored } = await setsOf(new Set(removed.map((a) => a.id)));
      const snapshots: GcReport["snapshots"] = { removed: [], unstored: ids(unstored), failed: [] };
      let error = firstError;
      for (const set of options.pruneSnapshots ? [...mine, ...unstored] : mine) {
        try {
          await forgetSet(set);
          if (!snapshots.removed.includes(set.sessionId)) snapshots.removed.push(set.sessionId);
        } catch (e) {
          error ??= e;
          snapshots.failed.push({ session: set.sessionId, error: (e as Error).message });
        }
      }
      if (options.pruneSnapshots)
        snapshots.unstored = snapshots.unstored.filter((id) => !snapshots.removed.includes(id));
      return { report: { ...report(p, sizeMethod, applied, true, snapshots), after }, firstError: error };
    },
    options.lockTimeoutMs,
  );
}

/** When a snapshot set was last written (its state file), 0 when it cannot be told. */
function snapshotTime(set: SnapshotSet): number {
  const hex = hexId(set.sessionId);
  try {
    return statSync(join(set.root, "sessions", `${hex}.json`)).mtimeMs;
  } catch {
    return 0;
  }
}
