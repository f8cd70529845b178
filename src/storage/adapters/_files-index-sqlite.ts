/** The listing index in SQLite (`state/sessions-index.db`, WAL, busy timeout). */
import { Database as BunDatabase, type Database } from "bun:sqlite";
import type { ListQuery } from "../contract.ts";
import { openSqliteFile } from "../engines/bun-sqlite.ts";
import type { SessionMeta } from "../records.ts";
import type { IndexBackend, IndexRow, IndexState } from "./_files-index.ts";

const SCHEMA = `
create table if not exists sessions (
  id text primary key, key text not null, project text not null, status text not null,
  updated integer not null, pinned integer not null, meta text not null);
create index if not exists sessions_by_time on sessions (updated desc, id);
create index if not exists sessions_by_pin on sessions (pinned desc, updated desc, id);
create index if not exists sessions_by_status on sessions (status);
create index if not exists sessions_by_project on sessions (project, updated desc, id);
create index if not exists sessions_by_key on sessions (key);
create table if not exists kv (k text primary key, v text not null);
-- Row counts per (project, status), kept by triggers, so a page's \`total\` costs a handful of rows
-- instead of counting every session (listing must not grow with the store).
create table if not exists counts (project text not null, status text not null, n integer not null,
  primary key (project, status));
create trigger if not exists sessions_count_in after insert on sessions begin
  insert into counts (project, status, n) values (new.project, new.status, 1)
    on conflict (project, status) do update set n = n + 1;
end;
create trigger if not exists sessions_count_out after delete on sessions begin
  update counts set n = n - 1 where project = old.project and status = old.status;
end;`;

const SCHEMA_VERSION = 3;

/** Open (creating) the SQLite index; throws when SQLite cannot start here. */
export function openSqliteIndex(path: string): IndexBackend {
  // Set up once per file, under the init lock (concurrent first opens would race on WAL and DDL);
  // later opens skip it (listing runs at every process start).
  const db = openSqliteFile(path, {
    busyTimeoutMs: 5000,
    synchronous: "NORMAL",
    isReady: (d) => version(d) === SCHEMA_VERSION,
    init: (d) => {
      if (version(d) === SCHEMA_VERSION) return;
      // Another version's tables are derived data: drop them; the missing state makes a full rebuild.
      d.exec("drop table if exists sessions; drop table if exists kv; drop table if exists counts;");
      d.exec(SCHEMA);
      d.exec(`pragma user_version = ${SCHEMA_VERSION}`);
    },
  });
  return indexOn(db);
}

/**
 * An index held in memory, built anew by each process: for a home this process cannot write (a
 * read-only mount, another user's files), where the index file cannot be opened to write.
 */
export function memorySqliteIndex(): IndexBackend {
  const db = new BunDatabase(":memory:", { strict: true });
  db.exec(SCHEMA);
  return indexOn(db);
}

const version = (db: Database) =>
  (db.query("pragma user_version").get() as { user_version: number }).user_version;

function indexOn(db: Database): IndexBackend {
  // Delete then insert (not `insert or replace`, whose implicit delete fires no trigger).
  const upsert = db.prepare(
    "insert into sessions (id, key, project, status, updated, pinned, meta) values (?, ?, ?, ?, ?, ?, ?)",
  );
  const remove = db.prepare("delete from sessions where id = ?");
  const getState = db.prepare<{ v: string }, []>("select v from kv where k = 'state'");
  const putState = db.prepare("insert or replace into kv (k, v) values ('state', ?)");
  const idsOf = db.prepare<{ id: string }, [string]>("select id from sessions where key = ?");
  const keyOf = db.prepare<{ key: string }, [string]>("select key from sessions where id = ?");

  return {
    kind: "sqlite",
    exclusive: (fn) => db.transaction(fn).immediate(),
    state() {
      const row = getState.get();
      return row ? (JSON.parse(row.v) as IndexState) : undefined;
    },
    setState: (state) => putState.run(JSON.stringify(state)),
    upsert(rows: IndexRow[]) {
      for (const { meta, key } of rows) {
        remove.run(meta.id);
        upsert.run(
          meta.id,
          key,
          meta.projectPath,
          meta.status,
          meta.updatedAt,
          meta.pinned ? 1 : 0,
          JSON.stringify(meta),
        );
      }
    },
    remove(ids) {
      for (const id of ids) remove.run(id);
    },
    idsOf: (key) => idsOf.all(key).map((r) => r.id),
    keyOf: (id) => keyOf.get(id)?.key,
    clear: () => db.exec("delete from sessions; delete from kv; delete from counts;"),
    query(query: ListQuery) {
      const where: string[] = [];
      const params: (string | number)[] = [];
      if (query.projectPath !== undefined) {
        where.push("project = ?");
        params.push(query.projectPath);
      }
      if (query.status !== undefined) {
        const wanted = Array.isArray(query.status) ? query.status : [query.status];
        where.push(`status in (${wanted.map(() => "?").join(", ") || "null"})`);
        params.push(...wanted);
      } else if (!query.all) where.push("status != 'deleted'");
      const w = where.length ? `where ${where.join(" and ")}` : "";
      const order = `order by ${query.pinnedFirst ? "pinned desc, " : ""}updated desc, id asc`;
      // The filters are on project and status only, so the counts table answers the total.
      const counter = db.query(`select coalesce(sum(n), 0) as n from counts ${w}`);
      const total = (counter.get(...params) as { n: number }).n;
      const limit = query.limit === undefined ? -1 : Math.max(0, query.limit);
      const select = db.prepare<{ meta: string }, (string | number)[]>(
        `select meta from sessions ${w} ${order} limit ? offset ?`,
      );
      const rows = select.all(...params, limit, Math.max(0, query.offset ?? 0));
      select.finalize();
      return { items: rows.map((r) => JSON.parse(r.meta) as SessionMeta), total };
    },
    close() {
      // Finalize first: a database with live statements is not really closed (its WAL stays).
      for (const st of [upsert, remove, getState, putState, idsOf, keyOf]) st.finalize();
      db.close();
    },
  };
}
