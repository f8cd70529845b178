/**
 * `freecode gc` from the command line (from source) on real homes: warn mode says what it would
 * remove on stderr and removes nothing, --enforce and `gc.mode: enforce` remove, --dry-run never
 * does, --json is one document of a stable shape, and bad flag values are one-line usage errors.
 */
import { expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { GcReport } from "../../src/maintenance/gc.ts";
import { parseJson, runCli, tempHome } from "../_helpers.ts";
import { type Seed, seedAndClose } from "./_seed.ts";

const SEEDS: Seed[] = [
  { id: "shell", ageDays: 2, messages: 0 },
  { id: "arch-old", ageDays: 120, status: "archived" },
  { id: "idle", ageDays: 10 },
  { id: "running", ageDays: 400, status: "running" },
];

const listed = (home: string, store = "files") =>
  parseJson<{ items: { id: string }[] }>(
    runCli(["session", "list", "--all", "--json", "--store", store], { home }),
  )
    .items.map((m) => m.id)
    .sort();

test("warn mode (the default) reports on stderr, hints at --enforce, removes nothing, exits 0", async () => {
  await using home = await tempHome();
  await seedAndClose("files", home.path, SEEDS);
  const r = runCli(["gc", "--archived-max-age-days", "90"], { home: home.path });
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout).toBe("");
  expect(r.stderr).toContain("would remove shell  empty-shell: no messages, untouched for 2 days");
  expect(r.stderr).toContain("would remove arch-old  expired: archived, not updated for 120 days (limit 90)");
  expect(r.stderr).toContain("--enforce");
  expect(listed(home.path)).toEqual(["arch-old", "idle", "running", "shell"]);
}, 30_000);

test("--enforce removes; config.json's gc policy and mode apply, flags win", async () => {
  await using home = await tempHome();
  await seedAndClose("files", home.path, SEEDS);
  writeFileSync(join(home.path, "config.json"), JSON.stringify({ gc: { mode: "enforce", maxSessions: 3 } }));
  // The config's cap alone: the shell goes first, which brings the count to the cap.
  const r = runCli(["gc"], { home: home.path });
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout).toContain("removed      shell  empty-shell");
  expect(r.stdout).toContain("4 sessions");
  expect(listed(home.path)).toEqual(["arch-old", "idle", "running"]);
  // A flag tightens the cap: archived goes before idle; running never goes.
  const tight = runCli(["gc", "--max-sessions", "0"], { home: home.path });
  expect(tight.code, tight.stderr).toBe(0);
  expect(tight.stderr).toContain("1 session stays over the cap of 0: the rest are running or pinned");
  expect(listed(home.path)).toEqual(["running"]);
}, 30_000);

test("--dry-run prints the plan on stdout and removes nothing, even with --enforce", async () => {
  await using home = await tempHome();
  await seedAndClose("files", home.path, SEEDS);
  const r = runCli(["gc", "--dry-run", "--enforce", "--max-sessions", "1"], { home: home.path });
  expect(r.code, r.stderr).toBe(0);
  expect(
    r.stdout
      .split("\n")
      .filter((l) => l.startsWith("would remove"))
      .map((l) => l.split(/\s+/)[2]),
  ).toEqual(["shell", "arch-old", "idle"]);
  expect(r.stdout).toContain("(dry run)");
  expect(listed(home.path)).toEqual(["arch-old", "idle", "running", "shell"]);
}, 30_000);

test("--json is one document: policy, sessions with id/title/reason/bytes/result, totals (sqlite)", async () => {
  await using home = await tempHome();
  await seedAndClose("sqlite", home.path, SEEDS);
  const r = runCli(["gc", "--store", "sqlite", "--json", "--enforce", "--max-bytes", "1b"], {
    home: home.path,
  });
  expect(r.code, r.stderr).toBe(0);
  const doc = parseJson<GcReport>(r);
  expect(Object.keys(doc).sort()).toEqual(
    [
      "after",
      "before",
      "dryRun",
      "enforced",
      "policy",
      "sessions",
      "sizeMethod",
      "snapshots",
      "unmet",
    ].sort(),
  );
  expect(doc).toMatchObject({
    enforced: true,
    dryRun: false,
    sizeMethod: "serialized",
    policy: { mode: "enforce", maxBytes: 1 },
    before: { sessions: 4 },
  });
  const s = doc.sessions.find((x) => x.id === "shell")!;
  expect(s).toMatchObject({ title: "session shell", reason: "empty-shell", result: "removed" });
  expect(s.bytes).toBeGreaterThan(0);
  expect(doc.sessions.map((x) => x.id)).not.toContain("running");
  expect(doc.after.bytes).toBe(doc.before.bytes - doc.sessions.reduce((n, x) => n + x.bytes, 0));
  expect(listed(home.path, "sqlite")).toEqual(["running"]);
}, 30_000);

test("nothing to do says so; bad flag values are one-line usage errors (exit 2)", async () => {
  await using home = await tempHome();
  const empty = runCli(["gc"], { home: home.path });
  expect(empty.code).toBe(0);
  expect(empty.stderr).toContain("nothing to remove");
  for (const [flag, value, says] of [
    ["--max-sessions", "-3", "--max-sessions must be a whole number"],
    ["--max-sessions", "2.5", "--max-sessions must be a whole number"],
    ["--max-bytes", "lots", "--max-bytes must be a size"],
    ["--archived-max-age-days", "ten", "--archived-max-age-days must be a number"],
  ] as const) {
    const r = runCli(["gc", `${flag}=${value}`], { home: home.path });
    expect(r.code, `${flag} ${value}`).toBe(2);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toContain(says);
  }
  expect(runCli(["gc", "--max-sessions"], { home: home.path }).code).toBe(2);
  writeFileSync(join(home.path, "config.json"), JSON.stringify({ gc: { mode: "always" } }));
  const bad = runCli(["gc"], { home: home.path });
  expect(bad.code).toBe(2);
  expect(bad.stderr).toContain("gc.mode");
  // A size no double holds exactly names the file by its path, as every config error does.
  const config = join(home.path, "config.json");
  writeFileSync(config, '{"gc": {"maxBytes": 1e300}}');
  const huge = runCli(["gc", "--dry-run"], { home: home.path });
  expect([huge.code, huge.stderr]).toEqual([2, expect.stringContaining(`${config}: invalid config:`)]);
  expect(huge.stderr).toContain("(field gc.maxBytes)");
}, 30_000);
