/**
 * Run status and crash recovery. A session is `running` while a process is working on it; the meta
 * then names that process (`owner`: pid, start time, host). A process that dies leaves it
 * `running`: on start, `recoverCrashed` turns every such session whose owner is gone into
 * `interrupted`, so a crash is never mistaken for work in progress.
 */
import { hostname } from "node:os";
import type { StorageAdapter } from "../storage/contract.ts";
import type { SessionMeta } from "../storage/records.ts";
import { isProcessAlive, processStartTime } from "../util/lock.ts";

/** This process, as recorded in `owner`. */
export function selfOwner(): NonNullable<SessionMeta["owner"]> {
  return { pid: process.pid, start: processStartTime(process.pid), host: hostname() };
}

/** Mark a session `running` by this process (no-op for archived/deleted sessions). */
export function markRunning(store: StorageAdapter, id: string): Promise<SessionMeta> {
  return store.updateMeta(id, (m) =>
    m.status === "archived" || m.status === "deleted" ? m : { ...m, status: "running", owner: selfOwner() },
  );
}

/** Back to `idle` when the work finished normally. */
export function markIdle(store: StorageAdapter, id: string): Promise<SessionMeta> {
  return store.updateMeta(id, (m) => {
    const { owner: _, ...rest } = m;
    return m.status === "running" ? { ...rest, status: "idle" } : rest;
  });
}

/** Whether the process recorded as the session's owner is gone (on this host). */
export function ownerIsGone(meta: SessionMeta): boolean {
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
