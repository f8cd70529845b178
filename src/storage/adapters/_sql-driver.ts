/**
 * The few SQL calls the sqlite and sqljs adapters (and the thread store) need, over either engine:
 * bun:sqlite (a real file, WAL) or sql.js (an in-memory image). Statements are prepared once per SQL
 * text and reused; parameters are positional (`?`).
 */
import type { Database as BunDatabase } from "bun:sqlite";
import type { Database as SqlJsDatabase, Statement } from "sql.js";

export type SqlValue = string | number | null;
export type Row = Record<string, SqlValue>;

export interface SqlDriver {
  /** Run one or more statements without parameters (DDL, pragmas). */
  exec(sql: string): void;
  run(sql: string, params?: SqlValue[]): void;
  all<T = Row>(sql: string, params?: SqlValue[]): T[];
  get<T = Row>(sql: string, params?: SqlValue[]): T | undefined;
  /** Rows changed by the last `run`. */
  changes(): number;
  close(): void;
}

/**
 * A driver over a bun:sqlite database (`db.query` caches the prepared statement per SQL text). An
 * error of SQLite's (`SQLITE_FULL` on a full disk) is given the database file as its `path`, so the
 * CLI can say which file it could not write.
 */
export function bunSqliteDriver(db: BunDatabase, path: string = db.filename): SqlDriver {
  let lastChanges = 0;
  const named = <T>(fn: () => T): T => {
    try {
      return fn();
    } catch (error) {
      const e = error as { code?: unknown; path?: string };
      if (typeof e?.code === "string" && e.code.startsWith("SQLITE_") && e.path === undefined && path)
        e.path = path;
      throw error;
    }
  };
  return {
    exec: (sql) => named(() => db.exec(sql)),
    run(sql, params = []) {
      lastChanges = named(() => db.query(sql).run(...params).changes);
    },
    all: <T>(sql: string, params: SqlValue[] = []) => named(() => db.query(sql).all(...params) as T[]),
    get: <T>(sql: string, params: SqlValue[] = []) =>
      named(() => (db.query(sql).get(...params) ?? undefined) as T | undefined),
    changes: () => lastChanges,
    close: () => db.close(),
  };
}

/**
 * A driver over a sql.js database. `onRun` sees every parameterised write (the sqljs adapter
 * journals them). The statement cache belongs to one database object: `close()` frees it.
 */
export function sqlJsDriver(db: SqlJsDatabase, onRun?: (sql: string, params: SqlValue[]) => void): SqlDriver {
  const cache = new Map<string, Statement>();
  const prepared = (sql: string) => {
    let stmt = cache.get(sql);
    if (!stmt) cache.set(sql, (stmt = db.prepare(sql)));
    return stmt;
  };
  const rows = <T>(sql: string, params: SqlValue[], limit: number): T[] => {
    const stmt = prepared(sql);
    const out: T[] = [];
    try {
      stmt.bind(params);
      while (out.length < limit && stmt.step()) out.push(stmt.getAsObject() as T);
    } finally {
      stmt.reset();
    }
    return out;
  };
  return {
    exec: (sql) => {
      db.exec(sql);
    },
    run(sql, params = []) {
      const stmt = prepared(sql);
      try {
        stmt.run(params);
      } finally {
        stmt.reset();
      }
      onRun?.(sql, params);
    },
    all: <T>(sql: string, params: SqlValue[] = []) => rows<T>(sql, params, Number.POSITIVE_INFINITY),
    get: <T>(sql: string, params: SqlValue[] = []) => rows<T>(sql, params, 1)[0],
    changes: () => db.getRowsModified(),
    close() {
      for (const stmt of cache.values()) stmt.free();
      cache.clear();
      db.close();
    },
  };
}

/** Run `fn` in a transaction (`BEGIN IMMEDIATE` takes the write lock up front: no upgrade deadlock). */
export function inTransaction<T>(d: SqlDriver, fn: () => T, begin = "BEGIN IMMEDIATE"): T {
  d.exec(begin);
  try {
    const result = fn();
    d.exec("COMMIT");
    return result;
  } catch (error) {
    try {
      d.exec("ROLLBACK");
    } catch {
      // SQLite may have ended the transaction itself (a damaged page, a full disk): then ROLLBACK
      // fails too, and its "no transaction" must not hide the error that says what went wrong.
    }
    throw error;
  }
}
