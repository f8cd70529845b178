/**
 * Keeping the thread store in step with the sessions. A thread is re-derived only when its source
 * moved: the meta changed (its hash covers updatedAt, messageCount, title, status, goal) or the
 * rollout has events past the last `seq` folded in. Threads whose session is gone are dropped. A
 * session written by another process therefore shows up at the next refresh, with no manual step.
 */
import type { StorageAdapter } from "../storage/contract.ts";
import type { SessionMeta } from "../storage/records.ts";
import { threadDeriver } from "./derive.ts";
import { searchRows } from "./search-text.ts";
import type { ThreadStore } from "./store.ts";
import type { DerivedThread, ThreadSource } from "./types.ts";

export interface RefreshStats {
  /** Sessions (and rollout-only logs) seen. */
  seen: number;
  /** Threads re-derived. */
  updated: number;
  removed: number;
}

const CHUNK = 200;

const hashMeta = (meta: SessionMeta | undefined) => (meta ? Bun.hash(JSON.stringify(meta)).toString(36) : "");

/**
 * Derive one thread and its search rows, with the source it came from. The rollout's events are
 * streamed into the derivation, not gathered: a session of 1.3 M events held them all (GBs).
 */
export async function deriveFromAdapter(adapter: StorageAdapter, id: string, meta?: SessionMeta) {
  const m = meta ?? (await adapter.getMeta(id));
  const { messages } = m ? await adapter.readMessages(id) : { messages: [] };
  const deriver = threadDeriver(id, m, messages);
  for await (const r of adapter.readEvents(id)) if (r.event) deriver.add(r.event);
  const derived: DerivedThread = deriver.finish();
  const source: ThreadSource = {
    updatedAt: m?.updatedAt ?? 0,
    messageCount: m?.messageCount ?? 0,
    lastSeq: deriver.lastSeq,
    metaHash: hashMeta(m),
  };
  return { derived, rows: searchRows(derived, messages), source };
}

async function hasEventsAfter(adapter: StorageAdapter, id: string, seq: number): Promise<boolean> {
  for await (const _ of adapter.readEvents(id, { fromSeq: seq + 1 })) return true;
  return false;
}

/** Bring the thread store up to date with the adapter; `full` re-derives every thread. */
export async function refreshThreads(
  adapter: StorageAdapter,
  store: ThreadStore,
  full = false,
): Promise<RefreshStats> {
  const metas = new Map((await adapter.listSessions({ all: true })).items.map((m) => [m.id, m]));
  const logs = new Set(await adapter.listEventLogs());
  const known = full ? new Map<string, ThreadSource>() : store.sources();
  const stale: string[] = [];
  for (const id of new Set([...metas.keys(), ...logs])) {
    const old = known.get(id);
    const meta = metas.get(id);
    if (!old || old.metaHash !== hashMeta(meta)) stale.push(id);
    else if (logs.has(id) ? await hasEventsAfter(adapter, id, old.lastSeq) : old.lastSeq > 0) stale.push(id);
  }
  const gone = full ? [] : [...known.keys()].filter((id) => !metas.has(id) && !logs.has(id));
  if (full) store.clear();
  // In chunks: memory stays bounded however many sessions changed, each chunk one transaction.
  for (let i = 0; i < stale.length; i += CHUNK) {
    const derived: Awaited<ReturnType<typeof deriveFromAdapter>>[] = [];
    for (const id of stale.slice(i, i + CHUNK))
      derived.push(await deriveFromAdapter(adapter, id, metas.get(id)));
    store.batch(() => {
      for (const d of derived) store.put(d.derived, d.rows, d.source);
    });
  }
  if (gone.length) {
    store.batch(() => {
      for (const id of gone) store.remove(id);
    });
  }
  return {
    seen: metas.size + [...logs].filter((id) => !metas.has(id)).length,
    updated: stale.length,
    removed: gone.length,
  };
}
