/**
 * The sqlite adapter's own guarantees beyond the contract: the versioned schema (a database made by
 * schema 1 opens and is migrated in place, data kept), refusal of a newer schema, WAL, private file
 * modes, and the busy timeout turning a held write lock into waiting rather than SQLITE_BUSY.
 */
import { Database } from "bun:sqlite";
import { expect, test } from "bun:test";
import { mkdirSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { SCHEMA_VERSION, V1_DDL } from "../../src/storage/adapters/_sql-schema.ts";
import sqlite, { sqliteStorePath } from "../../src/storage/adapters/sqlite.ts";
import type { StoredMessage } from "../../src/storage/records.ts";
import { BUN, ROOT, tempHome } from "../_helpers.ts";

const meta = (id: string, extra: Record<string, unknown> = {}) => ({
  id,
  title: `title ${id}`,
  projectPath: "/work/p",
  status: "idle",
  createdAt: 1,
  updatedAt: 10,
  turnCount: 1,
  messageCount: 1,
  ...extra,
});
const message = (id: string, text: string) => ({
  id,
  role: "user",
  parts: [{ type: "text", content: text }],
  timestamp: 5,
});

/** A schema-1 database as the first release wrote it (DDL kept in the schema module). */
function makeV1(file: string): void {
  mkdirSync(dirname(file), { recursive: true });
  const db = new Database(file, { create: true });
  db.exec(V1_DDL);
  db.exec("PRAGMA user_version = 1");
  const put = db.query("INSERT INTO sessions (id, updated_at, meta) VALUES (?, ?, ?)");
  put.run("a", 10, JSON.stringify(meta("a")));
  put.run("b", 20, JSON.stringify(meta("b", { status: "deleted", updatedAt: 20, pinned: true })));
  db.query("INSERT INTO messages VALUES (?, ?, ?)").run("a", 0, JSON.stringify(message("m1", "hello v1")));
  const ev = db.query("INSERT INTO events VALUES (?, ?, ?)");
  for (const seq of [1, 2, 3]) {
    ev.run(
      "a",
      seq,
      JSON.stringify({
        type: "turn.started",
        id: `e${seq}`,
        seq,
        aggregateID: "a",
        timestamp: seq,
        turnId: "t",
      }),
    );
  }
  db.close();
}

test("a schema-1 database is migrated in place and keeps its data", async () => {
  await using home = await tempHome();
  const file = sqliteStorePath(home.path);
  makeV1(file);
  const store = sqlite({ home: home.path });
  try {
    const page = await store.listSessions({});
    expect(page.items.map((m) => m.id)).toEqual(["a"]); // b is deleted: hidden, and counted apart
    expect(page.total).toBe(1);
    expect((await store.listSessions({ all: true, pinnedFirst: true })).items.map((m) => m.id)).toEqual([
      "b",
      "a",
    ]);
    expect((await store.readMessages("a")).messages[0]?.parts[0]?.content).toBe("hello v1");
    // seq continues from the migrated event head, not from 1.
    const [next] = await store.appendEvents("a", [{ type: "turn.started", turnId: "t2" }]);
    expect(next?.seq).toBe(4);
    expect(await store.listEventLogs()).toEqual(["a"]);
    // Schema 3 took the migrated message's id into its index: a caller giving it again is refused.
    await expect(
      store.appendMessages("a", [message("m1", "again") as StoredMessage], { given: [true] }),
    ).rejects.toThrow("message id m1 is already in session a");
    await store.appendMessages("a", [message("m2", "new") as StoredMessage], { given: [true] });
  } finally {
    await store.close();
  }
  const db = new Database(file);
  expect((db.query("PRAGMA user_version").get() as { user_version: number }).user_version).toBe(
    SCHEMA_VERSION,
  );
  db.close();
});

test("a database from a newer schema is refused, not guessed at", async () => {
  await using home = await tempHome();
  const file = sqliteStorePath(home.path);
  mkdirSync(dirname(file), { recursive: true });
  const db = new Database(file, { create: true });
  db.exec(`PRAGMA user_version = ${SCHEMA_VERSION + 1}`);
  db.close();
  const store = sqlite({ home: home.path });
  await expect(store.listSessions({})).rejects.toMatchObject({ code: "bad_input" });
  await store.close();
});

test("the database is WAL and private", async () => {
  await using home = await tempHome();
  const store = sqlite({ home: home.path });
  await store.createSession(meta("s") as never, [message("m", "x")] as never);
  const file = sqliteStorePath(home.path);
  expect(statSync(file).mode & 0o777).toBe(0o600);
  await store.close();
  const db = new Database(file);
  expect((db.query("PRAGMA journal_mode").get() as { journal_mode: string }).journal_mode).toBe("wal");
  db.close();
});

test("a writer waits for another process's transaction instead of failing with SQLITE_BUSY", async () => {
  await using home = await tempHome();
  const store = sqlite({ home: home.path });
  await store.createSession(meta("s") as never, [] as never);
  const file = sqliteStorePath(home.path);
  // Another process takes the write lock and holds it for 700 ms.
  const holder = Bun.spawn(
    [
      BUN,
      "-e",
      `import { Database } from "bun:sqlite";
       const db = new Database(${JSON.stringify(file)});
       db.exec("BEGIN IMMEDIATE"); console.log("held");
       await Bun.sleep(700); db.exec("COMMIT"); db.close();`,
    ],
    { cwd: ROOT, stdout: "pipe" },
  );
  const reader = holder.stdout.getReader();
  await reader.read(); // "held"
  const t0 = performance.now();
  await store.appendMessages("s", [message("m", "after the lock")] as never);
  expect(performance.now() - t0).toBeGreaterThan(300);
  expect((await store.readMessages("s")).messages).toHaveLength(1);
  expect(await holder.exited).toBe(0);
  await store.close();
});
