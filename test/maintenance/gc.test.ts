/**
 * `runGc` on real stores (files and sqlite in temp homes): what an enforced run removes is gone from
 * disk, a dry run or warn mode removes nothing, sizes are what the files take, a session that
 * changed since the plan is skipped, and a second gc waits for the first one's lock.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { applyRemovals } from "../../src/maintenance/apply.ts";
import { bytesUnder } from "../../src/maintenance/disk-usage.ts";
import { gcLockPath, runGc } from "../../src/maintenance/gc.ts";
import { takeInventory } from "../../src/maintenance/inventory.ts";
import { planGc } from "../../src/maintenance/plan.ts";
import { EMPTY_SHELL_GRACE_MS, type GcPolicy } from "../../src/maintenance/policy.ts";
import { unarchiveSession } from "../../src/session/lifecycle.ts";
import { ensureDir } from "../../src/util/atomic.ts";
import { BUN, ROOT, tempHome } from "../_helpers.ts";
import { ADAPTERS, type AdapterName, NOW, type Seed, seedStore } from "./_seed.ts";

const policy = (p: Partial<GcPolicy> = {}): GcPolicy => ({
  mode: "enforce",
  emptyGraceMs: EMPTY_SHELL_GRACE_MS,
  ...p,
});

const SEEDS: Seed[] = [
  { id: "shell", ageDays: 3, messages: 0 },
  { id: "shell-fresh", ageDays: 0, messages: 0 },
  { id: "arch-old", ageDays: 100, status: "archived" },
  { id: "arch-new", ageDays: 5, status: "archived" },
  { id: "idle-old", ageDays: 60, messages: 4 },
  { id: "idle-new", ageDays: 1 },
  { id: "running", ageDays: 200, status: "running" },
  { id: "pinned", ageDays: 300, pinned: true },
];

const stored = async (adapter: Awaited<ReturnType<typeof seedStore>>) =>
  (await adapter.listSessions({ all: true })).items.map((m) => m.id).sort();

for (const name of Object.keys(ADAPTERS) as AdapterName[]) {
  describe(`${name} store`, () => {
    test("enforce removes shells, expired and over-cap sessions (messages and rollout too)", async () => {
      await using home = await tempHome();
      const adapter = await seedStore(name, home.path, SEEDS);
      try {
        await adapter.appendEvents("arch-old", [{ type: "note", text: "x" }]);
        const { report, firstError } = await runGc(adapter, {
          home: home.path,
          policy: policy({ archivedMaxAgeDays: 30, maxSessions: 4 }),
          now: NOW,
        });
        expect(firstError).toBeUndefined();
        expect(report.sessions.map((s) => [s.id, s.reason, s.result])).toEqual([
          ["shell", "empty-shell", "removed"],
          ["arch-old", "expired", "removed"],
          ["arch-new", "over-capacity", "removed"],
          ["idle-old", "over-capacity", "removed"],
        ]);
        expect(await stored(adapter)).toEqual(["idle-new", "pinned", "running", "shell-fresh"]);
        expect(await adapter.listEventLogs()).toEqual([]);
        await expect(adapter.readMessages("idle-old")).rejects.toMatchObject({ code: "not_found" });
        expect(report.after.sessions).toBe(4);
        expect(report.before.bytes - report.after.bytes).toBe(
          report.sessions.reduce((n, s) => n + s.bytes, 0),
        );
        expect(existsSync(gcLockPath(home.path))).toBe(false);
        if (name === "files")
          expect([...new Bun.Glob("**/idle-old").scanSync({ cwd: home.path, onlyFiles: false })]).toEqual([]);
      } finally {
        await adapter.close();
      }
    });

    test("regression: a session with no messages whose rollout log records work is not an empty shell (an imported session a rewind emptied lost its calls and tokens to gc)", async () => {
      await using home = await tempHome();
      const adapter = await seedStore(name, home.path, [
        { id: "worked", ageDays: 3, messages: 0 },
        { id: "started", ageDays: 3, messages: 0 },
      ]);
      try {
        await adapter.appendEvents("worked", [
          { type: "session.started", reason: "import" },
          { type: "model.request", turnId: "t", provider: "google", model: "gemini-2.5-pro" },
          {
            type: "model.response",
            turnId: "t",
            provider: "google",
            model: "gemini-2.5-pro",
            inputTokens: 62,
          },
        ]);
        await adapter.appendEvents("started", [{ type: "session.started", reason: "new" }]);
        const { report } = await runGc(adapter, { home: home.path, policy: policy({}), now: NOW });
        expect(report.sessions.map((s) => [s.id, s.reason, s.result])).toEqual([
          ["started", "empty-shell", "removed"],
        ]);
        expect(await stored(adapter)).toEqual(["worked"]);
        expect(await adapter.listEventLogs()).toEqual(["worked"]);
      } finally {
        await adapter.close();
      }
    });

    test("a dry run and warn mode plan the same and remove nothing", async () => {
      await using home = await tempHome();
      const adapter = await seedStore(name, home.path, SEEDS);
      try {
        const before = await stored(adapter);
        const p = policy({ maxSessions: 2 });
        const dry = await runGc(adapter, { home: home.path, policy: p, dryRun: true, now: NOW });
        const warn = await runGc(adapter, { home: home.path, policy: { ...p, mode: "warn" }, now: NOW });
        expect(dry.report.sessions.length).toBe(6);
        expect(dry.report.sessions.every((s) => s.result === "would-remove")).toBe(true);
        expect(warn.report.sessions).toEqual(dry.report.sessions);
        expect(warn.report.enforced).toBe(false);
        expect(await stored(adapter)).toEqual(before);
      } finally {
        await adapter.close();
      }
    });

    test("the disk budget removes until the store's bytes fit", async () => {
      await using home = await tempHome();
      const big = "x".repeat(20_000);
      const adapter = await seedStore(name, home.path, [
        { id: "a", ageDays: 9, text: big },
        { id: "b", ageDays: 5, text: big },
        { id: "c", ageDays: 1, text: big },
      ]);
      try {
        const { report } = await runGc(adapter, {
          home: home.path,
          policy: policy({ maxBytes: 45_000 }),
          now: NOW,
        });
        expect(report.before.bytes).toBeGreaterThan(60_000);
        expect(report.sessions.map((s) => [s.id, s.reason])).toEqual([["a", "over-budget"]]);
        expect(report.after.bytes).toBeLessThanOrEqual(45_000);
        expect(await stored(adapter)).toEqual(["b", "c"]);
        // Measured again from what is left, the store fits.
        const again = await takeInventory(adapter);
        expect(planGc(again, policy({ maxBytes: 45_000 }), NOW).removals).toEqual([]);
      } finally {
        await adapter.close();
      }
    });

    test("a session that changed since the plan is skipped, not removed", async () => {
      await using home = await tempHome();
      const adapter = await seedStore(name, home.path, [
        { id: "goes", ageDays: 50, status: "archived" },
        { id: "started", ageDays: 40, status: "archived" },
        { id: "appended", ageDays: 30 },
        { id: "unarchived", ageDays: 20, status: "archived" },
      ]);
      try {
        const plan = planGc(await takeInventory(adapter), policy({ maxSessions: 0 }), NOW);
        await adapter.updateMeta("started", (m) => ({ ...m, status: "running" }));
        // Regression: unarchive keeps updatedAt, and the session was removed as the archived one.
        await adapter.updateMeta("unarchived", (m) => ({ ...m, status: "idle", previousStatus: undefined }));
        await adapter.appendMessages("appended", [
          { id: "late", role: "user", parts: [{ type: "text", content: "still here" }], timestamp: NOW },
        ]);
        const { applied, firstError } = await applyRemovals(adapter, plan.removals);
        expect(firstError).toBeUndefined();
        const results = Object.fromEntries(applied.map((a) => [a.id, [a.result, a.error]]));
        expect(results).toEqual({
          goes: ["removed", undefined],
          started: ["skipped", "it is running now"],
          appended: ["skipped", "it changed since gc looked at it"],
          unarchived: ["skipped", "it is idle now (was archived)"],
        });
        expect(await stored(adapter)).toEqual(["appended", "started", "unarchived"]);
      } finally {
        await adapter.close();
      }
    });

    test("regression: a message another process appends between gc's claim and its purge (acknowledged: exit 0) is never erased — skipped, its status given back (sqlite erased it, reported removed)", async () => {
      await using home = await tempHome();
      const adapter = await seedStore(name, home.path, [{ id: "v1", ageDays: 30 }]);
      try {
        const plan = planGc(await takeInventory(adapter), policy({ maxSessions: 0 }), NOW);
        const purge = adapter.purgeSession.bind(adapter);
        let appended: number | undefined;
        adapter.purgeSession = async (id, options) => {
          const p = Bun.spawn(
            [BUN, join(ROOT, "src/cli/main.ts"), "session", "append", id, "--store", name],
            {
              env: { ...process.env, FREECODE_HOME: home.path },
              stdin: Buffer.from('{"role":"user","parts":[{"type":"text","content":"acked"}]}\n'),
              stdout: "pipe",
              stderr: "pipe",
            },
          );
          appended = await p.exited;
          return purge(id, options);
        };
        const { applied, firstError } = await applyRemovals(adapter, plan.removals);
        expect(appended).toBe(0);
        expect(firstError).toBeUndefined();
        expect(applied.map((a) => [a.id, a.result, a.error])).toEqual([
          ["v1", "skipped", "it changed since gc looked at it"],
        ]);
        const meta = await adapter.getMeta("v1");
        expect([meta?.status, meta?.messageCount]).toEqual(["idle", 2]);
        expect((await adapter.readMessages("v1")).messages.at(-1)?.parts).toEqual([
          { type: "text", content: "acked" },
        ]);
      } finally {
        await adapter.close();
      }
    }, 30_000);

    test("regression: an expired archive gc claims and gives back (its purge met a change) unarchives to the status it had before the archive, not idle", async () => {
      await using home = await tempHome();
      const adapter = await seedStore(name, home.path, [{ id: "old", ageDays: 30, status: "archived" }]);
      try {
        await adapter.updateMeta("old", (m) => ({ ...m, previousStatus: "interrupted" }));
        const plan = planGc(await takeInventory(adapter), policy({ maxSessions: 0 }), NOW);
        const purge = adapter.purgeSession.bind(adapter);
        adapter.purgeSession = async (id, options) => {
          // Another process's append between the claim and the purge.
          await adapter.appendMessages(id, [
            { id: "late", role: "user", parts: [{ type: "text", content: "acked" }], timestamp: NOW },
          ]);
          return purge(id, options);
        };
        const { applied } = await applyRemovals(adapter, plan.removals);
        expect(applied.map((a) => [a.id, a.result])).toEqual([["old", "skipped"]]);
        expect((await adapter.getMeta("old"))?.status).toBe("archived");
        expect((await unarchiveSession(adapter, "old")).status).toBe("interrupted");
      } finally {
        await adapter.close();
      }
    });
  });
}

test("files: a session's bytes are its directory and rollout on disk", async () => {
  await using home = await tempHome();
  const adapter = await seedStore("files", home.path, [{ id: "s", ageDays: 1, messages: 3 }]);
  try {
    await adapter.appendEvents("s", [{ type: "note", text: "y".repeat(1000) }]);
    const inv = await takeInventory(adapter);
    const onDisk = bytesUnder(join(home.path, "sessions")) + bytesUnder(join(home.path, "rollout"));
    expect(inv.sizeMethod).toBe("files");
    expect(inv.sessions[0]!.bytes).toBe(onDisk);
    expect(onDisk).toBeGreaterThan(1000);
  } finally {
    await adapter.close();
  }
});

test("an enforced gc waits for another gc's lock and fails with `locked`", async () => {
  await using home = await tempHome();
  const adapter = await seedStore("files", home.path, [{ id: "s", ageDays: 3, messages: 0 }]);
  try {
    ensureDir(join(home.path, "state"));
    // A live holder: this very process.
    writeFileSync(
      gcLockPath(home.path),
      JSON.stringify({ pid: process.pid, start: null, host: "elsewhere" }),
    );
    const run = runGc(adapter, { home: home.path, policy: policy(), now: NOW, lockTimeoutMs: 200 });
    await expect(run).rejects.toMatchObject({ code: "locked" });
    expect(await stored(adapter)).toEqual(["s"]);
  } finally {
    await adapter.close();
  }
});

test("regression: a session left running by a process that is gone is taken for interrupted, as session list takes it: gc lists it and removes it (it was kept for running until some listing ran)", async () => {
  await using home = await tempHome();
  const adapter = await seedStore("files", home.path, [{ id: "crashed", ageDays: 90 }]);
  try {
    const dead = Bun.spawn(["true"]);
    await dead.exited;
    const { processStartTime } = await import("../../src/util/lock.ts");
    const { hostname } = await import("node:os");
    await adapter.updateMeta("crashed", (m) => ({
      ...m,
      status: "running",
      owner: { pid: dead.pid, start: processStartTime(dead.pid) ?? 1, host: hostname() },
    }));
    const warned = await runGc(adapter, {
      home: home.path,
      policy: policy({ mode: "warn", maxSessions: 0 }),
      now: NOW,
    });
    expect(warned.report.sessions.map((s) => [s.id, s.result])).toEqual([["crashed", "would-remove"]]);
    expect((await adapter.getMeta("crashed"))?.status).toBe("running"); // a warning writes nothing
    const done = await runGc(adapter, { home: home.path, policy: policy({ maxSessions: 0 }), now: NOW });
    expect(done.report.sessions.map((s) => [s.id, s.result])).toEqual([["crashed", "removed"]]);
  } finally {
    await adapter.close();
  }
});
