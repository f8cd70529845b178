/**
 * What gc plans from: every stored session (soft-deleted ones included) with its size and whether
 * it really is empty, and the bytes of rollout logs that belong to no session.
 */

import { ownerIsGone } from "../session/status.ts";
import type { StorageAdapter } from "../storage/contract.ts";
import type { SessionMeta } from "../storage/records.ts";
import { measureUsage, type SizeMethod } from "./disk-usage.ts";

export interface StoredSession {
  meta: SessionMeta;
  bytes: number;
  /** No messages — the meta says none and the log holds none (not even an unreadable line) — and
   * no recorded work in its rollout log (see `recordsWork`). */
  empty: boolean;
}

export interface Inventory {
  sessions: StoredSession[];
  /** Bytes of rollout logs with no session (counted in the store's size; gc does not remove them). */
  otherBytes: number;
  sizeMethod: SizeMethod;
}

/** Events that say a session began or ended, and nothing of what it did. */
const BOOKENDS = new Set(["session.started", "session.ended"]);

/**
 * Whether a session's rollout log holds anything but its start and end (a line it cannot read
 * counts: it may hold work). An imported session whose every message a rewind took back keeps its
 * model and tool calls there, and `usage`, `trace` and eval count them: gc took it for an empty
 * shell and removed the log with the session, and the next import made it again.
 */
async function recordsWork(adapter: StorageAdapter, id: string): Promise<boolean> {
  for await (const read of adapter.readEvents(id))
    if (!read.event || !BOOKENDS.has(read.event.type)) return true;
  return false;
}

/** Take stock of `adapter`'s sessions. */
export async function takeInventory(adapter: StorageAdapter): Promise<Inventory> {
  const { items } = await adapter.listSessions({ all: true });
  const usage = await measureUsage(
    adapter,
    items.map((m) => m.id),
  );
  const sessions: StoredSession[] = [];
  for (const stored of items) {
    // Left running by a process that is gone: interrupted, as crash recovery makes it (an enforced
    // gc makes it so first; a warning one only plans so, writing nothing).
    const meta: SessionMeta =
      stored.status === "running" && ownerIsGone(stored)
        ? { ...stored, status: "interrupted", owner: undefined }
        : stored;
    // The count is checked against the log: a meta whose counter lags its messages is not empty.
    let empty = false;
    if (meta.messageCount === 0) {
      const read = await adapter.readMessages(meta.id);
      empty =
        read.messages.length === 0 && read.issues.length === 0 && !(await recordsWork(adapter, meta.id));
    }
    sessions.push({ meta, bytes: usage.bytes.get(meta.id) ?? 0, empty });
    usage.bytes.delete(meta.id);
  }
  let otherBytes = 0;
  for (const n of usage.bytes.values()) otherBytes += n;
  return { sessions, otherBytes, sizeMethod: usage.method };
}
