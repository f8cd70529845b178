/**
 * sqljs appends: 10,000 messages appended one call at a time through the sqljs adapter, against the
 * same through the sqlite adapter (target ≤ 5×). sql.js can only save by exporting the whole
 * database, so this checks that an append costs a journal line, not an export.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import sqlite from "../src/storage/adapters/sqlite.ts";
import sqljs from "../src/storage/adapters/sqljs.ts";
import type { AdapterFactory } from "../src/storage/contract.ts";
import { defineBench } from "./_harness.ts";
import { benchMeta } from "./_meta.ts";

const work = mkdtempSync(join(tmpdir(), "freecode-bench-sqljs-append-"));
const COUNT = 10_000;
let round = 0;

/** A fresh store, one session, 10,000 single appends, closed (the final flush included). */
const appendAll = (factory: AdapterFactory, name: string) => async () => {
  const home = join(work, `${name}-${round++}`);
  const store = factory({ home, fsync: "batch" });
  await store.createSession(benchMeta("s"), []);
  for (let i = 0; i < COUNT; i++) {
    await store.appendMessages("s", [
      {
        id: `m${i}`,
        role: i % 2 ? "assistant" : "user",
        parts: [{ type: "text", content: `message ${i} ${"lorem ipsum ".repeat(8)}` }],
        timestamp: i,
      },
    ]);
  }
  await store.close();
  rmSync(home, { recursive: true, force: true });
};

export default defineBench({
  name: "sqljs-append",
  description: `${COUNT.toLocaleString("en")} single appends: sqljs vs sqlite (fsync batch, close included)`,
  rounds: 3,
  teardown: () => rmSync(work, { recursive: true, force: true }),
  pairs: () => [
    {
      label: `${COUNT} appends: sqljs vs sqlite`,
      subject: appendAll(sqljs, "sqljs"),
      baseline: appendAll(sqlite, "sqlite"),
      target: { max: 5 },
      units: COUNT,
      unitName: "appends",
    },
  ],
});
