/**
 * Keeping the thread store in step with the sessions. A thread is re-derived only when its source
 * moved: the meta changed (its hash covers updatedAt, messageCount, title, status, goal) or the
 * rollout log did (its change stamp moved, or, for an adapter without stamps, it has events past the
 * last `seq` folded in). Threads whose session is gone are dropped. A session written by another
 * process therefore shows up at the next refresh, with no manual step.
 */
import { FreecodeError } from "../errors.ts";
import type { StorageAdapter } from "../storage/contract.ts";
import { hasEventLog } from "../storage/has-event-log.ts";
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
  /** Sessions whose stored data cannot be read (a damaged meta.json), left as they were: the rest
   * is searched (one such session failed every search and `store reindex`). */
  unreadable: { id: string; message: string }[];
}

const CHUNK = 200;

const hashMeta = (meta: SessionMeta | undefined) => (meta ? Bun.hash(JSON.stringify(meta)).toString(36) : "");

/**
 * Derive one thread and its search rows, with the source it came from. The rollout's events are
 * streamed into the derivation, not gathered: a session of 1.3 M events held them all (GBs).
 */
export async function deriveFromAdapter(adapter: StorageAdapter, id: string, meta?: SessionMeta) {
  // Stamped before reading: an append made while this reads moves the stamp past the one kept.
  const eventStamp = await adapter.eventLogStamp?.(id);
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
    ...(eventStamp !== undefined ? { eventStamp } : {}),
  };
  return { derived, rows: searchRows(derived, messages), source };
}

export type Derived = Awaited<ReturnType<typeof deriveFromAdapter>>;

/**
 * `deriveFromAdapter`, or undefined when the session vanished between the listing and the read (a
 * purge in another process): its meta is gone, or, for a rollout-only one, its log.
 */
export async function deriveUnlessGone(
  adapter: StorageAdapter,
  id: string,
  meta: SessionMeta | undefined,
): Promise<Derived | undefined> {
  try {
    return await deriveFromAdapter(adapter, id, meta);
  } catch (error) {
    // A meta that cannot be read says the same again: the first error is the one to tell.
    if (await adapter.getMeta(id).catch(() => true)) throw error;
    if (meta === undefined && (await hasEventLog(adapter, id))) throw error;
    return undefined;
  }
}

/** Events (not unreadable lines: a log with a bad line would be re-derived at every refresh). */
async function hasEventsAfter(adapter: StorageAdapter, id: string, seq: number): Promise<boolean> {
  for await (const r of adapter.readEvents(id, { fromSeq: seq + 1 })) if (r.event) return true;
  return false;
}

/** Whether the rollout log of a thread stored from `old` moved; a stamp spares reading it. */
async function logMoved(adapter: StorageAdapter, id: string, old: ThreadSource): Promise<boolean> {
  if (adapter.eventLogStamp && old.eventStamp !== undefined)
    return (await adapter.eventLogStamp(id)) !== old.eventStamp;
  try {
    return await hasEventsAfter(adapter, id, old.lastSeq);
  } catch {
    // Unreadable now (removed meanwhile?): re-deriving it says what became of it.
    return true;
  }
}

/**
 * Bring the thread store up to date with the adapter; `full` re-derives every thread. Threads are
 * replaced in place and the gone ones removed last, so a search running meanwhile sees every
 * thread (old or new), never a half-built store.
 */
export async function refreshThreads(
  adapter: StorageAdapter,
  store: ThreadStore,
  full = false,
): Promise<RefreshStats> {
  const metas = new Map((await adapter.listSessions({ all: true })).items.map((m) => [m.id, m]));
  const logs = new Set(await adapter.listEventLogs());
  const known = store.sources();
  const stale: string[] = [];
  for (const id of new Set([...metas.keys(), ...logs])) {
    const old = known.get(id);
    const meta = metas.get(id);
    if (full || !old || old.metaHash !== hashMeta(meta)) stale.push(id);
    else if (logs.has(id) ? await logMoved(adapter, id, old) : old.lastSeq > 0) stale.push(id);
  }
  const gone = [...known.keys()].filter((id) => !metas.has(id) && !logs.has(id));
  const unreadable: RefreshStats["unreadable"] = [];
  let updated = 0;
  // In chunks: memory stays bounded however many sessions changed, each chunk one transaction.
  for (let i = 0; i < stale.length; i += CHUNK) {
    const derived: Derived[] = [];
    for (const id of stale.slice(i, i + CHUNK)) {
      let d: Derived | undefined;
      try {
        d = await deriveUnlessGone(adapter, id, metas.get(id));
      } catch (error) {
        if (!(error instanceof FreecodeError && error.code === "bad_input")) throw error;
        unreadable.push({ id, message: error.oneLine });
        continue;
      }
      if (d) derived.push(d);
      else if (known.has(id)) gone.push(id);
    }
    store.batch(() => {
      for (const d of derived) store.put(d.derived, d.rows, d.source);
    });
    updated += derived.length;
  }
  if (gone.length) {
    store.batch(() => {
      for (const id of gone) store.remove(id);
    });
  }
  // A purged session leaves nothing searchable behind in the file; nor does a full rebuild (`store
  // reindex`) of what a `--redact` re-import replaced.
  if (gone.length > 0 || full) store.scrub?.();
  return {
    seen: metas.size + [...logs].filter((id) => !metas.has(id)).length,
    updated,
    removed: gone.length,
    unreadable,
  };
}
