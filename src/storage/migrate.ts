/**
 * Copying a whole store from one adapter to another (`freecode store migrate`), losslessly: every
 * session's meta (counters included), messages and context cache, and every rollout log with its
 * event ids, seqs and timestamps. The target must be empty. A verification pass then compares the
 * two stores' counts and a content hash per session; any difference fails the migration.
 */
import { conflict, FreecodeError } from "../errors.ts";
import type { StorageAdapter } from "./contract.ts";
import type { EventDraft, EventRecord } from "./records.ts";

/** Counts and a content hash of a whole store (key order inside records does not matter). */
export interface StoreDigest {
  sessions: number;
  messages: number;
  eventLogs: number;
  events: number;
  contextCaches: number;
  /** One hash over every session's hash, in id order. */
  hash: string;
  perSession: Record<string, string>;
}

/** JSON with object keys sorted, so two adapters that order keys differently hash alike. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

const EVENT_BATCH = 1000;

/**
 * The events of one rollout log, one at a time; an unreadable line fails. Logs are streamed, never
 * held whole: copying and verifying a 525 MB log once held it three times over (5.7 GB).
 */
async function* eventsOf(adapter: StorageAdapter, id: string): AsyncGenerator<EventRecord> {
  for await (const r of adapter.readEvents(id)) {
    if (r.issue) {
      throw new FreecodeError("check_failed", `rollout of ${id} has an unreadable line: ${r.issue.message}`, {
        source: { file: r.issue.file, line: r.issue.line },
      });
    }
    yield r.event;
  }
}

/** Hash every session and rollout log of `adapter`. */
export async function digestStore(adapter: StorageAdapter): Promise<StoreDigest> {
  const metas = (await adapter.listSessions({ all: true })).items;
  const logs = await adapter.listEventLogs();
  const ids = [...new Set([...metas.map((m) => m.id), ...logs])].sort();
  const metaOf = new Map(metas.map((m) => [m.id, m]));
  const digest: StoreDigest = {
    sessions: metas.length,
    messages: 0,
    eventLogs: logs.length,
    events: 0,
    contextCaches: 0,
    hash: "",
    perSession: {},
  };
  const all = new Bun.CryptoHasher("sha256");
  for (const id of ids) {
    const h = new Bun.CryptoHasher("sha256");
    const meta = metaOf.get(id);
    h.update(canonicalJson(meta ?? null));
    if (meta) {
      const { messages } = await adapter.readMessages(id);
      digest.messages += messages.length;
      for (const m of messages) h.update(canonicalJson(m));
      const cache = await adapter.getContextCache(id);
      if (cache !== undefined) digest.contextCaches++;
      h.update(`cache:${canonicalJson(cache ?? null)}`);
    }
    for await (const e of eventsOf(adapter, id)) {
      digest.events++;
      h.update(canonicalJson(e));
    }
    digest.perSession[id] = h.digest("hex");
    all.update(`${id}:${digest.perSession[id]}\n`);
  }
  digest.hash = all.digest("hex");
  return digest;
}

export interface MigrateReport {
  from: { adapter: string; location: string };
  to: { adapter: string; location: string };
  copied: Omit<StoreDigest, "perSession">;
  verified: boolean;
}

/** Copy everything from `source` into the empty `target`, then verify. Throws on any difference. */
export async function migrateStore(
  source: StorageAdapter,
  target: StorageAdapter,
  progress: (done: number, total: number) => void = () => {},
): Promise<MigrateReport> {
  if (
    (await target.listSessions({ all: true, limit: 0 })).total > 0 ||
    (await target.listEventLogs()).length > 0
  ) {
    throw conflict(
      `the target store ${target.name} (${target.location}) is not empty: migrate only into an empty store`,
    );
  }
  const metas = (await source.listSessions({ all: true })).items;
  const logs = await source.listEventLogs();
  const total = metas.length + logs.length;
  let done = 0;
  for (const meta of metas) {
    const { messages, issues } = await source.readMessages(meta.id);
    if (issues.length) {
      const i = issues[0]!;
      throw new FreecodeError(
        "check_failed",
        `session ${meta.id} has ${issues.length} unreadable message line(s): ${i.message}; run \`freecode store verify --repair\` first`,
        {
          source: { file: i.file, line: i.line },
        },
      );
    }
    await target.createSession(meta, messages);
    const cache = await source.getContextCache(meta.id);
    if (cache !== undefined) await target.putContextCache(meta.id, cache);
    progress(++done, total);
  }
  for (const id of logs) {
    let expected = 1;
    let batch: EventDraft[] = [];
    for await (const { seq, ...rest } of eventsOf(source, id)) {
      // seq is assigned by the target from 1: a source with gaps cannot be copied as it is (the
      // migration then fails, as on any difference, with the target store left partial).
      if (seq !== expected++)
        throw new FreecodeError(
          "check_failed",
          `rollout of ${id} has a seq gap at ${seq}; run \`freecode store verify\``,
        );
      batch.push(rest as EventDraft);
      if (batch.length >= EVENT_BATCH) {
        await target.appendEvents(id, batch);
        batch = [];
      }
    }
    if (batch.length > 0) await target.appendEvents(id, batch);
    progress(++done, total);
  }
  const [a, b] = [await digestStore(source), await digestStore(target)];
  const differing = Object.keys(a.perSession).filter((id) => a.perSession[id] !== b.perSession[id]);
  if (a.hash !== b.hash || differing.length) {
    throw new FreecodeError(
      "check_failed",
      `verification failed: ${differing.length} session(s) differ after the copy (first: ${differing[0] ?? "?"})`,
    );
  }
  const { perSession: _p, ...copied } = a;
  return {
    from: { adapter: source.name, location: source.location },
    to: { adapter: target.name, location: target.location },
    copied,
    verified: true,
  };
}
