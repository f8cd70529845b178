/**
 * A real `opencode.db` for tests, built from the corpus's verbatim rows: the tables and columns of
 * OpenCode 1.17, plus `account` and `credential` as views that fail when read (an import that
 * touched them would fail).
 */
import { Database } from "bun:sqlite";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { CORPUS } from "../_helpers.ts";

export const OPENCODE_ROWS = join(CORPUS, "opencode", "richardaiand_aiand-portfolio-web", "rows");
const TABLES = ["project", "session", "message", "part", "todo", "session_message"];

type Row = Record<string, unknown>;

/** The rows of one table of the corpus dump. */
export const opencodeRows = (table: string): Row[] =>
  readFileSync(join(OPENCODE_ROWS, `${table}.jsonl`), "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Row);

/** Write the database to `path`. */
export function buildOpencodeDb(path: string): void {
  const db = new Database(path, { create: true });
  for (const table of TABLES) {
    const rows = opencodeRows(table);
    const cols = [...new Set(rows.flatMap((r) => Object.keys(r)))];
    db.run(`CREATE TABLE ${table} (${cols.map((c) => `"${c}"`).join(", ")})`);
    const insert = db.prepare(`INSERT INTO ${table} VALUES (${cols.map(() => "?").join(", ")})`);
    for (const r of rows) {
      insert.run(
        ...cols.map((c) => {
          const v = r[c] ?? null;
          return v !== null && typeof v === "object" ? JSON.stringify(v) : (v as string | number | null);
        }),
      );
    }
  }
  db.run("CREATE VIEW account AS SELECT never_read_this() AS access_token");
  db.run("CREATE VIEW credential AS SELECT never_read_this() AS refresh_token");
  db.close();
}
