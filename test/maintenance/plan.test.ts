/**
 * gc planning as a pure function: which rule takes which session, in what order, and what is never
 * taken (running, pinned, fresh empty shells). Sizes parse as config.json writes them.
 */
import { describe, expect, test } from "bun:test";
import type { Inventory } from "../../src/maintenance/inventory.ts";
import { planGc } from "../../src/maintenance/plan.ts";
import { EMPTY_SHELL_GRACE_MS, type GcPolicy, resolvePolicy } from "../../src/maintenance/policy.ts";
import { formatBytes, parseByteSize } from "../../src/maintenance/size.ts";
import { DAY, metaOf, NOW, type Seed } from "./_seed.ts";

const inventory = (seeds: (Seed & { bytes?: number })[], otherBytes = 0): Inventory => ({
  sessions: seeds.map((s) => ({
    meta: { ...metaOf(s), messageCount: s.messages ?? 1 },
    bytes: s.bytes ?? 100,
    empty: (s.messages ?? 1) === 0,
  })),
  otherBytes,
  sizeMethod: "files",
});

const policy = (p: Partial<GcPolicy> = {}): GcPolicy => ({
  mode: "enforce",
  emptyGraceMs: EMPTY_SHELL_GRACE_MS,
  ...p,
});

const plan = (seeds: (Seed & { bytes?: number })[], p: Partial<GcPolicy> = {}, now = NOW) =>
  planGc(inventory(seeds), policy(p), now);
const ids = (p: ReturnType<typeof plan>) => p.removals.map((r) => `${r.id}:${r.reason}`);

describe("empty shells", () => {
  test("go once past the grace period; a fresh one, a pinned one and a running one stay", () => {
    const hour = 3_600_000;
    const p = planGc(
      inventory([
        { id: "old", ageDays: 2, messages: 0 },
        { id: "fresh", ageDays: 0, messages: 0 },
        { id: "pinned", ageDays: 5, messages: 0, pinned: true },
        { id: "running", ageDays: 5, messages: 0, status: "running" },
        { id: "full", ageDays: 5 },
      ]),
      policy(),
      NOW + hour / 2,
    );
    expect(ids(p)).toEqual(["old:empty-shell"]);
    // Just inside and just past the grace period.
    const shell = [{ id: "s", ageDays: 0, messages: 0 }];
    expect(plan(shell, {}, NOW + EMPTY_SHELL_GRACE_MS).removals).toEqual([]);
    expect(ids(plan(shell, {}, NOW + EMPTY_SHELL_GRACE_MS + 1))).toEqual(["s:empty-shell"]);
  });

  test("with no policy at all, only empty shells are planned", () => {
    const p = plan([
      { id: "a", ageDays: 400, status: "archived" },
      { id: "b", ageDays: 400, status: "deleted" },
      { id: "c", ageDays: 3, messages: 0 },
    ]);
    expect(ids(p)).toEqual(["c:empty-shell"]);
    expect(p.after).toEqual({ sessions: 2, bytes: 200 });
  });
});

test("archived and soft-deleted sessions expire by updatedAt; idle ones never expire", () => {
  const p = plan(
    [
      { id: "arch-old", ageDays: 31, status: "archived" },
      { id: "arch-new", ageDays: 29, status: "archived" },
      { id: "del-old", ageDays: 45, status: "deleted" },
      { id: "idle-old", ageDays: 900 },
      { id: "arch-pinned", ageDays: 900, status: "archived", pinned: true },
    ],
    { archivedMaxAgeDays: 30 },
  );
  expect(ids(p)).toEqual(["del-old:expired", "arch-old:expired"]);
  expect(p.removals[1]!.detail).toBe("archived, not updated for 31 days (limit 30)");
});

describe("capacity cap", () => {
  const seeds: Seed[] = [
    { id: "idle-oldest", ageDays: 50 },
    { id: "interrupted", ageDays: 40, status: "interrupted" },
    { id: "arch-new", ageDays: 2, status: "archived" },
    { id: "arch-old", ageDays: 20, status: "archived" },
    { id: "deleted", ageDays: 1, status: "deleted" },
    { id: "running-oldest", ageDays: 99, status: "running" },
    { id: "pinned-oldest", ageDays: 98, pinned: true },
    { id: "idle-new", ageDays: 1 },
  ];

  test("deleted first, then archived oldest first, then idle/interrupted oldest first", () => {
    expect(ids(plan(seeds, { maxSessions: 5 }))).toEqual([
      "deleted:over-capacity",
      "arch-old:over-capacity",
      "arch-new:over-capacity",
    ]);
    expect(ids(plan(seeds, { maxSessions: 3 }))).toEqual([
      "deleted:over-capacity",
      "arch-old:over-capacity",
      "arch-new:over-capacity",
      "idle-oldest:over-capacity",
      "interrupted:over-capacity",
    ]);
  });

  test("running and pinned sessions are never taken, and the unmet cap is reported", () => {
    const p = plan(seeds, { maxSessions: 0 });
    expect(p.removals.map((r) => r.id)).not.toContain("running-oldest");
    expect(p.removals.map((r) => r.id)).not.toContain("pinned-oldest");
    expect(p.after.sessions).toBe(2);
    expect(p.unmet).toEqual(["2 sessions stay over the cap of 0: the rest are running or pinned"]);
  });

  test("under the cap nothing goes; earlier rules count towards it", () => {
    expect(plan(seeds, { maxSessions: 8 }).removals).toEqual([]);
    const p = plan(seeds, { maxSessions: 6, archivedMaxAgeDays: 10 });
    expect(ids(p)).toEqual(["arch-old:expired", "deleted:over-capacity"]);
  });
});

describe("disk budget", () => {
  test("removes in eviction order until the store fits, skipping protected sessions", () => {
    const p = planGc(
      inventory(
        [
          { id: "big-running", ageDays: 9, status: "running", bytes: 5000 },
          { id: "arch", ageDays: 1, status: "archived", bytes: 300 },
          { id: "idle-old", ageDays: 8, bytes: 1000 },
          { id: "idle-new", ageDays: 2, bytes: 1000 },
        ],
        200,
      ),
      policy({ maxBytes: 6300 }),
      NOW,
    );
    expect(p.before).toEqual({ sessions: 4, bytes: 7500 });
    expect(ids(p)).toEqual(["arch:over-budget", "idle-old:over-budget"]);
    expect(p.after).toEqual({ sessions: 2, bytes: 6200 });
    expect(p.unmet).toEqual([]);
  });

  test("a budget below what running sessions hold is reported as unmet", () => {
    const p = plan(
      [
        { id: "r", ageDays: 1, status: "running", bytes: 900 },
        { id: "i", ageDays: 1 },
      ],
      {
        maxBytes: 500,
      },
    );
    expect(ids(p)).toEqual(["i:over-budget"]);
    expect(p.unmet[0]).toStartWith("400 bytes stay over the budget of 500");
  });
});

describe("policy and sizes", () => {
  test("sizes parse as config.json writes them", () => {
    expect(parseByteSize("2GB")).toBe(2_000_000_000);
    expect(parseByteSize("500 MiB")).toBe(500 * 1024 * 1024);
    expect(parseByteSize("1.5k")).toBe(1500);
    expect(parseByteSize("4096")).toBe(4096);
    expect(parseByteSize(" 10 b ")).toBe(10);
    expect(parseByteSize(123)).toBe(123);
    for (const bad of ["", "GB", "-1", "2 XB", "1e3", "2 GiBs"]) expect(parseByteSize(bad)).toBeUndefined();
    expect(formatBytes(1536)).toBe("1.5 KiB");
  });

  test("flags win over config.json; mode defaults to warn; --enforce forces enforce", () => {
    expect(resolvePolicy(undefined)).toEqual({ mode: "warn", emptyGraceMs: EMPTY_SHELL_GRACE_MS });
    const p = resolvePolicy(
      { mode: "warn", archivedMaxAgeDays: 90, maxSessions: 1000, maxBytes: "1 KiB" },
      { enforce: true, maxSessions: 5 },
    );
    expect(p).toEqual({
      mode: "enforce",
      archivedMaxAgeDays: 90,
      maxSessions: 5,
      maxBytes: 1024,
      emptyGraceMs: EMPTY_SHELL_GRACE_MS,
    });
  });
});

test("DAY matches the planner's notion of a day", () => {
  const p = plan([{ id: "a", ageDays: 1, status: "archived" }], { archivedMaxAgeDays: 1 }, NOW + DAY / 2);
  expect(ids(p)).toEqual(["a:expired"]);
});
