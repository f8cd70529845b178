/**
 * Listing one page of 50 through the files adapter with its derived index, in process: 100,000
 * sessions against 1,000 (target ≤ 3×: the page must not grow with the store), and the naive scan —
 * reading and parsing every meta.json, what a store without an index does — against the indexed page
 * (target ≥ 20×). The session files are written straight into the on-disk layout (meta.json plus a
 * one-line messages.jsonl, 20 projects), as another process or a restore from backup would leave them;
 * the first listing then builds the index from them (its time is printed), and the pairs measure
 * listings once the index is warm.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import files from "../src/storage/adapters/files.ts";
import type { StorageAdapter } from "../src/storage/contract.ts";
import { formatSessionDirName } from "../src/storage/project-key.ts";
import type { SessionMeta } from "../src/storage/records.ts";
import { defineBench } from "./_harness.ts";

const work = mkdtempSync(join(tmpdir(), "freecode-bench-files-list-"));
const BIG = 100_000;
const SMALL = 1_000;
let big: StorageAdapter;
let small: StorageAdapter;
const facts: Record<string, string> = {};

function fill(home: string, count: number): void {
  const t0 = Date.now() - count * 1000;
  for (let i = 0; i < count; i++) {
    const projectPath = `/home/bench/project-${i % 20}`;
    const meta: SessionMeta = {
      id: `bench-${i}`,
      title: `session number ${i}`,
      projectPath,
      status: i % 50 === 0 ? "archived" : i % 97 === 0 ? "deleted" : "idle",
      createdAt: t0 + i * 1000,
      updatedAt: t0 + i * 1000,
      turnCount: 1,
      messageCount: 1,
    };
    const dir = join(home, "sessions", formatSessionDirName(projectPath), meta.id);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "meta.json"), JSON.stringify(meta));
    const message = {
      id: "m1",
      role: "user",
      parts: [{ type: "text", content: "hi" }],
      timestamp: meta.createdAt,
    };
    writeFileSync(join(dir, "messages.jsonl"), `${JSON.stringify(message)}\n`);
  }
}

function naiveScan(home: string): SessionMeta[] {
  const root = join(home, "sessions");
  const metas: SessionMeta[] = [];
  for (const p of readdirSync(root)) {
    for (const id of readdirSync(join(root, p))) {
      metas.push(JSON.parse(readFileSync(join(root, p, id, "meta.json"), "utf8")));
    }
  }
  return metas
    .filter((m) => m.status !== "deleted")
    .sort((a, b) => b.updatedAt - a.updatedAt)
    .slice(0, 50);
}

const page = async (store: StorageAdapter) => {
  const { items } = await store.listSessions({ limit: 50 });
  if (items.length !== 50) throw new Error(`expected a page of 50, got ${items.length}`);
};

export default defineBench({
  name: "files-list",
  description:
    "files adapter with its index: one page of 50 at 100k vs 1k sessions, and the naive meta.json scan",
  rounds: 7,
  async setup() {
    let t = performance.now();
    fill(join(work, "big"), BIG);
    fill(join(work, "small"), SMALL);
    facts["writing 101,000 sessions"] = `${Math.round(performance.now() - t)} ms`;
    big = files({ home: join(work, "big"), fsync: "never" });
    small = files({ home: join(work, "small"), fsync: "never" });
    t = performance.now();
    await page(big);
    facts["first listing (builds the index from 100,000 session files)"] =
      `${Math.round(performance.now() - t)} ms`;
    await page(small);
  },
  teardown: async () => {
    await big?.close();
    await small?.close();
    rmSync(work, { recursive: true, force: true });
  },
  pairs: () => [
    {
      label: "one page: 100k sessions vs 1k (files + index)",
      subject: () => page(big),
      baseline: () => page(small),
      target: { max: 3 },
    },
    {
      label: "naive scan of 100k meta.json vs one indexed page (files + index)",
      subject: () => naiveScan(join(work, "big")),
      baseline: () => page(big),
      target: { atLeast: 20 },
    },
  ],
  facts: () => facts,
});
