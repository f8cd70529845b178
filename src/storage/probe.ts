/**
 * Can each storage engine start here? Used by `freecode doctor` and by `auto` selection. A probe
 * really opens the engine (a throwaway in-memory database, a write in the home) and reports the
 * error text when it cannot.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface ProbeResult {
  name: string;
  ok: boolean;
  /** What was checked, e.g. the SQLite version. */
  detail?: string;
  error?: string;
  ms: number;
}

async function timed(name: string, fn: () => Promise<string> | string): Promise<ProbeResult> {
  const t0 = performance.now();
  try {
    const detail = await fn();
    return { name, ok: true, detail, ms: round(performance.now() - t0) };
  } catch (error) {
    return { name, ok: false, error: (error as Error).message, ms: round(performance.now() - t0) };
  }
}

const round = (ms: number) => Math.round(ms * 10) / 10;

function probeWritableDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "freecode-probe-"));
  try {
    writeFileSync(join(dir, "probe"), "ok");
    return "temp directory writable";
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Probe every engine the adapters need. */
export async function probeAdapters(): Promise<ProbeResult[]> {
  return [
    await timed("files", probeWritableDir),
    await timed("memory", () => "always available"),
    await timed("sqlite", async () => {
      const { Database } = await import("bun:sqlite");
      const db = new Database(":memory:");
      try {
        const row = db.query("select sqlite_version() as v").get() as { v: string };
        const fts = db.query("select sqlite_compileoption_used('ENABLE_FTS5') as f").get() as { f: number };
        return `bun:sqlite ${row.v}${fts.f ? ", FTS5" : ""}`;
      } finally {
        db.close();
      }
    }),
    await timed("sqljs", async () => {
      const { loadSqlJs } = await import("./engines/sqljs.ts");
      const SQL = await loadSqlJs();
      const db = new SQL.Database();
      try {
        const v = db.exec("select sqlite_version()")[0]?.values[0]?.[0];
        return `sql.js (WASM) ${String(v)}`;
      } finally {
        db.close();
      }
    }),
    await timed("json", probeWritableDir),
  ];
}
