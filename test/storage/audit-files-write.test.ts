/**
 * Regressions from the storage write audit:
 * 1. a torn tail (a crash mid-append) was kept as a bad middle line by the next writer, so
 *    `store verify`, `store migrate` and `rollout verify` failed forever: it is now cut off;
 * 2. an invalid meta.json was reported without its file;
 * 3. a rewrite that kept the message count left search results stale (no meta field moved);
 * 4. a crash inside a files `replaceMessages`, after the new log was renamed in, let healing apply
 *    the old log's byte cursor to the new log (wrong counts, tokens never spent).
 */
import { describe, expect, test } from "bun:test";
import {
  appendFileSync,
  existsSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import factory from "../../src/storage/adapters/files.ts";
import type { StorageAdapter } from "../../src/storage/contract.ts";
import type { StoredMessage } from "../../src/storage/records.ts";
import { openStore } from "../../src/storage/select.ts";
import { searchThreads } from "../../src/threads/api.ts";
import { BUN, parseJson, ROOT, runCli, tempDir, tempHome } from "../_helpers.ts";
import { makeMeta, msg } from "./contract.ts";

/** The directory of session `id` under a files home. */
function sessionDir(home: string, id: string): string {
  const sessions = join(home, "sessions");
  for (const key of readdirSync(sessions)) {
    const dir = join(sessions, key, id);
    try {
      if (statSync(dir).isDirectory()) return dir;
    } catch {
      // not under this project
    }
  }
  throw new Error(`no session directory for ${id}`);
}

const eventsFile = (home: string, id: string) => join(home, "rollout", "sessions", id, "events.jsonl");

describe("a torn tail is cut off by the next writer", () => {
  test("messages.jsonl and events.jsonl: after a CLI append, store verify, rollout verify and migrate pass", async () => {
    await using home = await tempHome();
    const a = factory({ home: home.path, fsync: "never" });
    await a.createSession(makeMeta({ id: "t1" }), [msg("m1"), msg("m2", "assistant")]);
    await a.appendEvents("t1", [{ type: "turn.started", turnId: "turn-0" }]);
    await a.close();
    const log = join(sessionDir(home.path, "t1"), "messages.jsonl");
    const good = readFileSync(log, "utf8");
    appendFileSync(log, '{"id":"m3","role":"user","par'); // a writer died mid-append
    appendFileSync(eventsFile(home.path, "t1"), '{"type":"turn.st');

    const line = JSON.stringify({ role: "user", parts: [{ type: "text", content: "next" }] });
    expect(runCli(["session", "append", "t1"], { home: home.path, stdin: `${line}\n` }).code).toBe(0);
    const event = JSON.stringify({ type: "turn.started", turnId: "turn-1" });
    expect(runCli(["rollout", "append", "t1"], { home: home.path, stdin: `${event}\n` }).code).toBe(0);

    const verify = runCli(["store", "verify", "--json"], { home: home.path });
    expect(parseJson<{ problems: unknown[] }>(verify).problems).toEqual([]);
    expect(verify.code).toBe(0);
    expect(runCli(["rollout", "verify", "t1"], { home: home.path }).code).toBe(0);
    expect(runCli(["store", "migrate", "--to", "json"], { home: home.path }).code).toBe(0);

    const text = readFileSync(log, "utf8");
    expect(text.startsWith(good)).toBe(true);
    // The new line where the fragment was, and nothing else.
    expect(JSON.parse(text.slice(good.length)).parts).toEqual([{ type: "text", content: "next" }]);
    const seqs = readFileSync(eventsFile(home.path, "t1"), "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l).seq);
    expect(seqs).toEqual([1, 2]);
  }, 30_000);

  test("a torn tail longer than the read window, and a log that is all fragment, are cut whole", async () => {
    await using home = await tempHome();
    const a = factory({ home: home.path, fsync: "always" });
    await a.createSession(makeMeta({ id: "t2" }), [msg("m1")]);
    await a.createSession(makeMeta({ id: "t3" }), []);
    await a.close();
    const long = join(sessionDir(home.path, "t2"), "messages.jsonl");
    const good = readFileSync(long, "utf8");
    appendFileSync(
      long,
      `{"id":"m2","role":"user","parts":[{"type":"text","content":"${"x".repeat(200_000)}`,
    );
    const empty = join(sessionDir(home.path, "t3"), "messages.jsonl");
    appendFileSync(empty, '{"id":"m1","ro');
    const b = factory({ home: home.path, fsync: "always" });
    await b.appendMessages("t2", [msg("m3")]);
    await b.appendMessages("t3", [msg("m4")]);
    expect(readFileSync(long, "utf8")).toBe(`${good}${JSON.stringify(msg("m3"))}\n`);
    expect(readFileSync(empty, "utf8")).toBe(`${JSON.stringify(msg("m4"))}\n`);
    for (const id of ["t2", "t3"]) {
      const read = await b.readMessages(id);
      expect(read.issues).toEqual([]);
      expect((await b.getMeta(id))?.messageCount).toBe(read.messages.length);
    }
    await b.close();
  });
});

test("an invalid meta.json is reported with its file (session show)", async () => {
  await using home = await tempHome();
  const a = factory({ home: home.path, fsync: "never" });
  await a.createSession(makeMeta({ id: "bad" }), [msg("m1")]);
  await a.close();
  const file = join(sessionDir(home.path, "bad"), "meta.json");
  const meta = JSON.parse(readFileSync(file, "utf8"));
  writeFileSync(file, JSON.stringify({ ...meta, turnCount: "x" }));
  const r = runCli(["session", "show", "bad"], { home: home.path });
  expect(r.code).toBe(2);
  expect(r.stderr).toContain(`${file}: invalid session meta`);
  expect(r.stderr).toContain("(field turnCount)");
  expect(r.stderr.trim().split("\n")).toHaveLength(1);
});

describe("a rewrite that keeps the message count is seen by search", () => {
  const say = (id: string, text: string, role: StoredMessage["role"] = "user"): StoredMessage => ({
    id,
    role,
    parts: [{ type: "text", content: text }],
    timestamp: 1_700_000_000_000,
  });
  for (const name of ["files", "json", "sqlite", "sqljs", "memory"]) {
    test(`${name}: replaceMessages moves updatedAt; search finds cherry, not apple`, async () => {
      await using home = await tempHome();
      const { adapter } = await openStore(name, { home: home.path, fsync: "never" });
      try {
        const meta = makeMeta({ id: "r1" });
        await adapter.createSession(meta, [say("u1", "apple banana"), say("a1", "noted", "assistant")]);
        expect((await searchThreads(adapter, home.path, { text: "apple" })).total).toBe(1);
        const before = (await adapter.getMeta("r1"))!.updatedAt;
        await adapter.replaceMessages("r1", [say("u2", "cherry durian"), say("a2", "noted", "assistant")], {
          ifMessageCount: 2,
        });
        const after = (await adapter.getMeta("r1"))!;
        expect(after.messageCount).toBe(2);
        expect(after.updatedAt).toBeGreaterThan(before);
        expect((await searchThreads(adapter, home.path, { text: "cherry" })).total).toBe(1);
        expect((await searchThreads(adapter, home.path, { text: "apple" })).total).toBe(0);
      } finally {
        await adapter.close();
      }
    });
  }
});

/**
 * A child that replaces a session's log and SIGKILLs itself right after the k-th rename into the
 * session directory (meta.json or messages.jsonl). The hook is put into `src/util/atomic.ts` as it
 * loads (a Bun plugin), so the adapter runs unchanged up to the chosen point.
 */
const CHILD = `
const [root, home, id, killAfter] = process.argv.slice(2);
Bun.plugin({
  name: "kill-after-rename",
  setup(build) {
    build.onLoad({ filter: /[\\\\/]src[\\\\/]util[\\\\/]atomic\\.ts$/ }, async (args) => {
      const src = await Bun.file(args.path).text();
      const hooked = src.replace("renameSync(tmp, path);", "renameSync(tmp, path); globalThis.__afterRename?.(path);");
      if (hooked === src) throw new Error("no renameSync(tmp, path) in atomic.ts to hook");
      return { loader: "ts", contents: hooked };
    });
  },
});
const { default: files } = await import(root + "/src/storage/adapters/files.ts");
const adapter = files({ home, fsync: "never" });
const messages = JSON.parse(await Bun.stdin.text());
let renames = 0;
globalThis.__afterRename = (path) => {
  if (path.includes("/" + id + "/") && ++renames === Number(killAfter)) process.kill(process.pid, "SIGKILL");
};
await adapter.replaceMessages(id, messages);
await adapter.close();
`;

describe("a crash inside a files replace leaves counters that match the log", () => {
  const usage = (n: number) => ({ inputTokens: n, outputTokens: 0 });
  const oldLog = [
    msg("m1", "user"),
    msg("m2", "assistant", { responseId: "r1", usage: usage(10) }),
    msg("m3", "user"),
    msg("m4", "assistant", { responseId: "r2", usage: usage(20) }),
    msg("m5", "user"),
  ];
  // Longer than the old log: the old byte cursor lands inside it, with whole lines after it.
  const newLog = [1, 2, 3, 4].map((i) =>
    msg(`n${i}`, i % 2 ? "user" : "assistant", {
      parts: [{ type: "text", content: `summary ${i} ${"y".repeat(300)}` }],
      ...(i % 2 ? {} : { responseId: `s${i}`, usage: usage(500) }),
    }),
  );

  for (const killAfter of [1, 2]) {
    test(`killed after rename ${killAfter} of the replace: messageCount and tokens agree with the log`, async () => {
      await using home = await tempHome();
      await using scratch = await tempDir();
      const a = factory({ home: home.path, fsync: "never" });
      await a.createSession(makeMeta({ id: "c1" }), oldLog);
      const before = (await a.getMeta("c1"))!;
      await a.close();
      const log = join(sessionDir(home.path, "c1"), "messages.jsonl");
      const oldSize = statSync(log).size;
      expect(newLog.map((m) => JSON.stringify(m)).join("\n").length).toBeGreaterThan(oldSize);

      const child = join(scratch.path, "replace-child.ts");
      writeFileSync(child, CHILD);
      const proc = Bun.spawnSync([BUN, child, ROOT, home.path, "c1", String(killAfter)], {
        stdin: new Blob([JSON.stringify(newLog)]),
        stderr: "pipe",
      });
      expect([proc.signalCode, proc.stderr.toString()]).toEqual(["SIGKILL", ""]);

      const b: StorageAdapter = factory({ home: home.path, fsync: "never" });
      const ids = (await b.readMessages("c1")).messages.map((m) => m.id);
      expect([oldLog.map((m) => m.id), newLog.map((m) => m.id)]).toContainEqual(ids);
      const healed = (await b.getMeta("c1"))!;
      expect([healed.messageCount, healed.turnCount, healed.tokens]).toEqual([
        ids.length,
        before.turnCount,
        before.tokens,
      ]);
      // A writer takes the session over and writes the meta back: still right on disk.
      await b.appendMessages("c1", [msg("m9", "user", { timestamp: 1_800_000_000_000 })]);
      await b.close();
      const onDisk = JSON.parse(readFileSync(join(sessionDir(home.path, "c1"), "meta.json"), "utf8"));
      expect([onDisk.messageCount, onDisk.turnCount, onDisk.tokens]).toEqual([
        ids.length + 1,
        before.turnCount + 1,
        before.tokens,
      ]);
    }, 30_000);
  }
});

/** A files session holding one message (`m1`), and its messages log. */
async function oneMessageSession(home: string) {
  const a = factory({ home, fsync: "never" });
  const meta = makeMeta();
  await a.createSession(meta, [msg("m1")]);
  await a.close();
  return { meta, log: join(sessionDir(home, meta.id), "messages.jsonl") };
}

describe("a large append killed part way is undone by the next writer (kill -9 review)", () => {
  test("the complete lines a killed batch left are cut back; a whole batch is kept; no mark is left", async () => {
    await using home = await tempHome();
    const { meta, log } = await oneMessageSession(home.path);
    const line = (id: string) => `${JSON.stringify(msg(id))}\n`;
    // A writer killed inside a marked batch: its mark, and the first complete lines it got out.
    const { ino, size } = statSync(log);
    writeFileSync(`${log}.batch`, JSON.stringify({ ino, from: size, to: size + 5_000_000 }));
    appendFileSync(log, line("half-1") + line("half-2"));
    const b = factory({ home: home.path, fsync: "never" });
    await b.appendMessages(meta.id, [msg("m2")]);
    expect((await b.readMessages(meta.id)).messages.map((m) => m.id)).toEqual(["m1", "m2"]);
    expect(readdirSync(sessionDir(home.path, meta.id))).not.toContain("messages.jsonl.batch");
    await b.close();
    // A writer that died after its batch was whole, before it removed the mark: the batch stays.
    const whole = line("w1") + line("w2");
    const at = statSync(log);
    writeFileSync(`${log}.batch`, JSON.stringify({ ino: at.ino, from: at.size, to: at.size + whole.length }));
    appendFileSync(log, whole);
    const c = factory({ home: home.path, fsync: "never" });
    await c.appendMessages(meta.id, [msg("m3")]);
    expect((await c.readMessages(meta.id)).messages.map((m) => m.id)).toEqual(["m1", "m2", "w1", "w2", "m3"]);
    // A real large batch (events: over the 1 MiB mark) leaves no mark behind.
    const big = Array.from({ length: 600 }, (_, i) => ({ type: "note", text: `${i} ${"x".repeat(2000)}` }));
    await c.appendEvents(meta.id, big);
    expect(readdirSync(join(home.path, "rollout", "sessions", meta.id))).toEqual(["events.jsonl"]);
    let events = 0;
    for await (const r of c.readEvents(meta.id)) if (r.event) events++;
    expect(events).toBe(600);
    await c.close();
  });
});

test("a process killed inside a large append leaves all of its batch or none of it", async () => {
  await using home = await tempHome();
  const { meta, log } = await oneMessageSession(home.path);
  const before = statSync(log).size;
  const writer = `
    import factory from ${JSON.stringify(join(ROOT, "src", "storage", "adapters", "files.ts"))};
    const a = factory({ home: ${JSON.stringify(home.path)}, fsync: "never" });
    const text = "x".repeat(2000);
    const batch = Array.from({ length: 20000 }, (_, i) => ({ id: "b" + i, role: "user", parts: [{ type: "text", content: text }], timestamp: 1 }));
    await a.appendMessages(${JSON.stringify(meta.id)}, batch);
    await a.close();`;
  const child = Bun.spawn([BUN, "-e", writer], { stdout: "ignore", stderr: "ignore" });
  // Killed the moment the log starts to grow: inside its one large write, most of the time.
  const deadline = Date.now() + 20_000;
  while (statSync(log).size === before && Date.now() < deadline) await Bun.sleep(1);
  child.kill("SIGKILL");
  await child.exited;
  const b = factory({ home: home.path, fsync: "never" });
  await b.appendMessages(meta.id, [msg("after")]);
  const ids = (await b.readMessages(meta.id)).messages.map((m) => m.id);
  await b.close();
  const batch = ids.filter((id) => id.startsWith("b"));
  expect([0, 20000]).toContain(batch.length);
  expect(ids.at(-1)).toBe("after");
}, 60_000);

describe("a killed large append is not read before the next writer cuts it (CLI review 1)", () => {
  /** A dead writer's mark over the lines its batch got out (and a torn one): what a kill leaves. */
  function killedBatch(log: string, ids: string[]): void {
    const { ino, size } = statSync(log);
    const by = { pid: 2 ** 22 + 7, start: 1, host: hostname() };
    writeFileSync(`${log}.batch`, JSON.stringify({ ino, from: size, to: size + 5_000_000, by }));
    appendFileSync(log, `${ids.map((id) => JSON.stringify(msg(id))).join("\n")}\n{"id":"torn`);
  }

  test("readers, counts, export, fork and trace leave the batch out; verify names it; --repair cuts it", async () => {
    await using home = await tempHome();
    const { meta, log } = await oneMessageSession(home.path);
    killedBatch(log, ["half-1", "half-2"]);
    const a = factory({ home: home.path, fsync: "never" });
    await a.appendEvents(meta.id, [{ type: "turn.started", turnId: "t0" }]);
    const events = eventsFile(home.path, meta.id);
    const ev = statSync(events);
    writeFileSync(
      `${events}.batch`,
      JSON.stringify({
        ino: ev.ino,
        from: ev.size,
        to: ev.size + 9_000_000,
        by: { pid: 2 ** 22 + 7, start: 1, host: "x" },
      }),
    );
    appendFileSync(
      events,
      `${JSON.stringify({ type: "turn.started", turnId: "t1", id: "e2", seq: 2, aggregateID: meta.id, timestamp: 2 })}\n`,
    );
    await a.close();
    const r = factory({ home: home.path, fsync: "never" });
    expect((await r.readMessages(meta.id)).messages.map((m) => m.id)).toEqual(["m1"]);
    expect((await r.readMessages(meta.id)).issues).toEqual([]);
    expect((await r.getMeta(meta.id))!.messageCount).toBe(1);
    expect((await r.listSessions({})).items.find((m) => m.id === meta.id)!.messageCount).toBe(1);
    const seqs: number[] = [];
    for await (const e of r.readEvents(meta.id)) if (e.event) seqs.push(e.event.seq);
    expect(seqs).toEqual([1]);
    await r.close();
    // The CLI: export and fork copy what was acknowledged; trace reads the file up to the mark.
    const out = join(home.path, "doc.json");
    expect(runCli(["session", "export", meta.id, "--out", out], { home: home.path }).code).toBe(0);
    expect(JSON.parse(readFileSync(out, "utf8")).messages.map((m: StoredMessage) => m.id)).toEqual(["m1"]);
    const fork = parseJson<{ messageCount: number }>(
      runCli(["session", "fork", meta.id, "--json"], { home: home.path }),
    );
    expect(fork.messageCount).toBe(1);
    expect(
      parseJson<{ eventCount: number }>(runCli(["trace", meta.id, "--json"], { home: home.path })).eventCount,
    ).toBe(1);
    // verify names both marks (their writer is dead) and --repair cuts the logs back.
    const { adapter } = await openStore("files", { home: home.path });
    const { verifyStore } = await import("../../src/storage/verify.ts");
    const found = (await verifyStore(adapter, home.path)).problems.filter(
      (p) => p.kind === "unfinished_batch",
    );
    expect(found.map((p) => p.file).sort()).toEqual([events, log].sort());
    expect(found[0]!.detail).toMatch(/is unfinished: \d+ of its \d+ bytes are in the log/);
    const repaired = await verifyStore(adapter, home.path, true);
    expect(repaired.ok).toBe(true);
    expect(existsSync(`${log}.batch`) || existsSync(`${events}.batch`)).toBe(false);
    expect(readFileSync(log, "utf8").trimEnd().split("\n")).toHaveLength(1);
    expect((await verifyStore(adapter, home.path)).problems).toEqual([]);
    await adapter.close();
  }, 60_000);

  test("a home copied with its mark (new inodes) still hides the batch; rollout verify stops there too", async () => {
    await using home = await tempHome();
    const { meta, log } = await oneMessageSession(home.path);
    killedBatch(log, ["half-1", "half-2"]);
    // A copy of the log under a new inode, as cp -a, rsync or a backup restore make it.
    const copy = `${log}.copy`;
    writeFileSync(copy, readFileSync(log));
    rmSync(log);
    renameSync(copy, log);
    const a = factory({ home: home.path, fsync: "never" });
    expect((await a.readMessages(meta.id)).messages.map((m) => m.id)).toEqual(["m1"]);
    await a.close();
    // An events log with a killed batch: rollout verify reads what was acknowledged, and says so.
    const events = eventsFile(home.path, meta.id);
    const b = factory({ home: home.path, fsync: "never" });
    await b.appendEvents(meta.id, [{ type: "turn.started", turnId: "t0" }]);
    await b.close();
    const size = statSync(events).size;
    writeFileSync(`${events}.batch`, JSON.stringify({ ino: 1, from: size, to: size + 9_000_000 }));
    appendFileSync(
      events,
      `${JSON.stringify({ type: "turn.started", turnId: "t1", id: "e2", seq: 2, aggregateID: meta.id, timestamp: 2 })}\n{"ty`,
    );
    const r = parseJson<{ events: number; problems: { kind: string }[] }>(
      runCli(["rollout", "verify", meta.id, "--json"], { home: home.path }),
    );
    expect([r.events, r.problems.map((p) => p.kind)]).toEqual([1, ["unfinished_batch"]]);
  });

  test("a mark of another host's writer holding the lock is named, not repaired (no wait); freed, it is", async () => {
    await using home = await tempHome();
    const { meta, log } = await oneMessageSession(home.path);
    const { ino, size } = statSync(log);
    const by = { pid: 4242, start: 1, host: "buildbox-2" };
    writeFileSync(`${log}.batch`, JSON.stringify({ ino, from: size, to: size + 5_000_000, by }));
    appendFileSync(log, `${JSON.stringify(msg("half"))}\n`);
    const lock = join(home.path, "state", "locks", `s-${meta.id}.lock`);
    writeFileSync(lock, JSON.stringify(by));
    const { adapter } = await openStore("files", { home: home.path });
    const { verifyStore } = await import("../../src/storage/verify.ts");
    const t0 = performance.now();
    const held = (await verifyStore(adapter, home.path, true)).problems.filter(
      (p) => p.kind === "unfinished_batch",
    );
    expect(performance.now() - t0).toBeLessThan(5000);
    expect(held.map((p) => [p.repairable, p.repaired ?? false])).toEqual([[false, false]]);
    expect(held[0]!.detail).toContain("process 4242 on buildbox-2 (it cannot be checked from here");
    // rollout verify says the same of an events log's batch by that host (last review 6).
    await adapter.appendEvents(meta.id, [{ type: "turn.started", turnId: "t0" }]);
    const events = eventsFile(home.path, meta.id);
    const at = statSync(events);
    writeFileSync(
      `${events}.batch`,
      JSON.stringify({ ino: at.ino, from: at.size, to: at.size + 5_000_000, by }),
    );
    appendFileSync(events, '{"type":"turn.st');
    const { verifyRollout } = await import("../../src/rollout/verify.ts");
    const rv = await verifyRollout({ file: events, sessionId: meta.id }, meta.id);
    expect(rv.problems.map((p) => p.message)).toEqual([
      expect.stringContaining("on buildbox-2, which cannot be checked"),
    ]);
    rmSync(`${events}.batch`);
    rmSync(lock); // what `store unlock --host buildbox-2` does once that host's writer is gone
    const freed = (await verifyStore(adapter, home.path, true)).problems.filter(
      (p) => p.kind === "unfinished_batch",
    );
    expect(freed.map((p) => p.repaired)).toEqual([true]);
    expect(existsSync(`${log}.batch`)).toBe(false);
    await adapter.close();
  });

  test("a live writer's mark is left alone by verify; the mark is created 0600", async () => {
    await using home = await tempHome();
    const { meta, log } = await oneMessageSession(home.path);
    const { writeBatchMark } = await import("../../src/storage/batch-mark.ts");
    const { ino, size } = statSync(log);
    writeBatchMark(log, ino, size, size + 5_000_000); // this process: alive
    expect(statSync(`${log}.batch`).mode & 0o777).toBe(0o600);
    const { adapter } = await openStore("files", { home: home.path });
    const { verifyStore } = await import("../../src/storage/verify.ts");
    expect((await verifyStore(adapter, home.path)).problems).toEqual([]);
    // rollout verify agrees: a batch under way is no problem (final review 8).
    await adapter.appendEvents(meta.id, [{ type: "turn.started", turnId: "t0" }]);
    const events = eventsFile(home.path, meta.id);
    const at = statSync(events);
    writeBatchMark(events, at.ino, at.size, at.size + 5_000_000);
    appendFileSync(events, '{"type":"turn.st');
    const { verifyRollout } = await import("../../src/rollout/verify.ts");
    const r = await verifyRollout({ file: events, sessionId: meta.id }, meta.id);
    expect([r.ok, r.events, r.problems]).toEqual([true, 1, []]);
    await adapter.close();
  });
});

describe("messages lost from a log stay visible (CLI review 2)", () => {
  test("a log cut below what meta.json counted: the count is kept, verify says so, gc keeps the session", async () => {
    await using home = await tempHome();
    const a = factory({ home: home.path, fsync: "never" });
    const meta = makeMeta();
    await a.createSession(meta, [msg("m1"), msg("m2"), msg("m3")]);
    await a.close();
    const log = join(sessionDir(home.path, meta.id), "messages.jsonl");
    writeFileSync(log, `${readFileSync(log, "utf8").split("\n")[0]}\n`);
    const b = factory({ home: home.path, fsync: "never" });
    expect((await b.getMeta(meta.id))!.messageCount).toBe(3);
    expect((await b.listSessions({})).items[0]!.messageCount).toBe(3);
    const { verifyStore } = await import("../../src/storage/verify.ts");
    const drift = (await verifyStore(b, home.path)).problems;
    expect(drift.map((p) => [p.kind, p.detail])).toEqual([
      [
        "count_drift",
        expect.stringContaining("meta says 3 messages, the log holds 1 (messages it counted are gone"),
      ],
    ]);
    // A writer keeps the count too (it does not recount the loss away), until --repair recounts.
    await b.appendMessages(meta.id, [msg("m4")]);
    expect((await b.getMeta(meta.id))!.messageCount).toBe(4);
    await b.close();
    // Deleted outright (a session untouched since 2023): gc does not take it for an empty shell.
    const old = makeMeta();
    const d = factory({ home: home.path, fsync: "never" });
    await d.createSession(old, [msg("o1"), msg("o2")]);
    await d.close();
    rmSync(join(sessionDir(home.path, old.id), "messages.jsonl"));
    rmSync(log);
    const gc = parseJson<{ sessions: { id: string; reason: string }[] }>(
      runCli(["gc", "--json"], { home: home.path }),
    );
    expect(gc.sessions).toEqual([]);
    const c = factory({ home: home.path, fsync: "never" });
    const fixed = await verifyStore(c, home.path, true);
    expect(fixed.ok).toBe(true);
    expect((await c.getMeta(meta.id))!.messageCount).toBe(0);
    expect((await c.getMeta(old.id))!.messageCount).toBe(0);
    await c.close();
  });
});

test("store verify --repair while another process appends leaves the count right (storage review 4)", async () => {
  await using home = await tempHome();
  const a = factory({ home: home.path, fsync: "never" });
  const meta = makeMeta();
  await a.createSession(meta, [msg("m0")]);
  await a.close();
  const appender = `
    import factory from ${JSON.stringify(join(ROOT, "src", "storage", "adapters", "files.ts"))};
    const a = factory({ home: ${JSON.stringify(home.path)}, fsync: "never" });
    const end = Date.now() + 2500;
    for (let i = 0; Date.now() < end; i++) {
      await a.appendMessages(${JSON.stringify(meta.id)}, [{ id: "a" + i, role: "user", parts: [{ type: "text", content: "x" }], timestamp: 1 }]);
      await Bun.sleep(1);
    }
    await a.close();`;
  const child = Bun.spawn([BUN, "-e", appender], { stdout: "ignore", stderr: "pipe" });
  const { verifyStore } = await import("../../src/storage/verify.ts");
  let runs = 0;
  while (child.exitCode === null) {
    const { adapter } = await openStore("files", { home: home.path });
    await verifyStore(adapter, home.path, true);
    await adapter.close();
    runs++;
    await Bun.sleep(20); // a turn of the event loop: the child's exit is seen
  }
  expect(await child.exited).toBe(0);
  expect(runs).toBeGreaterThan(2);
  const { adapter } = await openStore("files", { home: home.path });
  const stored = (await adapter.readMessages(meta.id)).messages.length;
  expect((await adapter.getMeta(meta.id))!.messageCount).toBe(stored);
  expect((await verifyStore(adapter, home.path)).problems).toEqual([]);
  await adapter.close();
}, 60_000);
