/** `freecode session snapshots|undo|redo` from source, over snapshots an agent captured with the library. */
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createSnapshots } from "../../src/snapshot/snapshots.ts";
import { withLock } from "../../src/util/lock.ts";
import { BUN, parseJson, ROOT, runCli, tempDir, tempHome } from "../_helpers.ts";
import { readTree, writeFiles } from "./_project.ts";

const eventsOf = (home: string, id: string) => {
  const file = join(home, "rollout", "sessions", id, "events.jsonl");
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as { type: string; seq: number } & Record<string, unknown>);
};

describe("freecode session snapshots / undo / redo", () => {
  test("list, dry run, undo, redo, with --json and exit codes", async () => {
    await using home = await tempHome();
    await using project = await tempDir("freecode-project-");
    const env = { FREECODE_ROLLOUT: "on" };
    const cli = (args: string[]) => runCli(args, { home: home.path, env });
    const made = cli(["session", "create", "--id", "s1", "--project", project.path, "--prompt", "edit it"]);
    expect(made.code).toBe(0);

    writeFiles(project.path, { "a.txt": "one\n" });
    const snaps = createSnapshots({ home: home.path, projectPath: project.path, sessionId: "s1" });
    await snaps.capture("m1");
    writeFiles(project.path, { "a.txt": "two\n", "b.txt": "new\n" });
    await snaps.capture("m2");

    const list = parseJson<{ position: number; snapshots: { entryId: string; current: boolean }[] }>(
      cli(["session", "snapshots", "s1", "--json"]),
    );
    expect(list.position).toBe(1);
    expect(list.snapshots.map((s) => [s.entryId, s.current])).toEqual([
      ["m1", false],
      ["m2", true],
    ]);
    const human = cli(["session", "snapshots", "s1"]);
    expect(human.stdout).toMatch(/^\* +1 .* m2$/m);

    const dry = cli(["session", "undo", "s1", "--dry-run"]);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain("2 files would change");
    expect(dry.stdout).toContain("D b.txt\n");
    expect(readTree(project.path)).toEqual({ "a.txt": "two\n", "b.txt": "new\n" });

    const undo = parseJson<{ filesChanged: number; entryId: string; files: unknown[] }>(
      cli(["session", "undo", "s1", "--json"]),
    );
    expect(undo).toMatchObject({ filesChanged: 2, entryId: "m1" });
    expect(readTree(project.path)).toEqual({ "a.txt": "one\n" });

    const again = cli(["session", "undo", "s1"]);
    expect(again.code).toBe(4);
    expect(again.stderr).toContain("nothing to undo");
    expect(again.stderr.trim().split("\n")).toHaveLength(1);

    const redo = cli(["session", "redo", "s1"]);
    expect(redo.code).toBe(0);
    expect(redo.stdout).toMatch(
      /^redo: restored snapshot [0-9a-f]{12}: 2 files changed\nM a.txt\nA b.txt\n$/,
    );
    expect(readTree(project.path)).toEqual({ "a.txt": "two\n", "b.txt": "new\n" });
    expect(cli(["session", "redo", "s1"]).code).toBe(4);

    // The dry run recorded nothing: only the two real restores are in the rollout.
    const restored = eventsOf(home.path, "s1").filter((e) => e.type.startsWith("checkpoint."));
    expect(restored.map((e) => [e.type, e.entryId, e.filesChanged])).toEqual([
      ["checkpoint.restored", "m1", 2],
      ["checkpoint.restored", "m2", 2],
    ]);
    expect(typeof restored[0]!.durationMs).toBe("number");
  });

  test("session snapshot captures on demand: named, unchanged says so, git missing is an error", async () => {
    await using home = await tempHome();
    await using project = await tempDir("freecode-project-");
    const env = { FREECODE_ROLLOUT: "on" };
    const cli = (args: string[], extra: Record<string, string> = {}) =>
      runCli(args, { home: home.path, env: { ...env, ...extra } });
    expect(cli(["session", "create", "--id", "s2", "--project", project.path, "--prompt", "go"]).code).toBe(
      0,
    );
    writeFiles(project.path, { "a.txt": "one\n" });
    const first = cli(["session", "snapshot", "s2", "--entry", "before-refactor"]);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toMatch(/^captured: [0-9a-f]{12} before-refactor\n$/);
    expect(cli(["session", "snapshot", "s2"]).stdout).toMatch(/^unchanged since the current snapshot: /);
    writeFiles(project.path, { "a.txt": "two\n" });
    const second = parseJson<{ captured: boolean; isNew: boolean }>(
      cli(["session", "snapshot", "s2", "--json"]),
    );
    expect(second).toMatchObject({ captured: true, isNew: true });
    const one = cli(["session", "undo", "s2"]);
    expect(one.code).toBe(0);
    // One file is "1 file", not "1 files".
    expect(one.stdout).toMatch(/^undo: restored snapshot [0-9a-f]{12}: 1 file changed\nM a.txt\n$/);
    expect(readTree(project.path)).toEqual({ "a.txt": "one\n" });
    // Every capture is recorded, the unchanged one too (same snapshot id).
    const captured = eventsOf(home.path, "s2").filter((e) => e.type === "checkpoint.captured");
    expect(captured.map((e) => e.entryId)).toEqual(["before-refactor", undefined, undefined]);
    expect(captured[1]!.snapshot).toBe(captured[0]!.snapshot);
    // No git on PATH: a one-line error and exit 69, not a silent skip.
    const nogit = cli(["session", "snapshot", "s2"], { PATH: "/nonexistent" });
    expect(nogit.code).toBe(69);
    expect(nogit.stderr).toContain("git is not available");
  });

  test("unknown session: not_found (exit 3), one line on stderr, nothing written", async () => {
    await using home = await tempHome();
    const r = runCli(["session", "undo", "nope"], { home: home.path });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain("no session nope");
    expect(eventsOf(home.path, "nope")).toEqual([]);
  });
});

test("regression: store migrate --to-home takes the sessions' snapshots along, whole or into the target home's store of the project, so undo works there (it found none)", async () => {
  await using from = await tempHome();
  await using to = await tempHome();
  await using project = await tempDir("freecode-project-");
  const env = { FREECODE_ROLLOUT: "on" };
  const at = (home: string, store?: string) => (args: string[]) =>
    runCli(args, { home, env: store ? { ...env, FREECODE_STORE: store } : env });
  const a = at(from.path);
  expect(a(["session", "create", "--id", "moved", "--project", project.path, "--prompt", "edit"]).code).toBe(
    0,
  );
  writeFiles(project.path, { "f.txt": "v1\n" });
  expect(a(["session", "snapshot", "moved"]).code).toBe(0);
  writeFiles(project.path, { "f.txt": "v2\n" });
  expect(a(["session", "snapshot", "moved"]).code).toBe(0);
  // The target home's files store has a session with snapshots of the same project: merged into.
  const b = at(to.path);
  expect(b(["session", "create", "--id", "stays", "--project", project.path, "--prompt", "x"]).code).toBe(0);
  expect(b(["session", "snapshot", "stays"]).code).toBe(0);
  for (const [target, into] of [
    ["sqlite", to.path],
    ["json", join(to.path, "fresh")],
  ] as const) {
    const migrated = parseJson<{ snapshots: { copied: number; merged: number; problems: string[] } }>(
      a(["store", "migrate", "--to", target, "--to-home", into, "--json"]),
    );
    expect([target, migrated.snapshots]).toEqual([
      target,
      { copied: into === to.path ? 0 : 1, merged: into === to.path ? 1 : 0, problems: [] },
    ]);
    const there = at(into, target);
    const list = parseJson<{ snapshots: unknown[] }>(there(["session", "snapshots", "moved", "--json"]));
    expect([target, list.snapshots.length]).toEqual([target, 2]);
    expect(there(["session", "undo", "moved"]).code).toBe(0);
    expect(readTree(project.path)).toEqual({ "f.txt": "v1\n" });
    expect(there(["session", "redo", "moved"]).code).toBe(0);
    expect(readTree(project.path)).toEqual({ "f.txt": "v2\n" });
  }
  // The target's own session keeps its snapshots.
  expect(
    parseJson<{ snapshots: unknown[] }>(b(["session", "snapshots", "stays", "--json"])).snapshots,
  ).toHaveLength(1);
}, 60_000);

test("regression: store migrate --to-home copies a snapshot store only while no capture holds a session of it, and a link to the home is the home (it locked its own store twice and failed after 10 s)", async () => {
  await using from = await tempHome();
  await using to = await tempHome();
  await using project = await tempDir("freecode-project-");
  const a = (args: string[]) => runCli(args, { home: from.path, env: { FREECODE_ROLLOUT: "on" } });
  expect(a(["session", "create", "--id", "moved", "--project", project.path, "--prompt", "edit"]).code).toBe(
    0,
  );
  writeFiles(project.path, { "f.txt": "v1\n" });
  expect(a(["session", "snapshot", "moved"]).code).toBe(0);
  const [store] = readdirSync(join(from.path, "snapshots"));
  const root = join(from.path, "snapshots", store!);
  const [state] = readdirSync(join(root, "sessions")).filter((n) => n.endsWith(".json"));
  const into = join(to.path, "new");
  let migrated: Promise<number> | undefined;
  // A capture at work holds the session's lock: the copy waits for it.
  await withLock(join(root, "sessions", state!.replace(/\.json$/, ".lock")), async () => {
    const migrate = Bun.spawn(
      [BUN, join(ROOT, "src/cli/main.ts"), "store", "migrate", "--to", "json", "--to-home", into],
      {
        env: { ...process.env, FREECODE_HOME: from.path, NO_COLOR: "1" },
        stdout: "pipe",
        stderr: "pipe",
      },
    );
    await Bun.sleep(2500);
    expect(existsSync(join(into, "snapshots", store!))).toBe(false);
    migrated = migrate.exited;
  });
  expect(await migrated).toBe(0);
  expect(existsSync(join(into, "snapshots", store!, "git", "HEAD"))).toBe(true);
  // A store of many sessions: their locks are taken one after the other (nested, 10,000 overflowed
  // the stack and nothing was copied).
  for (let i = 0; i < 10_000; i++) writeFileSync(join(root, "sessions", `${i.toString(16)}.json`), "{}");
  const many = join(to.path, "many");
  const copied = parseJson<{ snapshots: { copied: number; problems: string[] } }>(
    a(["store", "migrate", "--to", "json", "--to-home", many, "--json"]),
  );
  expect(copied.snapshots).toMatchObject({ copied: 1, problems: [] });
  expect(readdirSync(join(many, "snapshots", store!, "sessions")).length).toBe(10_001);
  // A home whose snapshots are a link to these: the same snapshots, nothing to copy.
  const shared = join(to.path, "shared");
  mkdirSync(shared);
  symlinkSync(join(from.path, "snapshots"), join(shared, "snapshots"));
  const t1 = performance.now();
  const sharedRun = parseJson<{ snapshots: { copied: number; merged: number; problems: string[] } }>(
    a(["store", "migrate", "--to", "json", "--to-home", shared, "--json"]),
  );
  expect(sharedRun.snapshots).toEqual({ copied: 0, merged: 0, problems: [] });
  expect(performance.now() - t1).toBeLessThan(8000);
  // The same home through a link: nothing to copy, done at once.
  const link = join(to.path, "link");
  symlinkSync(from.path, link);
  const t0 = performance.now();
  expect(a(["store", "migrate", "--to", "sqlite", "--to-home", link]).code).toBe(0);
  expect(performance.now() - t0).toBeLessThan(8000);
}, 60_000);
