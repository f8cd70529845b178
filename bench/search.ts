/**
 * Search: the FTS5 thread store over 10,000 sessions / 1,000,000 messages (target: a query in
 * ≤ 100 ms in process), against the same query over 1,000 sessions / 100,000 messages; and the scan
 * fallback (what runs without FTS5, e.g. where only sql.js starts) over the sqlite and the sqljs
 * adapters at 1,000 sessions / 100,000 messages. Generated once into a temp dir through bulk paths
 * (threads put directly, adapter stores filled in one transaction), deleted afterwards.
 */
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { inTransaction } from "../src/storage/adapters/_sql-driver.ts";
import sqlite, { openSqliteStore, sqliteStorePath } from "../src/storage/adapters/sqlite.ts";
import sqljs, { sqljsStorePath } from "../src/storage/adapters/sqljs.ts";
import type { StorageAdapter } from "../src/storage/contract.ts";
import type { SessionMeta, StoredMessage } from "../src/storage/records.ts";
import { scanSearch } from "../src/threads/api.ts";
import { deriveThread } from "../src/threads/derive.ts";
import { queryTerms, searchRows } from "../src/threads/search-text.ts";
import { openSqlThreadStore } from "../src/threads/sql-store.ts";
import type { ThreadStore } from "../src/threads/store.ts";
import { defineBench } from "./_harness.ts";

const work = mkdtempSync(join(tmpdir(), "freecode-bench-search-"));
const PER_SESSION = 100;
const BIG = Number(process.env.BENCH_SEARCH_SESSIONS) || 10_000;
const SMALL = 1_000;
const QUERY = { text: "zarovi kelumo" };

/** A deterministic pseudo-word vocabulary with a skewed (Zipf-like) frequency. */
const SYL = ["ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "ze", "po", "gu", "di"];
const vocab = Array.from(
  { length: 4000 },
  (_, i) => SYL[i % 12]! + SYL[Math.floor(i / 12) % 12]! + SYL[Math.floor(i / 144) % 12]!,
);
vocab[40] = "zarovi";
vocab[55] = "kelumo";
let seed = 42;
/** mulberry32: small, fast, and good enough that words co-occur as they would by chance. */
const rand = () => {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};
const sentence = (n: number) =>
  Array.from({ length: n }, () => vocab[Math.floor(vocab.length * rand() ** 3)]).join(" ");

function session(i: number): { meta: SessionMeta; messages: StoredMessage[] } {
  const t0 = 1_700_000_000_000 + i * 10_000;
  const messages: StoredMessage[] = Array.from({ length: PER_SESSION }, (_, j) => ({
    id: `m${j}`,
    role: j % 2 ? "assistant" : "user",
    parts:
      j % 10 === 5
        ? [{ type: "tool", tool: { name: "bash", args: { command: `grep ${sentence(3)}` } } }]
        : [{ type: "text", content: sentence(12) }],
    timestamp: t0 + j,
  }));
  const meta: SessionMeta = {
    id: `s${i}`,
    title: sentence(5),
    projectPath: `/p/${i % 30}`,
    status: "idle",
    createdAt: t0,
    updatedAt: t0 + PER_SESSION,
    turnCount: 50,
    messageCount: PER_SESSION,
  };
  return { meta, messages };
}

function buildThreads(file: string, count: number): ThreadStore {
  const store = openSqlThreadStore(file);
  for (let i = 0; i < count; i += 200) {
    store.batch(() => {
      for (let k = i; k < Math.min(count, i + 200); k++) {
        const { meta, messages } = session(k);
        const derived = deriveThread(meta.id, meta, messages, []);
        store.put(derived, searchRows(derived, messages), {
          updatedAt: meta.updatedAt,
          messageCount: PER_SESSION,
          lastSeq: 0,
          metaHash: "",
        });
      }
    });
  }
  return store;
}

/** The sqlite adapter's store (and a copy for sqljs), filled in one transaction. */
function buildAdapterStores(home: string, count: number): void {
  const d = openSqliteStore(sqliteStorePath(home), "never");
  inTransaction(d, () => {
    for (let i = 0; i < count; i++) {
      const { meta, messages } = session(i);
      d.run(
        "INSERT INTO sessions (id, updated_at, meta, project_path, status, pinned) VALUES (?, ?, ?, ?, ?, 0)",
        [meta.id, meta.updatedAt, JSON.stringify(meta), meta.projectPath, meta.status],
      );
      messages.forEach((m, pos) => {
        d.run("INSERT INTO messages VALUES (?, ?, ?)", [meta.id, pos, JSON.stringify(m)]);
      });
    }
  });
  d.exec("PRAGMA journal_mode = DELETE"); // sql.js reads the file as a plain database
  d.close();
  copyFileSync(sqliteStorePath(home), sqljsStorePath(home));
}

const open: { close(): unknown }[] = [];
let big: ThreadStore;
let small: ThreadStore;
let sqliteAdapter: StorageAdapter;
let sqljsAdapter: StorageAdapter;

export default defineBench({
  name: "search",
  description: `FTS5 over ${BIG} sessions / ${BIG * PER_SESSION} messages vs ${SMALL}; scan fallback (sqlite, sqljs) at ${SMALL}`,
  rounds: 3,
  setup() {
    const t0 = performance.now();
    big = buildThreads(join(work, "big.db"), BIG);
    small = buildThreads(join(work, "small.db"), SMALL);
    buildAdapterStores(join(work, "home"), SMALL);
    sqliteAdapter = sqlite({ home: join(work, "home") });
    sqljsAdapter = sqljs({ home: join(work, "home") });
    open.push(big, small);
    console.log(`generated in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  },
  teardown: async () => {
    for (const o of open) o.close();
    await sqliteAdapter?.close();
    await sqljsAdapter?.close();
    rmSync(work, { recursive: true, force: true });
  },
  pairs: () => {
    const terms = queryTerms(QUERY.text);
    const fts = (s: ThreadStore) => () => s.search!(QUERY, terms);
    return [
      {
        label: `fts5 search: ${BIG * PER_SESSION} vs ${SMALL * PER_SESSION} messages`,
        subject: fts(big),
        baseline: fts(small),
      },
      {
        label: `scan fallback (sqlite adapter) vs fts5, ${SMALL * PER_SESSION} messages`,
        subject: () => scanSearch(sqliteAdapter, QUERY, terms),
        baseline: fts(small),
      },
      {
        label: `scan fallback (sqljs adapter) vs fts5, ${SMALL * PER_SESSION} messages`,
        subject: () => scanSearch(sqljsAdapter, QUERY, terms),
        baseline: fts(small),
      },
    ];
  },
  facts: () => {
    const t0 = performance.now();
    const r = big.search!(QUERY, queryTerms(QUERY.text));
    const ms = performance.now() - t0;
    return {
      [`fts5 query over ${BIG * PER_SESSION} messages`]: `${ms.toFixed(1)} ms (${r.total} matching rows, top ${r.hits.length}); target ≤ 100 ms ${ms <= 100 ? "MET" : "MISSED"}`,
    };
  },
});
