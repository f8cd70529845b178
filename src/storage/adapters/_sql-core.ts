/**
 * The storage contract over SQL, shared by the sqlite adapter (bun:sqlite on a file) and the sqljs
 * adapter (sql.js in memory, journaled to disk). The host decides how a read and a write transaction
 * happen; everything here is plain SQL on the shared schema (`_sql-schema.ts`).
 */
import { conflict, notFound } from "../../errors.ts";
import { stampEvents } from "../_events.ts";
import { refuseGivenIds, wantsIdCheck } from "../_given-ids.ts";
import { checkUsageRule, foldMessagesIntoMeta, metaAfterReplace } from "../_meta-fold.ts";
import {
  checkId,
  checkListQuery,
  checkMessages,
  checkMeta,
  checkNewMeta,
  checkSessionId,
  contextCacheText,
  firstSeq,
} from "../_validate.ts";
import type { AdapterCapabilities, EventRead, ListQuery, ReadIssue, StorageAdapter } from "../contract.ts";
import type { EventRecord, SessionMeta, StoredMessage } from "../records.ts";
import type { SqlDriver, SqlValue } from "./_sql-driver.ts";

export interface SqlHost {
  /** Run `fn` against the current data (the sqljs host catches up with other processes first). */
  read<T>(fn: (d: SqlDriver) => T): Promise<T>;
  /** Run `fn` in one write transaction, all or nothing. */
  write<T>(fn: (d: SqlDriver) => T): Promise<T>;
  close(): Promise<void>;
}

/** Events are read in pages so a long log streams in flat memory. */
const EVENT_PAGE = 1000;

const putMeta = (d: SqlDriver, meta: SessionMeta, insert: boolean) => {
  const cols: SqlValue[] = [
    meta.updatedAt,
    JSON.stringify(meta),
    meta.projectPath,
    meta.status,
    meta.pinned ? 1 : 0,
  ];
  if (insert) {
    d.run(
      "INSERT INTO sessions (updated_at, meta, project_path, status, pinned, id) VALUES (?, ?, ?, ?, ?, ?)",
      [...cols, meta.id],
    );
  } else {
    d.run(
      "UPDATE sessions SET updated_at = ?, meta = ?, project_path = ?, status = ?, pinned = ? WHERE id = ?",
      [...cols, meta.id],
    );
  }
};

/** The `id` of a stored event line (its body), or "" when it cannot be read. */
function firstEventId(body: string | undefined): string {
  try {
    const id = body === undefined ? undefined : (JSON.parse(body) as { id?: unknown }).id;
    return typeof id === "string" ? id : "";
  } catch {
    return "";
  }
}

/** An event body's `timestamp`; undefined when it does not read. */
function timestampOf(body: string): number | undefined {
  try {
    const t = (JSON.parse(body) as { timestamp?: unknown }).timestamp;
    return typeof t === "number" && Number.isFinite(t) ? t : undefined;
  } catch {
    return undefined;
  }
}

const getMetaRow = (d: SqlDriver, id: string): SessionMeta | undefined => {
  const row = d.get<{ meta: string }>("SELECT meta FROM sessions WHERE id = ?", [id]);
  return row ? (JSON.parse(row.meta) as SessionMeta) : undefined;
};

const insertMessages = (d: SqlDriver, id: string, from: number, messages: StoredMessage[]) => {
  messages.forEach((m, i) => {
    d.run("INSERT INTO messages (session_id, pos, body, message_id) VALUES (?, ?, ?, ?)", [
      id,
      from + i,
      JSON.stringify(m),
      m.id,
    ]);
  });
};

/** The WHERE clause and parameters of a listing query. */
function listFilter(query: ListQuery): { where: string; params: SqlValue[] } {
  const clauses: string[] = [];
  const params: SqlValue[] = [];
  if (query.projectPath !== undefined) {
    clauses.push("project_path = ?");
    params.push(query.projectPath);
  }
  if (query.status !== undefined) {
    const wanted = Array.isArray(query.status) ? query.status : [query.status];
    clauses.push(wanted.length ? `status IN (${wanted.map(() => "?").join(", ")})` : "0");
    params.push(...wanted);
  } else if (query.all !== true) clauses.push("status != 'deleted'");
  return { where: clauses.length ? `WHERE ${clauses.join(" AND ")}` : "", params };
}

/** The compaction guard: replace only if the log still holds the count the caller read. */
export function checkCount(meta: SessionMeta, expected: number | undefined): void {
  if (expected !== undefined && meta.messageCount !== expected) {
    throw conflict(
      `session ${meta.id} has ${meta.messageCount} messages, not ${expected}: it changed since it was read`,
    );
  }
}

/** Build the contract object over a host. */
export function sqlAdapter(
  name: string,
  location: string,
  capabilities: AdapterCapabilities,
  host: SqlHost,
  extra: Partial<Pick<StorageAdapter, "reindex">> = {},
): StorageAdapter {
  const requireMeta = (d: SqlDriver, id: string) => {
    const meta = getMetaRow(d, id);
    if (!meta) throw notFound(`no session ${id}`);
    return meta;
  };

  return {
    name,
    location,
    capabilities,

    async createSession(metaIn, messagesIn) {
      const messages = checkMessages(messagesIn);
      const meta = { ...checkNewMeta(metaIn), messageCount: messages.length };
      checkUsageRule({}, messages);
      await host.write((d) => {
        if (d.get("SELECT 1 AS x FROM sessions WHERE id = ?", [meta.id])) {
          throw conflict(`session ${meta.id} already exists`);
        }
        putMeta(d, meta, true);
        insertMessages(d, meta.id, 0, messages);
      });
    },

    getMeta: (id) => host.read((d) => getMetaRow(d, checkId(id))),

    async updateMeta(id, update) {
      checkId(id);
      return host.write((d) => {
        // The id is not the callback's to change.
        const next = checkMeta({ ...update(requireMeta(d, id)), id });
        putMeta(d, next, false);
        return next;
      });
    },

    async listSessions(query) {
      checkListQuery(query);
      const { where, params } = listFilter(query);
      const order = `${query.pinnedFirst ? "pinned DESC, " : ""}updated_at DESC, id ASC`;
      const limit = query.limit === undefined ? -1 : Math.max(0, query.limit);
      const offset = Math.max(0, query.offset ?? 0);
      return host.read((d) => {
        const rows = d.all<{ meta: string }>(
          `SELECT meta FROM sessions ${where} ORDER BY ${order} LIMIT ? OFFSET ?`,
          [...params, limit, offset],
        );
        // The counters table answers `total` without touching the sessions (flat at any size).
        const total =
          d.get<{ n: number | null }>(`SELECT sum(n) AS n FROM session_counts ${where}`, params)?.n ?? 0;
        return { items: rows.map((r) => JSON.parse(r.meta) as SessionMeta), total };
      });
    },

    async purgeSession(id, options) {
      checkId(id);
      return host.write((d) => {
        const meta = options?.unless ? getMetaRow(d, id) : undefined;
        const why = meta && options?.unless?.(meta);
        if (why) throw conflict(why);
        let found = false;
        for (const table of ["sessions", "messages", "events", "event_logs", "context_cache"]) {
          d.run(`DELETE FROM ${table} WHERE ${table === "sessions" ? "id" : "session_id"} = ?`, [id]);
          found ||= d.changes() > 0;
        }
        return found;
      });
    },

    async appendMessages(id, messagesIn, options) {
      checkId(id);
      await host.write((d) => {
        // A missing session first, then the messages: the order every adapter reports them in.
        const meta = requireMeta(d, id);
        const messages = checkMessages(messagesIn);
        if (wantsIdCheck(options)) {
          // Only the given ids are looked for, in the index of ids (schema 3: every body read and
          // parsed made building a session of 8,000 messages one given id at a time take 58 s).
          const given = [...new Set(messages.filter((_, i) => options?.given?.[i]).map((m) => m.id))];
          const stored: string[] = [];
          for (let i = 0; i < given.length; i += 500) {
            const some = given.slice(i, i + 500);
            const rows = d.all<{ id: string }>(
              `SELECT message_id AS id FROM messages WHERE session_id = ? AND message_id IN (${some.map(() => "?").join(",")})`,
              [id, ...some],
            );
            for (const r of rows) stored.push(r.id);
          }
          refuseGivenIds(id, stored, messages, options);
        }
        checkUsageRule(meta, messages);
        const next = d.get<{ n: number }>(
          "SELECT coalesce(max(pos) + 1, 0) AS n FROM messages WHERE session_id = ?",
          [id],
        );
        insertMessages(d, id, next?.n ?? 0, messages);
        putMeta(d, foldMessagesIntoMeta(meta, messages), false);
      });
    },

    async readMessages(id) {
      checkId(id);
      return host.read((d) => {
        requireMeta(d, id);
        const messages: StoredMessage[] = [];
        const issues: ReadIssue[] = [];
        const rows = d.all<{ pos: number; body: string }>(
          "SELECT pos, body FROM messages WHERE session_id = ? ORDER BY pos",
          [id],
        );
        for (const row of rows) {
          try {
            messages.push(JSON.parse(row.body) as StoredMessage);
          } catch (error) {
            issues.push({
              file: location,
              line: row.pos + 1,
              message: (error as Error).message,
              torn: false,
            });
          }
        }
        return { messages, issues };
      });
    },

    async replaceMessages(id, messagesIn, options = {}) {
      checkId(id);
      await host.write((d) => {
        const meta = requireMeta(d, id);
        checkCount(meta, options.ifMessageCount);
        const messages = checkMessages(messagesIn);
        d.run("DELETE FROM messages WHERE session_id = ?", [id]);
        insertMessages(d, id, 0, messages);
        putMeta(d, metaAfterReplace(meta, messages), false);
      });
    },

    // Not `async`: the write's own promise is handed back, settled as soon as the write is done or
    // refused (wrapped, it stayed pending a few ticks more, and a recorder flushing at exit took a
    // write refused by a closed store for one done: its events were lost unsaid).
    appendEvents(sessionId, drafts) {
      try {
        checkSessionId(sessionId);
      } catch (error) {
        return Promise.reject(error);
      }
      return host.write((d) => {
        const head = d.get<{ last_seq: number }>("SELECT last_seq FROM event_logs WHERE session_id = ?", [
          sessionId,
        ]);
        const records = stampEvents(sessionId, head?.last_seq ?? 0, drafts);
        if (records.length === 0) return records;
        for (const r of records) {
          d.run("INSERT INTO events (session_id, seq, body) VALUES (?, ?, ?)", [
            sessionId,
            r.seq,
            JSON.stringify(r),
          ]);
        }
        d.run(
          `INSERT INTO event_logs (session_id, last_seq, count) VALUES (?, ?, ?)
           ON CONFLICT (session_id) DO UPDATE SET last_seq = excluded.last_seq, count = count + excluded.count`,
          [sessionId, records[records.length - 1]!.seq, records.length],
        );
        return records;
      });
    },

    async *readEvents(sessionId, options = {}): AsyncIterable<EventRead> {
      checkId(sessionId);
      let after = firstSeq(options.fromSeq) - 1;
      for (;;) {
        const rows = await host.read((d) =>
          d.all<{ seq: number; body: string }>(
            "SELECT seq, body FROM events WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?",
            [sessionId, after, EVENT_PAGE],
          ),
        );
        for (const row of rows) {
          try {
            yield { event: JSON.parse(row.body) as EventRecord };
          } catch (error) {
            yield {
              issue: { file: location, line: row.seq, message: (error as Error).message, torn: false },
            };
          }
        }
        if (rows.length < EVENT_PAGE) return;
        after = rows[rows.length - 1]!.seq;
      }
    },

    eventLogStamp: (sessionId) =>
      host.read((d) => {
        checkId(sessionId);
        const head = d.get<{ last_seq: number; count: number }>(
          "SELECT last_seq, count FROM event_logs WHERE session_id = ? AND count > 0",
          [sessionId],
        );
        if (!head) return undefined;
        // The first event's id: a log recorded again under the id starts with another one.
        const first = d.get<{ body: string }>(
          "SELECT body FROM events WHERE session_id = ? ORDER BY seq LIMIT 1",
          [sessionId],
        );
        return `${head.last_seq}:${head.count}:${firstEventId(first?.body)}`;
      }),

    lastEventAt: (sessionId) =>
      host.read((d) => {
        checkId(sessionId);
        const last = d.get<{ body: string }>(
          "SELECT body FROM events WHERE session_id = ? ORDER BY seq DESC LIMIT 1",
          [sessionId],
        );
        return last ? timestampOf(last.body) : undefined;
      }),

    listEventLogs: () =>
      host.read((d) =>
        d
          .all<{ session_id: string }>(
            "SELECT session_id FROM event_logs WHERE count > 0 ORDER BY session_id",
          )
          .map((r) => r.session_id),
      ),

    async getContextCache(id) {
      checkId(id);
      return host.read((d) => {
        requireMeta(d, id);
        const row = d.get<{ body: string }>("SELECT body FROM context_cache WHERE session_id = ?", [id]);
        return row ? (JSON.parse(row.body) as unknown) : undefined;
      });
    },

    async putContextCache(id, cache) {
      checkId(id);
      const body = contextCacheText(cache);
      await host.write((d) => {
        requireMeta(d, id);
        d.run(
          "INSERT INTO context_cache (session_id, body) VALUES (?, ?) ON CONFLICT (session_id) DO UPDATE SET body = excluded.body",
          [id, body],
        );
      });
    },

    ...extra,
    close: () => host.close(),
  };
}

/** Rebuild the derived counters from the tables (the sqlite/sqljs `reindex`). */
export function rebuildCounters(d: SqlDriver): number {
  d.exec(`
    DELETE FROM session_counts;
    INSERT INTO session_counts SELECT project_path, status, count(*) FROM sessions GROUP BY project_path, status;
    DELETE FROM event_logs;
    INSERT INTO event_logs SELECT session_id, max(seq), count(*) FROM events GROUP BY session_id;
    REINDEX;
  `);
  return d.get<{ n: number }>("SELECT count(*) AS n FROM sessions")?.n ?? 0;
}
