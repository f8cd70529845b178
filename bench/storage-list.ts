/**
 * Listing one page of 50 sessions through the sqlite adapter, in process: 100,000 sessions against
 * 1,000 (target ≤ 3×: the page must not grow with the store), and the naive scan — reading and
 * parsing every meta.json of 100,000 sessions, what a store without an index does — against the
 * sqlite page (target ≥ 20×). The stores are filled through a bulk path (one transaction, the
 * adapter's own schema); the listing goes through the adapter.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { inTransaction } from "../src/storage/adapters/_sql-driver.ts";
import sqlite, { openSqliteStore, sqliteStorePath } from "../src/storage/adapters/sqlite.ts";
import type { StorageAdapter } from "../src/storage/contract.ts";
import type { SessionMeta } from "../src/storage/records.ts";
import { defineBench } from "./_harness.ts";

const work = mkdtempSync(join(tmpdir(), "freecode-bench-storage-list-"));
const BIG = 100_000;
const SMALL = 1_000;
const stores: StorageAdapter[] = [];

const metaOf = (i: number, t0: number): SessionMeta => ({
  id: `bench-${i}`,
  title: `session number ${i}`,
  projectPath: `/home/bench/project-${i % 20}`,
  status: i % 50 === 0 ? "archived" : i % 97 === 0 ? "deleted" : "idle",
  createdAt: t0 + i * 1000,
  updatedAt: t0 + i * 1000,
  turnCount: 1,
  messageCount: 1,
  provider: "anthropic",
  model: "claude-sonnet",
});

function fillSqlite(home: string, count: number): void {
  const d = openSqliteStore(sqliteStorePath(home), "never");
  const t0 = Date.now() - count * 1000;
  inTransaction(d, () => {
    for (let i = 0; i < count; i++) {
      const m = metaOf(i, t0);
      d.run(
        "INSERT INTO sessions (id, updated_at, meta, project_path, status, pinned) VALUES (?, ?, ?, ?, ?, 0)",
        [m.id, m.updatedAt, JSON.stringify(m), m.projectPath, m.status],
      );
    }
  });
  d.close();
}

/** meta.json files in the files layout, for the naive scan. */
function fillMetaFiles(dir: string, count: number): void {
  const t0 = Date.now() - count * 1000;
  for (let p = 0; p < 20; p++) mkdirSync(join(dir, `project-${p}`), { recursive: true });
  for (let i = 0; i < count; i++) {
    const sdir = join(dir, `project-${i % 20}`, `bench-${i}`);
    mkdirSync(sdir);
    writeFileSync(join(sdir, "meta.json"), JSON.stringify(metaOf(i, t0)));
  }
}

function naiveScan(dir: string): SessionMeta[] {
  const metas: SessionMeta[] = [];
  for (const p of readdirSync(dir)) {
    for (const id of readdirSync(join(dir, p)))
      metas.push(JSON.parse(readFileSync(join(dir, p, id, "meta.json"), "utf8")));
  }
  const live = metas.filter((m) => m.status !== "deleted").sort((a, b) => b.updatedAt - a.updatedAt);
  return live.slice(0, 50);
}

export default defineBench({
  name: "storage-list",
  description: "one page of 50: sqlite at 100k vs 1k sessions, and the naive meta.json scan vs sqlite (100k)",
  rounds: 5,
  setup() {
    fillSqlite(join(work, "big"), BIG);
    fillSqlite(join(work, "small"), SMALL);
    fillMetaFiles(join(work, "meta"), BIG);
  },
  teardown: async () => {
    for (const s of stores) await s.close();
    rmSync(work, { recursive: true, force: true });
  },
  pairs: () => {
    const big = sqlite({ home: join(work, "big") });
    const small = sqlite({ home: join(work, "small") });
    stores.push(big, small);
    const page = (s: StorageAdapter) => async () => {
      // Several pages per sample: one page is far below the timer's useful resolution.
      for (let i = 0; i < 20; i++) await s.listSessions({ limit: 50, offset: (i % 4) * 50 });
    };
    return [
      {
        label: "sqlite 20 pages of 50: 100k vs 1k sessions",
        subject: page(big),
        baseline: page(small),
        target: { max: 3 },
      },
      {
        label: "naive meta.json scan (100k) vs one sqlite page (100k)",
        subject: () => naiveScan(join(work, "meta")),
        baseline: () => big.listSessions({ limit: 50 }),
        target: { atLeast: 20 },
      },
    ];
  },
});
