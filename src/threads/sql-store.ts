/**
 * The thread store on bun:sqlite (`state/freecode.db`): threads → turns → tool calls as tables, and
 * an FTS5 index over the search rows (titles, message text, tool names and arguments) ranked with
 * BM25. `search_rows` keeps each indexed row's thread, so replacing a thread deletes its FTS rows by
 * rowid instead of scanning the index.
 */

import { Database } from "bun:sqlite";
import { bunSqliteDriver, inTransaction, type SqlValue } from "../storage/adapters/_sql-driver.ts";
import { openSqliteFile } from "../storage/engines/bun-sqlite.ts";
import { ftsExpression, type RowKind, type SearchHit } from "./search-text.ts";
import type { ThreadStore } from "./store.ts";
import type { Thread, ThreadSource, Turn } from "./types.ts";

/** Bump to rebuild every existing thread store (it is derived: nothing is lost). */
const THREAD_SCHEMA = 1;

const DDL = `
CREATE TABLE threads (
  id TEXT PRIMARY KEY, project_path TEXT NOT NULL, status TEXT NOT NULL, updated_at INTEGER NOT NULL,
  body TEXT NOT NULL, source TEXT NOT NULL
);
CREATE INDEX threads_project ON threads (project_path, updated_at DESC);
CREATE TABLE turns (
  thread_id TEXT NOT NULL, number INTEGER NOT NULL, started_at INTEGER NOT NULL, outcome TEXT NOT NULL,
  body TEXT NOT NULL, PRIMARY KEY (thread_id, number)
) WITHOUT ROWID;
CREATE TABLE tool_calls (
  thread_id TEXT NOT NULL, turn INTEGER NOT NULL, sequence INTEGER NOT NULL, name TEXT NOT NULL,
  args TEXT, failed INTEGER NOT NULL, denied_by TEXT, duration_ms INTEGER,
  PRIMARY KEY (thread_id, turn, sequence)
) WITHOUT ROWID;
CREATE INDEX tool_calls_name ON tool_calls (name);
CREATE TABLE search_rows (
  rowid INTEGER PRIMARY KEY, thread_id TEXT NOT NULL, kind TEXT NOT NULL, turn INTEGER NOT NULL,
  role TEXT, tool TEXT, ts INTEGER NOT NULL
);
CREATE INDEX search_rows_thread ON search_rows (thread_id);
CREATE VIRTUAL TABLE search USING fts5 (body, tokenize = 'unicode61 remove_diacritics 2');
`;

/** Open (creating) the SQLite thread store at `file` (or `:memory:`). */
export function openSqlThreadStore(file: string): ThreadStore {
  const init = (db: Database) => {
    const d = bunSqliteDriver(db);
    const version = d.get<{ user_version: number }>("PRAGMA user_version")?.user_version ?? 0;
    if (version === THREAD_SCHEMA) return;
    if (version !== 0)
      throw Object.assign(new Error(`thread store schema ${version}`), { code: "thread_store_version" });
    inTransaction(d, () => {
      d.exec(DDL);
      d.exec(`PRAGMA user_version = ${THREAD_SCHEMA}`);
    });
  };
  const db =
    file === ":memory:"
      ? (() => {
          const mem = new Database(":memory:", { strict: true });
          init(mem);
          return mem;
        })()
      : openSqliteFile(file, { busyTimeoutMs: 15_000, synchronous: "NORMAL", init });
  const d = bunSqliteDriver(db);
  let depth = 0;

  const remove = (id: string) => {
    d.run("DELETE FROM search WHERE rowid IN (SELECT rowid FROM search_rows WHERE thread_id = ?)", [id]);
    for (const t of ["search_rows", "tool_calls", "turns"])
      d.run(`DELETE FROM ${t} WHERE thread_id = ?`, [id]);
    d.run("DELETE FROM threads WHERE id = ?", [id]);
  };

  const store: ThreadStore = {
    engine: "sqlite",
    location: file,
    sources: () =>
      new Map(
        d
          .all<{ id: string; source: string }>("SELECT id, source FROM threads")
          .map((r) => [r.id, JSON.parse(r.source) as ThreadSource]),
      ),
    put({ thread, turns }, rows, source) {
      store.batch(() => {
        remove(thread.id);
        d.run("INSERT INTO threads VALUES (?, ?, ?, ?, ?, ?)", [
          thread.id,
          thread.projectPath,
          thread.status,
          thread.updatedAt,
          JSON.stringify(thread),
          JSON.stringify(source),
        ]);
        for (const t of turns) {
          d.run("INSERT INTO turns VALUES (?, ?, ?, ?, ?)", [
            thread.id,
            t.number,
            t.startedAt,
            t.outcome,
            JSON.stringify(t),
          ]);
          for (const c of t.toolCalls) {
            d.run("INSERT INTO tool_calls VALUES (?, ?, ?, ?, ?, ?, ?, ?)", [
              thread.id,
              t.number,
              c.sequence,
              c.name,
              c.args === undefined ? null : JSON.stringify(c.args),
              c.failed ? 1 : 0,
              c.deniedBy ?? null,
              c.durationMs ?? null,
            ]);
          }
        }
        for (const r of rows) {
          d.run("INSERT INTO search_rows (thread_id, kind, turn, role, tool, ts) VALUES (?, ?, ?, ?, ?, ?)", [
            r.threadId,
            r.kind,
            r.turn,
            r.role ?? null,
            r.tool ?? null,
            r.timestamp,
          ]);
          d.run("INSERT INTO search (rowid, body) VALUES (last_insert_rowid(), ?)", [r.text]);
        }
      });
    },
    remove: (id) => store.batch(() => remove(id)),
    clear: () =>
      store.batch(() => {
        for (const t of ["search", "search_rows", "tool_calls", "turns", "threads"])
          d.run(`DELETE FROM ${t}`);
      }),
    batch<T>(fn: () => T): T {
      // Nested batches join the outer transaction.
      if (depth > 0) return fn();
      depth++;
      try {
        return inTransaction(d, fn);
      } finally {
        depth--;
      }
    },
    getThread(id) {
      const row = d.get<{ body: string }>("SELECT body FROM threads WHERE id = ?", [id]);
      return row ? (JSON.parse(row.body) as Thread) : undefined;
    },
    listThreads(filter = {}) {
      const where: string[] = [];
      const params: SqlValue[] = [];
      if (filter.projectPath !== undefined) where.push("project_path = ?") && params.push(filter.projectPath);
      if (filter.status !== undefined) where.push("status = ?") && params.push(filter.status);
      const sql = `SELECT body FROM threads ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
        ORDER BY updated_at DESC, id LIMIT ? OFFSET ?`;
      return d
        .all<{ body: string }>(sql, [...params, filter.limit ?? -1, filter.offset ?? 0])
        .map((r) => JSON.parse(r.body) as Thread);
    },
    getTurns: (id) =>
      d
        .all<{ body: string }>("SELECT body FROM turns WHERE thread_id = ? ORDER BY number", [id])
        .map((r) => JSON.parse(r.body) as Turn),
    search(q, terms) {
      const where = ["search MATCH ?"];
      const params: SqlValue[] = [ftsExpression(terms)];
      if (q.projectPath !== undefined) {
        const prefix = q.projectPath.endsWith("/") ? q.projectPath : `${q.projectPath}/`;
        where.push("(t.project_path = ? OR substr(t.project_path, 1, ?) = ?)");
        params.push(q.projectPath, prefix.length, prefix);
      }
      if (q.since !== undefined) where.push("r.ts >= ?") && params.push(q.since);
      if (q.until !== undefined) where.push("r.ts <= ?") && params.push(q.until);
      if (q.tool !== undefined)
        where.push("r.kind = 'tool' AND lower(r.tool) = ?") && params.push(q.tool.toLowerCase());
      if (!q.all) where.push("t.status != 'deleted'");
      const from = `FROM search JOIN search_rows r ON r.rowid = search.rowid JOIN threads t ON t.id = r.thread_id
        WHERE ${where.join(" AND ")}`;
      const rows = d.all<{
        thread: string;
        kind: RowKind;
        turn: number;
        role: string | null;
        tool: string | null;
        ts: number;
        score: number;
        snippet: string;
      }>(
        `SELECT t.body AS thread, r.kind, r.turn, r.role, r.tool, r.ts, -bm25(search) AS score,
           snippet(search, 0, char(2), char(3), '…', 12) AS snippet ${from} ORDER BY bm25(search), r.ts LIMIT ?`,
        [...params, q.limit ?? 20],
      );
      const total = d.get<{ n: number }>(`SELECT count(*) AS n ${from}`, params)?.n ?? 0;
      const hits = rows.map((r): SearchHit => {
        const thread = JSON.parse(r.thread) as Thread;
        return {
          sessionId: thread.id,
          title: thread.title,
          projectPath: thread.projectPath,
          kind: r.kind,
          turn: r.turn,
          ...(r.role !== null ? { role: r.role } : {}),
          ...(r.tool !== null ? { tool: r.tool } : {}),
          timestamp: r.ts,
          score: r.score,
          snippet: r.snippet,
        };
      });
      return { query: q.text, engine: "fts5", total, hits };
    },
    close: () => db.close(),
  };
  return store;
}
