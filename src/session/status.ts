/**
 * Run status and crash recovery. A session is `running` while a process is working on it; the meta
 * then names that process (`owner`: pid, start time, host). A process that dies leaves it
 * `running`: on start, `recoverCrashed` turns every such session whose owner is gone into
 * `interrupted`, so a crash is never mistaken for work in progress.
 */
import { hostname } from "node:os";
import { conflict } from "../errors.ts";
import type { StorageAdapter } from "../storage/contract.ts";
import type { SessionMeta } from "../storage/records.ts";
import { isProcessAlive, processStartTime } from "../util/lock.ts";

/** This process, as recorded in `owner`. */
export function selfOwner(): NonNullable<SessionMeta["owner"]> {
  return { pid: process.pid, start: processStartTime(process.pid), host: hostname() };
}

/** Whether `owner` is this process. */
const isSelf = (owner: NonNullable<SessionMeta["owner"]>): boolean => {
  const me = selfOwner();
  return owner.pid === me.pid && owner.host === me.host && owner.start === me.start;
};

/**
 * A `conflict` error when another process that may be alive runs session `m` (on this host and
 * alive, or on another host, which cannot be asked): two writers would each take the session for
 * theirs, and the first to finish would mark the other's work idle.
 */
function refuseOtherOwner(m: SessionMeta, doing: string): void {
  const o = m.owner;
  if (m.status !== "running" || !o || isSelf(o) || ownerIsGone(m)) return;
  throw conflict(
    `cannot ${doing} session ${m.id}: it is running in process ${o.pid} on ${o.host}` +
      " (if that process is gone from another host, mark the session interrupted first)",
  );
}

/**
 * Mark a session `running` by this process (no-op for archived/deleted sessions). A session another
 * live process runs is refused (`conflict`); one whose owner is gone is taken over.
 */
export function markRunning(store: StorageAdapter, id: string): Promise<SessionMeta> {
  return store.updateMeta(id, (m) => {
    if (m.status === "archived" || m.status === "deleted") return m;
    refuseOtherOwner(m, "mark running");
    return { ...m, status: "running", owner: selfOwner() };
  });
}

/** Back to `idle` when the work finished normally; refused while another live process runs it. */
export function markIdle(store: StorageAdapter, id: string): Promise<SessionMeta> {
  return store.updateMeta(id, (m) => {
    refuseOtherOwner(m, "mark idle");
    const { owner: _, ...rest } = m;
    if (m.status === "running") return { ...rest, status: "idle" };
    // Archived or deleted while it ran: its run finished, so it comes back idle, not interrupted.
    if (m.previousStatus === "running") return { ...rest, previousStatus: "idle" };
    return m.archivedFrom === "running" ? { ...rest, archivedFrom: "idle" } : rest;
  });
}

/** Whether the process recorded as the session's owner is gone (on this host). */
export function ownerIsGone(meta: Pick<SessionMeta, "owner">): boolean {
  const o = meta.owner;
  if (!o) return true; // running with no owner: written by something that cannot be asked
  if (o.host !== hostname()) return false; // another machine: cannot tell, leave it
  return !isProcessAlive(o.pid, o.start);
}

/** Turn sessions left `running` by dead processes into `interrupted`; returns their ids. */
export async function recoverCrashed(store: StorageAdapter): Promise<string[]> {
  const { items } = await store.listSessions({ status: "running" });
  const recovered: string[] = [];
  for (const meta of items) {
    if (!ownerIsGone(meta)) continue;
    const after = await store.updateMeta(meta.id, (m) => {
      if (m.status !== "running" || !ownerIsGone(m)) return m; // re-checked under the lock
      const { owner: _, ...rest } = m;
      return { ...rest, status: "interrupted" };
    });
    if (after.status === "interrupted") recovered.push(meta.id);
  }
  return recovered;
}
