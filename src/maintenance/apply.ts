/**
 * Carrying out a gc plan. Each session is first claimed under its own lock: if it is still as the
 * plan saw it (same `updatedAt` and message count, not running, not pinned), it is marked deleted,
 * which also keeps a writer from marking it running (`markRunning` leaves deleted sessions alone);
 * then it is purged (meta, messages, context cache, rollout log). A session that changed since the
 * plan, or is already gone, is skipped; any other error is recorded and the rest still go ahead.
 * A session whose purge failed after its claim is left soft-deleted: `session restore` brings it back.
 */
import { conflict, FreecodeError } from "../errors.ts";
import { deletedMeta, purgeSession, restoreSession } from "../session/lifecycle.ts";
import type { StorageAdapter } from "../storage/contract.ts";
import type { SessionMeta } from "../storage/records.ts";
import type { GcRemoval } from "./plan.ts";
import { isProtected } from "./plan.ts";

export type GcResult = "removed" | "skipped" | "failed";

export interface GcApplied extends GcRemoval {
  result: GcResult;
  /** Why it was skipped or what failed. */
  error?: string;
}

export interface GcApplyOutcome {
  applied: GcApplied[];
  /** The first failure, for the exit code (undefined when nothing failed). */
  firstError?: unknown;
}

/** Why `meta` may no longer be removed as planned, or undefined if it still may. */
function changedSince(planned: GcRemoval, meta: SessionMeta): string | undefined {
  if (isProtected(meta)) return `it is ${meta.pinned ? "pinned" : meta.status} now`;
  if (meta.updatedAt !== planned.updatedAt || meta.messageCount !== planned.messageCount)
    return "it changed since gc looked at it";
  // Unarchive and restore keep `updatedAt`: the status tells (an archived session past its age was
  // planned; an idle one is not that session any more).
  if (meta.status !== planned.status) return `it is ${meta.status} now (was ${planned.status})`;
  return undefined;
}

/** Mark the session deleted if it is still as planned; a `conflict` saying why not otherwise. */
function claim(adapter: StorageAdapter, planned: GcRemoval): Promise<SessionMeta> {
  return adapter.updateMeta(planned.id, (meta) => {
    const why = changedSince(planned, meta);
    if (why) throw conflict(why);
    // Remembered as `session delete` remembers it: an expired archive given back (a conflict, a
    // purge that failed) unarchives to the status it had before the archive, not idle.
    return deletedMeta(meta);
  });
}

const skippable = (e: unknown) =>
  e instanceof FreecodeError && (e.code === "conflict" || e.code === "not_found");

/** Remove every session of `removals` that is still as planned. */
export async function applyRemovals(adapter: StorageAdapter, removals: GcRemoval[]): Promise<GcApplyOutcome> {
  const applied: GcApplied[] = [];
  let firstError: unknown;
  for (const planned of removals) {
    let claimed: SessionMeta;
    try {
      claimed = await claim(adapter, planned);
    } catch (error) {
      if (!skippable(error)) {
        firstError ??= error;
        applied.push({ ...planned, result: "failed", error: (error as Error).message });
      } else applied.push({ ...planned, result: "skipped", error: (error as Error).message });
      continue;
    }
    try {
      // Checked again under the purge's own lock: an append another process made after the claim
      // (acknowledged: it was accepted on the deleted session) was erased with the rest.
      await purgeSession(adapter, planned.id, {
        unless: (m) =>
          m.status !== "deleted" ||
          m.messageCount !== claimed.messageCount ||
          m.updatedAt !== claimed.updatedAt
            ? "it changed since gc looked at it"
            : undefined,
      });
      applied.push({ ...planned, result: "removed" });
    } catch (error) {
      if (error instanceof FreecodeError && error.code === "conflict") {
        // Given back the status it had before the claim (one the user deleted stays deleted).
        // (`restore`: one no longer deleted is left as it is.)
        if (planned.status !== "deleted") await restoreSession(adapter, planned.id).catch(() => {});
        applied.push({ ...planned, result: "skipped", error: error.message });
        continue;
      }
      firstError ??= error;
      const message = `${(error as Error).message} (left soft-deleted: session restore ${planned.id} undoes it)`;
      applied.push({ ...planned, result: "failed", error: message });
    }
  }
  return { applied, firstError };
}
