/**
 * The sqljs adapter: the sqlite adapter's schema on sql.js (SQLite compiled to WASM, embedded in the
 * binary), for hosts or runtimes where `bun:sqlite` cannot start. sql.js keeps the database in
 * memory, so persistence is `_image.ts`: each write transaction's statements go to a journal line
 * (acknowledged writes survive a process crash), and the whole database is exported and renamed into
 * place only when the journal outgrows it, on `close()` and at exit. Other processes replay the
 * journal or reload the image under a lock, so no update is lost between processes.
 */
import { join } from "node:path";
import type { Database, SqlJsStatic } from "sql.js";
import { FreecodeError } from "../../errors.ts";
import { homePaths } from "../../home.ts";
import type { AdapterFactory } from "../contract.ts";
import { loadSqlJs } from "../engines/sqljs.ts";
import { type ImageFormat, JournaledImage } from "./_image.ts";
import { rebuildCounters, type SqlHost, sqlAdapter } from "./_sql-core.ts";
import { type SqlDriver, type SqlValue, sqlJsDriver } from "./_sql-driver.ts";
import { migrate } from "./_sql-schema.ts";

/** The database file of the sqljs adapter under `home` (a normal SQLite file). */
export const sqljsStorePath = (home: string) => join(homePaths(home).state, "store-sqljs.db");

type Statement = [sql: string, params: SqlValue[]];

interface SqlImage {
  db: Database;
  driver: SqlDriver;
  gen: number;
  /** Statements of the write transaction in progress (they become its journal line). */
  recording: Statement[] | undefined;
}

/** The image generation lives in the database itself, so an exported file carries it. */
const IMAGE_DDL = `CREATE TABLE IF NOT EXISTS _image (gen INTEGER NOT NULL);
INSERT INTO _image SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM _image);`;

function sqlFormat(SQL: SqlJsStatic): ImageFormat<SqlImage> {
  const wrap = (db: Database, file: string): SqlImage => {
    const image: SqlImage = { db, gen: 0, recording: undefined, driver: undefined as unknown as SqlDriver };
    image.driver = sqlJsDriver(db, (sql, params) => image.recording?.push([sql, params]));
    try {
      // The in-memory database needs no rollback journal file nor syncs: durability is our journal.
      image.driver.exec("PRAGMA journal_mode = MEMORY; PRAGMA synchronous = OFF");
      migrate(image.driver, file);
      image.driver.exec(IMAGE_DDL);
      image.gen = image.driver.get<{ gen: number }>("SELECT gen FROM _image")?.gen ?? 0;
    } catch (error) {
      image.driver.close();
      throw error;
    }
    return image;
  };
  return {
    empty: () => wrap(new SQL.Database(), ":memory:"),
    decode(bytes, file) {
      let db: Database;
      try {
        db = new SQL.Database(bytes);
        db.exec("SELECT count(*) FROM sqlite_master");
      } catch (error) {
        throw new FreecodeError("bad_input", `not a SQLite database: ${(error as Error).message}`, {
          source: { file },
          cause: error,
        });
      }
      return wrap(db, file);
    },
    encode(image, gen) {
      image.driver.run("UPDATE _image SET gen = ?", [gen]);
      image.gen = gen;
      return image.db.export();
    },
    gen: (image) => image.gen,
    replay(image, entries) {
      image.driver.exec("BEGIN");
      try {
        for (const [sql, params] of entries as Statement[]) image.driver.run(sql, params);
        image.driver.exec("COMMIT");
      } catch (error) {
        image.driver.exec("ROLLBACK");
        throw error;
      }
    },
    dispose: (image) => image.driver.close(),
  };
}

const factory: AdapterFactory = (options) => {
  const file = sqljsStorePath(options.home);
  let image: JournaledImage<SqlImage> | undefined;
  let closed = false;
  const ready = async () => {
    if (closed) throw new FreecodeError("internal", `the sqljs store ${file} is closed`);
    image ??= new JournaledImage(file, sqlFormat(await loadSqlJs()), options.fsync ?? "batch");
    return image;
  };

  const host: SqlHost = {
    read: async (fn) => (await ready()).read((s) => fn(s.driver)),
    write: async (fn) =>
      (await ready()).write((s, commit) => {
        s.recording = [];
        s.driver.exec("BEGIN");
        try {
          const result = fn(s.driver);
          if (s.recording.length) commit(s.recording);
          s.driver.exec("COMMIT");
          return result;
        } catch (error) {
          s.driver.exec("ROLLBACK");
          throw error;
        } finally {
          s.recording = undefined;
        }
      }),
    async close() {
      if (closed) return;
      closed = true;
      image?.close();
    },
  };

  return sqlAdapter(
    "sqljs",
    file,
    { crossProcess: true, fullTextSearch: false, persistent: true, asyncAppend: true },
    host,
    {
      async reindex() {
        const img = await ready();
        const sessions = img.write((s) => rebuildCounters(s.driver));
        // Counters are derived data: not journaled, so fold them into the image at once.
        img.flush(true);
        return { sessions };
      },
    },
  );
};

export default factory;
