/**
 * The thread store on bun:sqlite (`state/freecode.db`): threads → turns → tool calls as tables, and
 * an FTS5 index over the search rows (titles, message text, tool names and arguments) ranked with
 * BM25. The index holds each row's folded words (words.ts), `search_rows` its original text (for
 * the snippet, built in JS as the scan builds it) and its thread, so replacing a thread deletes its
 * FTS rows by rowid instead of scanning the index.
 */

import { Database } from "bun:sqlite";
import { bunSqliteDriver, inTransaction, type SqlValue } from "../storage/adapters/_sql-driver.ts";
import { openSqliteFile } from "../storage/engines/bun-sqlite.ts";
import { projectScope, type RowKind, type SearchHit } from "./search-text.ts";
import { fileIdentity, isDamage, setAside } from "./sql-damage.ts";
import type { ThreadStore } from "./store.ts";
import type { Thread, ThreadSource, Turn } from "./types.ts";
import { ftsExpression, indexedText, snippet } from "./words.ts";

/**
 * Bump to rebuild every existing thread store (it is derived: nothing is lost). 2: the index holds
 * folded words (ascii tokenizer), search_rows the original text and the lower-cased tool name. 3: a
 * rollout-only call and its refusal are one call (they were two, one of them pending). 4: calls'
 * outputs are rows of their own (`output`). 5: a turn that ended on a provider error says so
 * (`Turn.error`, and a search row). 6: a call the rollout alone holds keeps what it printed (its
 * output is a row, and the call is not pending). 7: arguments are searched by their values with
 * their keys, escapes read (`argumentsText`), not as JSON text. 8: a compacted session's turns are
 * numbered as the session counts them (from 1 again, they moved search hits' turns). 9: words fold
 * a Greek final sigma and read Chinese and Japanese as character pairs; JSON a command printed keeps
 * its `type` keys. 10: an output written before its call is that call's, and after a resume an
 * output answers the newest process's call of its id; JSON text holds a content block only where an
 * object has nothing but a block's fields; a prompt-less turn after a compaction's kept turns no
 * longer moves the erased calls. 11: a rollout-only session's turns are keyed as the trace keys them
 * (a turn id started again is another turn), a refusal before its call is a refusal alone, an
 * id-less output no call waits for is a call of its own, and a refused call that ran anyway is
 * searched by what was refused and what ran. 12: a refusal naming no call id withdraws the newest
 * open call of its tool with the same arguments (it took a later call's output); words fold `ł ø
 * ß æ œ đ ð ħ ı ŧ þ` to Latin letters. 13: a rollout-only call whose event names its turn lands
 * in that turn, not the one its time falls in. 14: a long output is cut between words. 15: calls in
 * the messages that reuse one call id (in later turns) keep their own outcomes. 16: folding drops
 * accents only, not the vowel signs of Indic and Thai scripts, and composes Korean syllables again.
 */
const THREAD_SCHEMA = 16;

const TABLES = ["search", "search_rows", "tool_calls", "turns", "threads"];

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
  role TEXT, tool TEXT, tool_key TEXT, ts INTEGER NOT NULL, text TEXT NOT NULL
);
CREATE INDEX search_rows_thread ON search_rows (thread_id);
CREATE VIRTUAL TABLE search USING fts5 (body, tokenize = 'ascii');
`;

/** Create the schema, or replace one of another version (derived data: dropping loses nothing). */
function init(db: Database): void {
  const d = bunSqliteDriver(db);
  const version = d.get<{ user_version: number }>("PRAGMA user_version")?.user_version ?? 0;
  if (version === THREAD_SCHEMA) return;
  inTransaction(d, () => {
    for (const t of TABLES) d.exec(`DROP TABLE IF EXISTS ${t}`);
    d.exec(DDL);
    d.exec(`PRAGMA user_version = ${THREAD_SCHEMA}`);
  });
}

/** Open (creating) the SQLite thread store at `file` (or `:memory:`). */
export function openSqlThreadStore(file: string): ThreadStore {
  const memory = file === ":memory:";
  const db = memory
    ? new Database(":memory:", { strict: true })
    : openSqliteFile(file, { busyTimeoutMs: 15_000, synchronous: "NORMAL", init });
  if (memory) init(db);
  // Deleted rows are overwritten, not left in free pages (`scrub` does the index's old segments).
  db.exec("PRAGMA secure_delete = ON");
  // Which file this connection holds: a damaged one is set aside only if it is still this one.
  const identity = memory ? undefined : fileIdentity(file);
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
          d.run(
            `INSERT INTO search_rows (thread_id, kind, turn, role, tool, tool_key, ts, text)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
            [
              r.threadId,
              r.kind,
              r.turn,
              r.role ?? null,
              r.tool ?? null,
              r.tool?.toLowerCase() ?? null,
              r.timestamp,
              r.text,
            ],
          );
          d.run("INSERT INTO search (rowid, body) VALUES (last_insert_rowid(), ?)", [indexedText(r.text)]);
        }
      });
    },
    remove: (id) => store.batch(() => remove(id)),
    scrub() {
      // Merge the full-text index into one segment (the old ones held the deleted rows' words; they
      // are freed, so overwritten), then empty the WAL, which held the pages as they were.
      d.run("INSERT INTO search(search) VALUES ('optimize')");
      if (!memory) d.get("PRAGMA wal_checkpoint(TRUNCATE)");
    },
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
        const scope = projectScope(q.projectPath);
        // A Windows path as `windowsForm` makes it: `\` read as `/`, the drive letter upper-cased.
        const slashed = "replace(t.project_path, '\\', '/')";
        const path = scope.windows
          ? `(CASE WHEN substr(${slashed}, 2, 1) = ':' THEN upper(substr(${slashed}, 1, 1)) || substr(${slashed}, 2) ELSE ${slashed} END)`
          : "t.project_path";
        // substr counts characters (code points), not UTF-16 units.
        where.push(`(${path} = ? OR substr(${path}, 1, ?) = ?)`);
        params.push(scope.path, [...scope.prefix].length, scope.prefix);
      }
      if (q.since !== undefined) where.push("r.ts >= ?") && params.push(q.since);
      if (q.until !== undefined) where.push("r.ts <= ?") && params.push(q.until);
      if (q.tool !== undefined) where.push("r.tool_key = ?") && params.push(q.tool.toLowerCase());
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
        text: string;
        score: number;
      }>(
        `SELECT t.body AS thread, r.kind, r.turn, r.role, r.tool, r.ts, r.text, -bm25(search) AS score ${from}
         ORDER BY bm25(search), r.ts, r.thread_id, r.rowid LIMIT ?`,
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
          snippet: snippet(r.text, terms),
        };
      });
      return { query: q.text, engine: "fts5", total, hits };
    },
    damaged: isDamage,
    discard() {
      try {
        db.close();
      } finally {
        if (identity !== undefined && fileIdentity(file) === identity) setAside(file);
      }
    },
    check() {
      const result = d.all<{ quick_check: string }>("PRAGMA quick_check");
      if (result.length !== 1 || result[0]!.quick_check !== "ok")
        throw Object.assign(new Error(`thread store damaged: ${result[0]?.quick_check ?? "no answer"}`), {
          code: "SQLITE_CORRUPT",
        });
      d.run("INSERT INTO search (search) VALUES ('integrity-check')");
    },
    close: () => db.close(),
  };
  return store;
}
