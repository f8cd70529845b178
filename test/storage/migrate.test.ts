/**
 * Migration between adapters: a store with every kind of record (counters, usage, tool parts,
 * unknown fields, soft-deleted sessions, context caches, rollout-only logs) is copied
 * files → sqlite → sqljs → json → files, and every hop has the same content hash. A non-empty target
 * is refused; a verification failure is reported, never hidden.
 */
import { expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import files from "../../src/storage/adapters/files.ts";
import json from "../../src/storage/adapters/json.ts";
import sqlite from "../../src/storage/adapters/sqlite.ts";
import sqljs from "../../src/storage/adapters/sqljs.ts";
import type { AdapterFactory, StorageAdapter } from "../../src/storage/contract.ts";
import { canonicalJson, digestStore, migrateStore } from "../../src/storage/migrate.ts";
import { migrationMarker } from "../../src/storage/migration-marker.ts";
import type { EventDraft, SessionMeta, StoredMessage } from "../../src/storage/records.ts";
import { verifyStore } from "../../src/storage/verify.ts";
import { tempHome } from "../_helpers.ts";

const meta = (id: string, over: Partial<SessionMeta> = {}) =>
  ({
    id,
    title: `t ${id}`,
    projectPath: "/p/x",
    status: "idle",
    createdAt: 1,
    updatedAt: 2,
    turnCount: 0,
    messageCount: 0,
    ...over,
  }) as SessionMeta;

async function fill(a: StorageAdapter) {
  for (let s = 0; s < 12; s++) {
    const id = `sess-${s}`;
    const messages: StoredMessage[] = [];
    for (let i = 0; i < 5; i++) {
      messages.push({
        id: `m${i}`,
        role: i % 2 ? "assistant" : "user",
        parts:
          i % 2
            ? [
                {
                  type: "tool",
                  tool: { name: "bash", args: { command: `ls ${i}` } },
                  callId: `c${i}`,
                  result: { ok: true },
                },
              ]
            : [{ type: "text", content: `prompt ${s}/${i} ünïcödé` }],
        timestamp: 1000 + i,
        ...(i === 1 ? { usage: { inputTokens: 10, outputTokens: 3 }, responseId: `r${s}` } : {}),
      });
    }
    await a.createSession(
      meta(id, { tags: ["a"], future: { kept: true } } as Partial<SessionMeta>),
      messages.slice(0, 2),
    );
    await a.appendMessages(id, messages.slice(2));
    await a.appendEvents(id, [
      { type: "turn.started", turnId: "t1", timestamp: 5 },
      { type: "function.call", tool: "bash", callId: "c1", args: { command: "ls" }, timestamp: 6 },
    ]);
    if (s % 3 === 0) await a.putContextCache(id, { files: { [`f${s}.ts`]: "x" } });
    if (s % 4 === 0) await a.updateMeta(id, (m) => ({ ...m, status: "deleted", previousStatus: "idle" }));
  }
  await a.appendEvents("rollout-only", [{ type: "session.started", timestamp: 9 }]);
}

const chain: [string, AdapterFactory][] = [
  ["files", files],
  ["sqlite", sqlite],
  ["sqljs", sqljs],
  ["json", json],
  ["files", files],
];

test("a store round-trips files → sqlite → sqljs → json → files with identical hashes", async () => {
  const homes = await Promise.all(chain.map(() => tempHome()));
  try {
    let source = chain[0]![1]({ home: homes[0]!.path });
    await fill(source);
    const original = await digestStore(source);
    expect(original).toMatchObject({
      sessions: 12,
      messages: 60,
      eventLogs: 13,
      events: 25,
      contextCaches: 4,
    });
    for (let hop = 1; hop < chain.length; hop++) {
      const target = chain[hop]![1]({ home: homes[hop]!.path });
      const report = await migrateStore(source, target);
      expect(report.verified).toBe(true);
      expect(report.copied.hash).toBe(original.hash);
      await source.close();
      source = target;
    }
    await source.close();
    // Reopened from disk, the last copy still hashes the same.
    const reopened = files({ home: homes[chain.length - 1]!.path });
    expect((await digestStore(reopened)).hash).toBe(original.hash);
    await reopened.close();
  } finally {
    for (const h of homes) await h[Symbol.asyncDispose]();
  }
}, 60_000);

test("a non-empty target is refused and left as it was", async () => {
  await using h1 = await tempHome();
  await using h2 = await tempHome();
  const source = sqlite({ home: h1.path });
  const target = json({ home: h2.path });
  await source.createSession(meta("a"), []);
  await target.createSession(meta("b"), []);
  await expect(migrateStore(source, target)).rejects.toMatchObject({ code: "conflict" });
  expect((await target.listSessions({ all: true })).items.map((m) => m.id)).toEqual(["b"]);
  await source.close();
  await target.close();
});

test("the digest ignores key order but not content", () => {
  expect(canonicalJson({ b: 1, a: { d: [1, { y: 2, x: 1 }], c: null } })).toBe(
    canonicalJson({ a: { c: null, d: [1, { x: 1, y: 2 }] }, b: 1 }),
  );
  expect(canonicalJson({ a: 1 })).not.toBe(canonicalJson({ a: 2 }));
});

test("a files target holding a session it cannot list is not empty: refused, and nothing of it is touched", async () => {
  await using srcHome = await tempHome();
  await using dstHome = await tempHome();
  const src = files({ home: srcHome.path, fsync: "never" });
  await src.createSession(meta("same"), [{ id: "m1", role: "user", parts: [], timestamp: 1 }]);
  const dst = files({ home: dstHome.path, fsync: "never" });
  await dst.createSession(meta("same"), [{ id: "mine", role: "user", parts: [], timestamp: 1 }]);
  await dst.close();
  const dir = join(
    dstHome.path,
    "sessions",
    readdirSync(join(dstHome.path, "sessions")).find((d) => !d.startsWith("."))!,
    "same",
  );
  writeFileSync(join(dir, "meta.json"), "{not json"); // unlisted now
  const log = readFileSync(join(dir, "messages.jsonl"), "utf8");
  const target = files({ home: dstHome.path, fsync: "never" });
  await expect(migrateStore(src, target)).rejects.toMatchObject({ code: "conflict" });
  expect(readFileSync(join(dir, "messages.jsonl"), "utf8")).toBe(log);
  await src.close();
  await target.close();
});

test("regression: a files source holding a session directory whose meta.json was deleted is refused, naming it (its messages were left behind, the copy called verified)", async () => {
  await using srcHome = await tempHome();
  await using dstHome = await tempHome();
  const src = files({ home: srcHome.path, fsync: "never" });
  await src.createSession(meta("kept"), [{ id: "m1", role: "user", parts: [], timestamp: 1 }]);
  await src.createSession(meta("lost"), [{ id: "m2", role: "user", parts: [], timestamp: 1 }]);
  await src.close();
  const project = readdirSync(join(srcHome.path, "sessions")).find((d) => !d.startsWith("."))!;
  rmSync(join(srcHome.path, "sessions", project, "lost", "meta.json"));
  const source = files({ home: srcHome.path, fsync: "never" });
  const target = sqlite({ home: dstHome.path, fsync: "never" });
  await expect(migrateStore(source, target)).rejects.toMatchObject({
    code: "check_failed",
    message: expect.stringContaining("(first: lost: no meta.json beside messages.jsonl)"),
  });
  expect((await target.listSessions({ all: true })).total).toBe(0);
  await source.close();
  await target.close();
});

test("a migration stopped half way is reported by verify, and the next one clears it and starts over", async () => {
  await using srcHome = await tempHome();
  await using dstHome = await tempHome();
  const src = files({ home: srcHome.path, fsync: "never" });
  await fill(src);
  const target = sqlite({ home: dstHome.path, fsync: "never" });
  // What a killed migration leaves: its mark, and part of the copy.
  const marker = markInterrupted(target);
  await target.createSession(meta("sess-0"), [{ id: "m0", role: "user", parts: [], timestamp: 1 }]);
  const report = await verifyStore(target, dstHome.path);
  expect(report.ok).toBe(false);
  expect(report.problems.map((p) => p.kind)).toContain("interrupted_migration");
  const done = await migrateStore(src, target);
  expect(done.verified).toBe(true);
  expect(existsSync(marker)).toBe(false);
  expect((await digestStore(target)).hash).toBe((await digestStore(src)).hash);
  expect((await verifyStore(target, dstHome.path)).ok).toBe(true);
  await src.close();
  await target.close();
});

test("a mark never costs the target a session of its own: only what the source holds is cleared", async () => {
  await using srcHome = await tempHome();
  await using dstHome = await tempHome();
  const src = files({ home: srcHome.path, fsync: "never" });
  await fill(src);
  const target = json({ home: dstHome.path, fsync: "never" });
  const marker = markInterrupted(target);
  await target.createSession(meta("sess-1"), [{ id: "m0", role: "user", parts: [], timestamp: 1 }]);
  await target.createSession(meta("real1"), [{ id: "mine", role: "user", parts: [], timestamp: 1 }]);
  await expect(migrateStore(src, target)).rejects.toMatchObject({ code: "conflict" });
  expect(await target.getMeta("real1")).toBeDefined();
  expect(await target.getMeta("sess-1")).toBeUndefined(); // the partial copy's
  expect(existsSync(marker)).toBe(false);
  await src.close();
  await target.close();
});

test("regression: a session written to in the target since an interrupted migration copied it is not cleared: the next migration is refused, naming it, and nothing is purged (an acknowledged append was lost)", async () => {
  for (const change of ["message", "message and the source too", "event"] as const) {
    await using srcHome = await tempHome();
    await using dstHome = await tempHome();
    const src = files({ home: srcHome.path, fsync: "never" });
    await fill(src);
    await src.appendEvents("sess-2", [{ type: "turn.started", turnId: "t" }]);
    const target = sqlite({ home: dstHome.path, fsync: "never" });
    markInterrupted(target);
    // The partial copy: two sessions as the source holds them (sess-2 with its log)...
    for (const id of ["sess-1", "sess-2"]) {
      await target.createSession((await src.getMeta(id))!, (await src.readMessages(id)).messages);
    }
    const copied: EventDraft[] = [];
    for await (const r of src.readEvents("sess-2")) if (r.event) copied.push(r.event);
    await target.appendEvents("sess-2", copied);
    // ...then one of them written to in the new store (and in the old one too, later).
    const say = (id: string, content: string): StoredMessage => ({
      id,
      role: "user",
      parts: [{ type: "text", content }],
      timestamp: 1,
    });
    if (change === "event") await target.appendEvents("sess-2", [{ type: "turn.started", turnId: "t2" }]);
    else await target.appendMessages("sess-2", [say("late", "work done in the new store")]);
    if (change === "message and the source too")
      await src.appendMessages("sess-2", [{ ...say("old-side", "still in the old store"), timestamp: 9e12 }]);
    const error = await migrateStore(src, target).catch((e: Error) => e);
    expect([change, (error as { code?: string }).code]).toEqual([change, "conflict"]);
    expect((error as Error).message).toContain(
      change === "event"
        ? "sess-2 (1 event(s) more than the source)"
        : "sess-2 (1 message(s) after the last the source holds)",
    );
    expect(await target.getMeta("sess-1")).toBeDefined(); // nothing purged
    expect((await target.readMessages("sess-2")).messages.length).toBe(change === "event" ? 5 : 6);
    expect((await verifyStore(target, dstHome.path)).problems.map((p) => p.kind)).toContain(
      "interrupted_migration",
    );
    await src.close();
    await target.close();
  }
});

test("regression: a source session compacted since an interrupted migration copied it is cleared as a partial copy, not taken for one written to in the target (the re-run was refused)", async () => {
  await using srcHome = await tempHome();
  await using dstHome = await tempHome();
  const src = files({ home: srcHome.path, fsync: "never" });
  await fill(src);
  const target = sqlite({ home: dstHome.path, fsync: "never" });
  markInterrupted(target);
  await target.createSession((await src.getMeta("sess-1"))!, (await src.readMessages("sess-1")).messages);
  // The source moves on: its log is rewritten shorter, later.
  const kept = (await src.readMessages("sess-1")).messages.slice(-1);
  await src.replaceMessages("sess-1", kept, { ifMessageCount: 5 });
  await src.updateMeta("sess-1", (m) => ({ ...m, updatedAt: m.updatedAt + 1000 }));
  const done = await migrateStore(src, target);
  expect(done.verified).toBe(true);
  expect((await target.readMessages("sess-1")).messages).toHaveLength(1);
  await src.close();
  await target.close();
});

/** `target` as a migration killed at its first rollout log sees it: that append and any clean-up fail. */
function killedAtFirstLog(target: StorageAdapter): StorageAdapter {
  return new Proxy(target, {
    get(t, key) {
      if (key === "appendEvents" || key === "purgeSession")
        return async () => {
          throw new Error("killed");
        };
      const value = Reflect.get(t, key);
      return typeof value === "function" ? value.bind(t) : value;
    },
  });
}

test("regression: after a killed migration, what it recorded of its copy decides — a target written to is refused though the source was compacted since (the append was purged), one left alone is cleared though the source was rewound (the re-run was refused)", async () => {
  const say = (id: string, role: "user" | "assistant" = "user"): StoredMessage => ({
    id,
    role,
    parts: [{ type: "text", content: id }],
    timestamp: 1,
  });
  for (const write of ["none", "message", "event"] as const) {
    await using srcHome = await tempHome();
    await using dstHome = await tempHome();
    const src = files({ home: srcHome.path, fsync: "never" });
    await src.createSession(meta("s1", { messageCount: 4 }), [
      say("u1"),
      say("a1", "assistant"),
      say("u2"),
      say("a2", "assistant"),
    ]);
    await src.appendEvents("s1", [{ type: "turn.started", turnId: "t1" }]);
    await src.appendEvents("zz-log", [{ type: "turn.started", turnId: "t1" }]);
    const target = sqlite({ home: dstHome.path, fsync: "never" });
    // Killed once s1 and its log were copied: the next log's append dies, and no clean-up runs.
    let logs = 0;
    const dying = new Proxy(target, {
      get(t, key) {
        if (key === "appendEvents")
          return async (...args: Parameters<StorageAdapter["appendEvents"]>) => {
            if (++logs > 1) throw new Error("killed");
            return t.appendEvents(...args);
          };
        if (key === "purgeSession") return killedAtFirstLog(t).purgeSession;
        const value = Reflect.get(t, key);
        return typeof value === "function" ? value.bind(t) : value;
      },
    });
    await expect(migrateStore(src, dying)).rejects.toThrow("killed");
    expect(existsSync(migrationMarker(target)!)).toBe(true);
    if (write === "message") await target.appendMessages("s1", [say("t-new")]);
    if (write === "event") await target.appendEvents("s1", [{ type: "turn.started", turnId: "t2" }]);
    // The source moves on: a rewind re-imported (u2, a2 replaced), then a compaction to the last turn.
    await src.replaceMessages("s1", [say("u1"), say("a1", "assistant"), say("u3"), say("a3", "assistant")], {
      ifMessageCount: 4,
    });
    if (write !== "none")
      await src.replaceMessages("s1", [say("u3"), say("a3", "assistant")], { ifMessageCount: 4 });
    const rerun = await migrateStore(src, target).catch((e: Error) => e);
    if (write === "none") {
      expect((rerun as { verified?: boolean }).verified).toBe(true);
      expect((await target.readMessages("s1")).messages.map((m) => m.id)).toEqual(["u1", "a1", "u3", "a3"]);
    } else {
      expect([write, (rerun as { code?: string }).code]).toEqual([write, "conflict"]);
      expect((rerun as Error).message).toContain(
        write === "message"
          ? "s1 (its messages changed in the target since the copy (4 then, 5 now))"
          : "s1 (its rollout log changed in the target since the copy (1 events then, 2 now))",
      );
      // Nothing purged: what the target acknowledged is there.
      expect((await target.readMessages("s1")).messages.length).toBe(write === "message" ? 5 : 4);
    }
    await src.close();
    await target.close();
  }
});

test("regression: after a killed migration, a session the target holds that the migration never started copying is the target's own: refused, not purged (with nothing in common with the source's, it was taken for a copy replaced since)", async () => {
  await using srcHome = await tempHome();
  await using dstHome = await tempHome();
  const src = files({ home: srcHome.path, fsync: "never" });
  const say = (id: string): StoredMessage => ({
    id,
    role: "user",
    parts: [{ type: "text", content: id }],
    timestamp: 1,
  });
  for (const id of ["s1", "s2", "s3"])
    await src.createSession(meta(id, { messageCount: 1 }), [say(`${id}-m`)]);
  const target = sqlite({ home: dstHome.path, fsync: "never" });
  // Killed while it copies its second session: the third is never started.
  const tried: string[] = [];
  const dying = new Proxy(target, {
    get(t, key) {
      if (key === "createSession")
        return async (...args: Parameters<StorageAdapter["createSession"]>) => {
          tried.push(args[0].id);
          if (tried.length > 1) throw new Error("killed");
          return t.createSession(...args);
        };
      if (key === "purgeSession") return killedAtFirstLog(t).purgeSession;
      const value = Reflect.get(t, key);
      return typeof value === "function" ? value.bind(t) : value;
    },
  });
  await expect(migrateStore(src, dying)).rejects.toThrow("killed");
  // Made in the new store under an id the old one holds too (sessions made by an import, say).
  const third = ["s1", "s2", "s3"].find((id) => !tried.includes(id));
  await target.createSession(meta(third!, { messageCount: 1 }), [say("mine")]);
  const rerun = await migrateStore(src, target).catch((e: Error) => e);
  expect((rerun as { code?: string }).code).toBe("conflict");
  expect((rerun as Error).message).toContain(
    `${third} (its session was made in the target: the migration never copied it)`,
  );
  expect((await target.readMessages(third!)).messages.map((m) => m.id)).toEqual(["mine"]);
  await src.close();
  await target.close();
});

/** `target` with its `n`th call of `method` killed (and every clean-up after it). */
function killedAt(
  target: StorageAdapter,
  method: "createSession" | "appendEvents",
  n: number,
): StorageAdapter {
  let calls = 0;
  return new Proxy(target, {
    get(t, key) {
      if (key === method)
        return async (...args: unknown[]) => {
          if (++calls >= n) throw new Error("killed");
          return (t[method] as (...a: unknown[]) => Promise<unknown>)(...args);
        };
      if (key === "purgeSession") return killedAtFirstLog(t).purgeSession;
      const value = Reflect.get(t, key);
      return typeof value === "function" ? value.bind(t) : value;
    },
  });
}

test("regression: after a killed migration, a rename or tag in the target, an append to a log whose copy was cut short (even one the source matched in number), are refused; a copy the source purged since is cleared (diff13 review 1, 2, 7)", async () => {
  const say = (id: string): StoredMessage => ({
    id,
    role: "user",
    parts: [{ type: "text", content: id }],
    timestamp: 1,
  });
  for (const change of [
    "rename",
    "tag",
    "append to a cut log",
    "same count in both",
    "source purged a copy",
  ] as const) {
    await using srcHome = await tempHome();
    await using dstHome = await tempHome();
    const src = files({ home: srcHome.path, fsync: "never" });
    for (const id of ["s1", "s2"]) await src.createSession(meta(id, { messageCount: 1 }), [say(`${id}-m`)]);
    const cut = change === "append to a cut log" || change === "same count in both";
    // 1,500 events: copied in batches of 1,000, so the second batch's append can die.
    await src.appendEvents(
      "s1",
      Array.from({ length: cut ? 1500 : 1 }, (_, i) => ({ type: "turn.started", turnId: `t${i}` })),
    );
    const target = sqlite({ home: dstHome.path, fsync: "never" });
    await expect(migrateStore(src, killedAt(target, "appendEvents", cut ? 2 : 1))).rejects.toThrow("killed");
    if (change === "rename") await target.updateMeta("s1", (m) => ({ ...m, title: "renamed in the target" }));
    if (change === "tag") await target.updateMeta("s1", (m) => ({ ...m, tags: ["keep"] }));
    if (cut) await target.appendEvents("s1", [{ type: "turn.started", turnId: "resumed in the target" }]);
    if (change === "same count in both")
      await src.appendEvents("s1", [{ type: "turn.started", turnId: "t1500" }]);
    if (change === "source purged a copy") await src.purgeSession("s2");
    const rerun = await migrateStore(src, target).catch((e: Error) => e);
    if (change === "source purged a copy") {
      expect([change, (rerun as { verified?: boolean }).verified]).toEqual([change, true]);
      expect(await target.getMeta("s2")).toBeUndefined();
    } else {
      expect([change, (rerun as { code?: string }).code]).toEqual([change, "conflict"]);
      expect([change, (rerun as Error).message]).toEqual([
        change,
        expect.stringContaining(
          cut
            ? "s1 (its rollout log's event 1001 is not the source's"
            : "s1 (its meta or context cache changed in the target since the copy)",
        ),
      ]);
      expect(existsSync(migrationMarker(target)!)).toBe(true);
    }
    await src.close();
    await target.close();
  }
});

/** What a migration killed half way leaves on its target: its mark (the caller adds part of a copy). */
function markInterrupted(target: StorageAdapter): string {
  const marker = migrationMarker(target)!;
  mkdirSync(dirname(marker), { recursive: true });
  writeFileSync(marker, `${JSON.stringify({ from: "files", to: target.name })}\n`);
  return marker;
}

test("regression: an empty log file (a repair cut back a first append that never finished) is no log: verify is clean and migrate copies the store (it failed every time, the log missing from the copy)", async () => {
  await using srcHome = await tempHome();
  await using dstHome = await tempHome();
  const src = files({ home: srcHome.path, fsync: "never" });
  await src.appendEvents("kept", [{ type: "turn.started", turnId: "t" }]);
  const empty = join(srcHome.path, "rollout", "sessions", "cut", "events.jsonl");
  mkdirSync(dirname(empty), { recursive: true });
  writeFileSync(empty, "");
  expect(await src.listEventLogs()).toEqual(["kept"]);
  expect((await verifyStore(src, srcHome.path)).ok).toBe(true);
  const target = sqlite({ home: dstHome.path, fsync: "never" });
  const done = await migrateStore(src, target);
  expect([done.verified, done.copied.eventLogs, done.copied.events]).toEqual([true, 1, 1]);
  await src.close();
  await target.close();
});

test("regression: an event naming another session in aggregateID is a verify problem, and migrate names it (verify was clean and migrate said only that the session differed)", async () => {
  await using srcHome = await tempHome();
  await using dstHome = await tempHome();
  const src = files({ home: srcHome.path, fsync: "never" });
  await src.appendEvents("s1", [
    { type: "turn.started", turnId: "a" },
    { type: "turn.started", turnId: "b" },
  ]);
  const log = join(srcHome.path, "rollout", "sessions", "s1", "events.jsonl");
  writeFileSync(log, readFileSync(log, "utf8").replace(/("seq":2,"aggregateID":)"s1"/, '$1"other"'));
  const report = await verifyStore(src, srcHome.path);
  expect(report.problems.map((p) => [p.kind, p.sessionId, p.detail])).toEqual([
    ["foreign_event", "s1", 'event seq 2 names session "other" in aggregateID, not "s1"'],
  ]);
  const target = sqlite({ home: dstHome.path, fsync: "never" });
  const e = await migrateStore(src, target).catch((error) => error);
  expect(e.message).toBe(
    'rollout of s1: event seq 2 names session "other" in aggregateID; run `freecode store verify` (the partial copy was removed from the target)',
  );
  expect(await target.listEventLogs()).toEqual([]);
  await src.close();
  await target.close();
});
