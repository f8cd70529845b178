/**
 * Regression tests for three audit findings about the files adapter's derived views:
 * 1. after a writer is SIGKILLed before its lease is released, listing, search and migrate read the
 *    counters meta.json had before the crash (and a failed migrate left a partial target behind);
 * 2. a session id starting with `.` was accepted, then vanished from the files listing and from a
 *    "verified" migration;
 * 3. `store verify` hid an unreadable meta.json behind `index_drift` and said `--repair` fixed it.
 */
import { expect, test } from "bun:test";
import { cpSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import files from "../../src/storage/adapters/files.ts";
import json from "../../src/storage/adapters/json.ts";
import memory from "../../src/storage/adapters/memory.ts";
import sqlite from "../../src/storage/adapters/sqlite.ts";
import sqljs from "../../src/storage/adapters/sqljs.ts";
import type { AdapterFactory } from "../../src/storage/contract.ts";
import { migrateStore } from "../../src/storage/migrate.ts";
import { verifyStore } from "../../src/storage/verify.ts";
import { searchThreads } from "../../src/threads/api.ts";
import { BUN, parseJson, ROOT, runCli, tempHome } from "../_helpers.ts";
import { makeMeta, msg } from "./contract.ts";

const PROJECT = "/home/a/my-project";
const sessionDir = (home: string, id: string) => join(home, "sessions", "home__a__my_h_project", id);

/** Append one acknowledged message with usage from a child process, then SIGKILL it before its lease ends. */
async function crashAfterAppend(home: string, id: string) {
  const script = `
    import { openStore } from ${JSON.stringify(join(ROOT, "src/storage/select.ts"))};
    const { adapter } = await openStore("files", { home: ${JSON.stringify(home)}, fsync: "never" });
    await adapter.appendMessages(${JSON.stringify(id)}, [{
      id: "a1", role: "assistant", parts: [{ type: "text", content: "zebraword answer" }],
      timestamp: 1_800_000_000_000, usage: { inputTokens: 60, outputTokens: 40 }, responseId: "resp-1",
    }]);
    process.stdout.write("acknowledged\\n");
    process.kill(process.pid, "SIGKILL");
  `;
  const child = Bun.spawn([BUN, "-e", script], { stdout: "pipe", stderr: "pipe" });
  const out = await new Response(child.stdout).text();
  expect(await child.exited).not.toBe(0);
  expect(out).toBe("acknowledged\n");
  expect(child.signalCode).toBe("SIGKILL");
}

/** A session "s1" with one user message, listed and indexed (search too) before the crash. */
async function crashedStore(home: string) {
  const a = files({ home, fsync: "never" });
  await a.createSession(makeMeta({ id: "s1", projectPath: PROJECT, turnCount: 1 }), [msg("u1")]);
  expect((await a.listSessions({})).items[0]?.messageCount).toBe(1);
  expect((await searchThreads(a, home, { text: "zebraword" })).total).toBe(0);
  await a.close();
  await crashAfterAppend(home, "s1");
}

test("regression: a crash before the lease ends leaves listing and search stale", async () => {
  await using home = await tempHome();
  await crashedStore(home.path);
  const a = files({ home: home.path, fsync: "never" });
  const healed = await a.getMeta("s1");
  expect(healed).toMatchObject({
    messageCount: 2,
    usageResponseId: "resp-1",
    tokens: { input: 60, output: 40 },
  });
  const listed = (await a.listSessions({})).items;
  expect(listed).toEqual([healed!]);
  const found = await searchThreads(a, home.path, { text: "zebraword" });
  expect(found.hits.map((h) => h.sessionId)).toEqual(["s1"]);
  await a.close();
}, 30_000);

test("regression: migrate after a crash copies the healed meta (turnCount, tokens, usageResponseId)", async () => {
  await using home = await tempHome();
  await crashedStore(home.path);
  const source = files({ home: home.path, fsync: "never" });
  const target = sqlite({ home: home.path });
  const report = await migrateStore(source, target);
  expect(report.copied).toMatchObject({ sessions: 1, messages: 2 });
  expect(await target.getMeta("s1")).toEqual((await source.getMeta("s1"))!);
  expect(await target.getMeta("s1")).toMatchObject({ tokens: { input: 60 }, usageResponseId: "resp-1" });
  await source.close();
  await target.close();
}, 30_000);

test("regression: a failed migrate leaves the target empty, so a retry is not refused", async () => {
  await using home = await tempHome();
  const source = files({ home: home.path, fsync: "never" });
  for (const [id, at] of [
    ["new", 3],
    ["mid", 2],
    ["old", 1],
  ] as const)
    await source.createSession(makeMeta({ id, projectPath: PROJECT, updatedAt: at }), [msg("m1")]);
  await source.appendEvents("new", [{ type: "session.started" }]);
  // The oldest session, copied last, has a bad line in the middle of its log.
  const log = join(sessionDir(home.path, "old"), "messages.jsonl");
  const good = readFileSync(log, "utf8");
  writeFileSync(log, `not json\n${good}`);
  const target = sqlite({ home: home.path });
  await expect(migrateStore(source, target)).rejects.toMatchObject({ code: "check_failed" });
  expect((await target.listSessions({ all: true })).total).toBe(0);
  expect(await target.listEventLogs()).toEqual([]);
  writeFileSync(log, good);
  expect((await migrateStore(source, target)).copied.sessions).toBe(3);
  await source.close();
  await target.close();
}, 30_000);

const adapters: [string, AdapterFactory][] = [
  ["files", files],
  ["sqlite", sqlite],
  ["sqljs", sqljs],
  ["json", json],
  ["memory", memory],
];

test("regression: a session id starting with '.' is refused by every adapter", async () => {
  for (const [name, factory] of adapters) {
    await using home = await tempHome();
    const a = factory({ home: home.path });
    const created = a.createSession(makeMeta({ id: ".hidden", projectPath: PROJECT }), [msg("m1")]);
    await expect(created, name).rejects.toMatchObject({
      code: "bad_input",
      message: expect.stringContaining("'.'"),
    });
    expect((await a.listSessions({ all: true })).total, name).toBe(0);
    await a.close();
  }
  await using home = await tempHome();
  const r = runCli(["session", "create", "--id", ".hidden", "--prompt", "hi", "--project", "/p"], {
    home: home.path,
  });
  expect(r.code).toBe(2);
  expect(r.stderr).toContain("must not start with '.'");
}, 30_000);

/** A files store with session "ok" and a copy of it under the directory (and meta id) `id`. */
async function storeWithHandMadeSession(
  home: string,
  id: string,
  meta: (m: Record<string, unknown>) => void,
) {
  const a = files({ home, fsync: "never" });
  await a.createSession(makeMeta({ id: "ok", projectPath: PROJECT }), [msg("m1")]);
  await a.listSessions({});
  await a.close();
  cpSync(sessionDir(home, "ok"), sessionDir(home, id), { recursive: true });
  const file = join(sessionDir(home, id), "meta.json");
  const m = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
  m.id = id;
  meta(m);
  writeFileSync(file, JSON.stringify(m));
}

test("regression: migrate refuses a store holding a session its listing cannot see ('.hidden')", async () => {
  await using home = await tempHome();
  await storeWithHandMadeSession(home.path, ".hidden", () => {});
  const source = files({ home: home.path, fsync: "never" });
  const target = sqlite({ home: home.path });
  await expect(migrateStore(source, target)).rejects.toMatchObject({
    code: "check_failed",
    message: expect.stringContaining(".hidden"),
  });
  expect((await target.listSessions({ all: true })).total).toBe(0);
  const report = await verifyStore(source, home.path, true);
  expect(report.ok).toBe(false);
  expect(report.problems.find((p) => p.sessionId === ".hidden")).toMatchObject({ repairable: false });
  await source.close();
  await target.close();
}, 30_000);

test("regression: verify names an unreadable meta.json and does not call it repaired", async () => {
  await using home = await tempHome();
  await storeWithHandMadeSession(home.path, "bad", (m) => {
    m.turnCount = "one";
  });
  const found = runCli(["store", "verify", "--json"], { home: home.path });
  expect(found.code).toBe(1);
  const problems = parseJson<{ problems: { kind: string; file?: string; detail: string }[] }>(found).problems;
  expect(problems).toContainEqual(
    expect.objectContaining({
      kind: "bad_meta",
      file: join(sessionDir(home.path, "bad"), "meta.json"),
      detail: expect.stringContaining("turnCount"),
    }),
  );
  const repair = runCli(["store", "verify", "--repair"], { home: home.path });
  expect(repair.code).toBe(1);
  expect(repair.stdout).toContain("needs attention");
  expect(repair.stdout).not.toMatch(/\bok\n$/);
  expect(readdirSync(join(home.path, "sessions", "home__a__my_h_project")).sort()).toEqual(["bad", "ok"]);
}, 30_000);

test("regression: a create that died left its temporary directory: reported, removed by --repair, then ok", async () => {
  await using home = await tempHome();
  await storeWithHandMadeSession(home.path, "ok2", () => {});
  const dead = Bun.spawnSync([BUN, "-e", ""]).pid;
  const tmp = sessionDir(home.path, `.tmp-ok3-${dead}-1`);
  cpSync(sessionDir(home.path, "ok2"), tmp, { recursive: true });
  const a = files({ home: home.path, fsync: "never" });
  expect((await verifyStore(a, home.path)).problems).toEqual([
    expect.objectContaining({ kind: "orphan_dir", file: tmp, repairable: true }),
  ]);
  expect((await verifyStore(a, home.path, true)).ok).toBe(true);
  expect((await verifyStore(a, home.path)).problems).toEqual([]);
  await a.close();
});
