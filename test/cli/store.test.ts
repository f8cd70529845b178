/**
 * `freecode store info|migrate|verify|reindex|goal` from the command line (from source), on real
 * homes: the adapter and the reason it was chosen, a verified migration with equal hashes and a
 * refused non-empty target, verify finding and repairing a torn line, goals set and shown.
 */
import { expect, test } from "bun:test";
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  truncateSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { withLock } from "../../src/util/lock.ts";
import { BUN, parseJson, ROOT, runCli, runCliAsync, tempDir, tempHome } from "../_helpers.ts";

const create = (home: string, store: string, id: string, prompt: string) => {
  const r = runCli(
    ["session", "create", "--store", store, "--prompt", prompt, "--project", "/work/alpha", "--id", id],
    { home },
  );
  expect(r.code, r.stderr).toBe(0);
};

test("store info says which adapter is in use and why", async () => {
  await using home = await tempHome();
  const auto = parseJson<{ adapter: string; reason: string; threadStore: { engine: string } }>(
    runCli(["store", "info", "--store", "auto", "--json"], { home: home.path }),
  );
  expect(auto).toMatchObject({
    adapter: "sqlite",
    reason: "auto: sqlite by --store",
    threadStore: { engine: "sqlite" },
  });
  const env = runCli(["store", "info"], { home: home.path, env: { FREECODE_STORE: "json" } });
  expect(env.stdout).toContain('adapter:      json (requested "json" by FREECODE_STORE)');
  writeFileSync(join(home.path, "config.json"), JSON.stringify({ store: "json" }));
  expect(runCli(["store", "info"], { home: home.path }).stdout).toContain(
    'adapter:      json (requested "json" by config.json)',
  );
  expect(runCli(["store", "info", "--store", "nope"], { home: home.path }).code).toBe(2);
}, 30_000);

test("store migrate copies and verifies; a non-empty target is refused", async () => {
  await using home = await tempHome();
  create(home.path, "files", "s1", "first session about parsers");
  create(home.path, "files", "s2", "second session about lexers");
  const r = runCli(["store", "migrate", "--to", "sqlite", "--json"], { home: home.path });
  const report = parseJson<{
    verified: boolean;
    copied: { sessions: number; messages: number; hash: string };
  }>(r);
  expect(report).toMatchObject({ verified: true, copied: { sessions: 2, messages: 2 } });
  const back = runCli(["store", "migrate", "--store", "sqlite", "--to", "sqljs", "--json"], {
    home: home.path,
  });
  expect(parseJson<{ copied: { hash: string } }>(back).copied.hash).toBe(report.copied.hash);
  const listed = parseJson<{ items: { id: string }[] }>(
    runCli(["session", "list", "--store", "sqljs", "--json"], { home: home.path }),
  );
  expect(listed.items.map((m) => m.id).sort()).toEqual(["s1", "s2"]);
  const again = runCli(["store", "migrate", "--to", "sqlite"], { home: home.path });
  expect(again.code).toBe(4);
  expect(again.stderr).toContain("not empty");
  expect(runCli(["store", "migrate", "--to", "files"], { home: home.path }).code).toBe(2);
}, 30_000);

test("store verify finds a torn line (exit 1) and --repair cuts it (exit 0)", async () => {
  await using home = await tempHome();
  create(home.path, "files", "s1", "hello");
  expect(runCli(["store", "verify"], { home: home.path }).code).toBe(0);
  const sessions = join(home.path, "sessions");
  const project = readdirSync(sessions)[0]!;
  appendFileSync(join(sessions, project, "s1", "messages.jsonl"), '{"id":"half');
  const found = runCli(["store", "verify", "--json"], { home: home.path });
  expect(found.code).toBe(1);
  expect(parseJson<{ problems: { kind: string }[] }>(found).problems.map((p) => p.kind)).toEqual([
    "torn_line",
  ]);
  expect(runCli(["store", "verify", "--repair"], { home: home.path }).code).toBe(0);
  expect(runCli(["store", "verify"], { home: home.path }).code).toBe(0);
}, 30_000);

test("regression: one --repair pass cuts a torn last message and recounts the session (the count was left 'needs attention' for a second run)", async () => {
  await using home = await tempHome();
  create(home.path, "files", "s1", "hello");
  const stdin = `${JSON.stringify({ role: "assistant", parts: [{ type: "text", content: "a reply long enough to cut" }] })}\n`;
  expect(runCli(["session", "append", "s1"], { home: home.path, stdin }).code).toBe(0);
  const project = readdirSync(join(home.path, "sessions"))[0]!;
  const log = join(home.path, "sessions", project, "s1", "messages.jsonl");
  truncateSync(log, statSync(log).size - 10); // the last message torn: the meta counts it
  const repaired = runCli(["store", "verify", "--repair", "--json"], { home: home.path });
  expect(repaired.code).toBe(0);
  expect(parseJson<{ problems: { kind: string; repaired?: boolean }[] }>(repaired).problems).toEqual([
    expect.objectContaining({ kind: "torn_line", repaired: true }),
    expect.objectContaining({ kind: "count_drift", repaired: true }),
  ]);
  expect(runCli(["store", "verify"], { home: home.path }).code).toBe(0);
}, 30_000);

test("store verify --repair cuts a torn tail under the writers' lock, so an append finishing meanwhile is kept", async () => {
  await using home = await tempHome();
  create(home.path, "files", "s1", "hello");
  const project = readdirSync(join(home.path, "sessions"))[0]!;
  const log = join(home.path, "sessions", project, "s1", "messages.jsonl");
  const line = JSON.stringify({ id: "m9", role: "user", parts: [], timestamp: Date.now() });
  // An append in progress: half its line written, the writer holding the session's lock.
  appendFileSync(log, line.slice(0, 10));
  const { running } = await withLock(join(home.path, "state", "locks", "s-s1.lock"), async () => {
    const running = runCliAsync(["store", "verify", "--repair", "--json"], { home: home.path });
    await Bun.sleep(1500); // verify has found the torn tail and waits for the lock
    appendFileSync(log, `${line.slice(10)}\n`); // the append completes (and is acknowledged)
    return { running };
  });
  await running;
  expect(readFileSync(log, "utf8").endsWith(`${line}\n`)).toBe(true);
}, 30_000);

test("store reindex rebuilds the thread store; store goal sets and shows a goal", async () => {
  await using home = await tempHome();
  create(home.path, "sqlite", "s1", "hello");
  const re = parseJson<{ index: { sessions: number }; threads: { updated: number } }>(
    runCli(["store", "reindex", "--store", "sqlite", "--json"], { home: home.path }),
  );
  expect(re).toMatchObject({ index: { sessions: 1 }, threads: { updated: 1 } });
  expect(
    runCli(["store", "goal", "s1", "--store", "sqlite", "--text", "ship it"], { home: home.path }).stdout,
  ).toBe("active: ship it\n");
  runCli(["store", "goal", "s1", "--store", "sqlite", "--status", "completed"], { home: home.path });
  const shown = parseJson<{ goal: unknown }>(
    runCli(["store", "goal", "s1", "--store", "sqlite", "--json"], { home: home.path }),
  );
  expect(shown.goal).toEqual({ text: "ship it", status: "completed" });
  expect(
    runCli(["store", "goal", "s1", "--store", "sqlite", "--status", "bogus"], { home: home.path }).code,
  ).toBe(2);
  expect(runCli(["store", "goal", "nope", "--store", "sqlite"], { home: home.path }).code).toBe(3);
  const both = runCli(["store", "goal", "s1", "--store", "sqlite", "--clear", "--text", "y"], {
    home: home.path,
  });
  expect(both.code).toBe(2);
  expect(both.stderr).toContain("--clear removes the goal: it cannot be given with --text or --status");
  const dot = runCli(["rollout", "cat", "."], { home: home.path });
  expect(dot.code).toBe(2);
  expect(dot.stderr).toContain("id must not be . or ..");
}, 30_000);

test("store unlock removes dead locks, keeps live ones, and another host's only when named", async () => {
  await using home = await tempHome();
  create(home.path, "files", "s1", "hello");
  const locks = join(home.path, "state", "locks");
  mkdirSync(locks, { recursive: true });
  const host = hostname();
  const dead = Bun.spawnSync(["true"]).pid;
  writeFileSync(join(locks, "e-s1.lock"), JSON.stringify({ pid: dead, start: null, host }));
  writeFileSync(join(locks, "s-s1.lock"), JSON.stringify({ pid: 1, start: null, host: "gone-box" }));
  writeFileSync(
    join(home.path, "state", "imports.lock"),
    JSON.stringify({ pid: process.pid, start: null, host }),
  );

  const dry = runCli(["store", "unlock", "--dry-run"], { home: home.path });
  expect(dry.code, dry.stderr).toBe(0);
  expect(dry.stdout).toContain("would remove state/locks/e-s1.lock: pid");
  expect(existsSync(join(locks, "e-s1.lock"))).toBe(true);
  // --json says what would go without saying it went (CLI review 10).
  const dryJson = parseJson<{ locks: { file: string; removed: boolean; wouldRemove?: boolean }[] }>(
    runCli(["store", "unlock", "--dry-run", "--json"], { home: home.path }),
  );
  expect(dryJson.locks.find((l) => l.file === "state/locks/e-s1.lock")).toMatchObject({
    removed: false,
    wouldRemove: true,
  });
  expect(dryJson.locks.every((l) => !l.removed)).toBe(true);

  const r = runCli(["store", "unlock"], { home: home.path });
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout).toContain("removed      state/locks/e-s1.lock");
  expect(r.stdout).toContain("kept         state/locks/s-s1.lock: held by pid 1 on gone-box");
  expect(r.stdout).toContain("kept         state/imports.lock: held by pid");
  expect(existsSync(join(locks, "e-s1.lock"))).toBe(false);
  expect(existsSync(join(locks, "s-s1.lock"))).toBe(true);

  const named = parseJson<{ locks: { file: string; state: string; removed: boolean }[] }>(
    runCli(["store", "unlock", "--host", "gone-box", "--json"], { home: home.path }),
  );
  expect(named.locks).toEqual([
    expect.objectContaining({ file: "state/imports.lock", state: "live", removed: false }),
    expect.objectContaining({ file: "state/locks/s-s1.lock", state: "other-host", removed: true }),
  ]);
  expect(existsSync(join(home.path, "state", "imports.lock"))).toBe(true);
  // Only freecode's own locks, under state/: a project's lock files in a mistaken home stay.
  writeFileSync(join(home.path, "yarn.lock"), "# yarn lockfile v1\n");
  mkdirSync(join(home.path, "crate"));
  writeFileSync(join(home.path, "crate", "Cargo.lock"), "version = 3\n");
  const old = new Date(Date.now() - 3_600_000);
  utimesSync(join(home.path, "yarn.lock"), old, old);
  utimesSync(join(home.path, "crate", "Cargo.lock"), old, old);
  // A pid no process can have is garbage, broken like any garbled lock once a second old.
  writeFileSync(join(locks, "e-zero.lock"), JSON.stringify({ pid: 0, start: null, host }));
  utimesSync(join(locks, "e-zero.lock"), old, old);
  const swept = runCli(["store", "unlock"], { home: home.path });
  expect(swept.stdout).toContain("removed      state/locks/e-zero.lock: empty or garbled");
  expect(swept.stdout).not.toContain("yarn.lock");
  expect(existsSync(join(home.path, "yarn.lock"))).toBe(true);
  expect(existsSync(join(home.path, "crate", "Cargo.lock"))).toBe(true);
  const appended = runCli(["session", "append", "s1"], {
    home: home.path,
    stdin: `${JSON.stringify({ role: "user", parts: [{ type: "text", content: "more" }] })}\n`,
  });
  expect(appended.code, appended.stderr).toBe(0);
  // The git snapshots' own locks are seen (their `locked` error names this command), git's are not.
  const snap = join(home.path, "snapshots", "proj");
  mkdirSync(join(snap, "sessions"), { recursive: true });
  mkdirSync(join(snap, "git"), { recursive: true });
  writeFileSync(
    join(snap, "sessions", "abcd.lock"),
    JSON.stringify({ pid: 1, start: null, host: "gone-box" }),
  );
  writeFileSync(join(snap, "store.lock"), JSON.stringify({ pid: dead, start: null, host }));
  writeFileSync(join(snap, "git", "index.lock"), "");
  utimesSync(join(snap, "git", "index.lock"), old, old);
  const snaps = runCli(["store", "unlock", "--host", "gone-box"], { home: home.path });
  expect(snaps.stdout).toContain("removed      snapshots/proj/sessions/abcd.lock");
  expect(snaps.stdout).toContain("removed      snapshots/proj/store.lock");
  expect(snaps.stdout).not.toContain("index.lock");
  expect(existsSync(join(snap, "git", "index.lock"))).toBe(true);
}, 30_000);

test("store unlock follows a state/locks that is a symlink to another directory", async () => {
  await using home = await tempHome();
  await using elsewhere = await tempDir();
  create(home.path, "files", "s1", "hello");
  const locks = join(home.path, "state", "locks");
  rmSync(locks, { recursive: true, force: true });
  symlinkSync(elsewhere.path, locks);
  writeFileSync(
    join(elsewhere.path, "s-s1.lock"),
    JSON.stringify({ pid: 1, start: null, host: "other-box" }),
  );
  const r = parseJson<{ locks: { file: string; removed: boolean }[] }>(
    runCli(["store", "unlock", "--host", "other-box", "--json"], { home: home.path }),
  );
  expect(r.locks).toEqual([expect.objectContaining({ file: "state/locks/s-s1.lock", removed: true })]);
  expect(existsSync(join(elsewhere.path, "s-s1.lock"))).toBe(false);
});

test("store verify on sqlite: no database yet is an empty store; a damaged one is a problem, not a crash", async () => {
  await using home = await tempHome();
  const empty = runCli(["store", "verify", "--store", "sqlite"], { home: home.path });
  expect([empty.code, empty.stderr]).toEqual([0, ""]);
  expect(existsSync(join(home.path, "state", "store.db"))).toBe(false); // a check makes nothing
  mkdirSync(join(home.path, "state"), { recursive: true });
  writeFileSync(join(home.path, "state", "store.db"), "this is not a database, just bytes ".repeat(200));
  const damaged = runCli(["store", "verify", "--store", "sqlite", "--json"], { home: home.path });
  expect(damaged.code).toBe(1);
  expect(damaged.stderr).not.toContain("    at ");
  expect(JSON.parse(damaged.stdout).problems[0]).toMatchObject({ kind: "engine" });
});

test("store verify finds listing rows that disagree with meta.json; --repair rebuilds them", async () => {
  await using home = await tempHome();
  create(home.path, "files", "s1", "the title");
  expect(runCli(["session", "list"], { home: home.path }).code).toBe(0); // the index is made on first use
  // A row the index kept while meta.json moved on (an edit it did not notice, a lost update).
  const { Database } = await import("bun:sqlite");
  const db = new Database(join(home.path, "state", "sessions-index.db"));
  const row = db.query("select meta from sessions where id = 's1'").get() as { meta: string };
  db.query("update sessions set meta = ? where id = 's1'").run(
    row.meta.replace('"the title"', '"stale title"'),
  );
  db.close();
  expect(runCli(["session", "list"], { home: home.path }).stdout).toContain("stale title");
  const found = runCli(["store", "verify"], { home: home.path });
  expect(found.code).toBe(1);
  // Named, with what differs (regression: "index_drift  : the index disagrees …" named neither).
  expect(found.stdout).toContain("index_drift");
  expect(found.stdout).toContain("s1: the index lists it with another title than its meta.json holds");
  const json = JSON.parse(runCli(["store", "verify", "--json"], { home: home.path }).stdout);
  expect(json.problems).toEqual([
    expect.objectContaining({ kind: "index_drift", sessionId: "s1", repairable: true }),
  ]);
  expect(runCli(["store", "verify", "--repair"], { home: home.path }).code).toBe(0);
  expect(runCli(["session", "list"], { home: home.path }).stdout).toContain("the title");
});

test("store reindex names a session directory it cannot index, exit 1", async () => {
  await using home = await tempHome();
  create(home.path, "files", "s1", "one");
  create(home.path, "files", "s2", "two");
  const file = [...new Bun.Glob("sessions/*/s2/meta.json").scanSync({ cwd: home.path, absolute: true })][0]!;
  writeFileSync(file, "{bad");
  const r = runCli(["store", "reindex", "--json"], { home: home.path });
  expect(r.code).toBe(1);
  expect(r.stderr).toContain("1 session directory is not in the index (first: s2: meta.json is not JSON");
  expect(JSON.parse(r.stdout).unlisted).toEqual([expect.objectContaining({ id: "s2" })]);
  // Regression: a directory in meta.json's place failed the whole reindex, naming no file (EISDIR).
  rmSync(file);
  mkdirSync(file);
  const dir = runCli(["store", "reindex"], { home: home.path });
  expect(dir.code).toBe(1);
  expect(dir.stderr).toContain("(first: s2: meta.json is a directory, not a file)");
  const show = runCli(["session", "show", "s2"], { home: home.path });
  expect([show.code, show.stderr.trim()]).toEqual([
    2,
    `[error] ${file}: meta.json is a directory, not a file`,
  ]);
});

test("store verify reads a json or sqljs store that lives only in its journal (its writer was killed)", async () => {
  for (const store of ["json", "sqljs"]) {
    await using home = await tempHome();
    // A writer that stores a session and dies before it folds its journal into the store file.
    const writer = `
      import { openStore } from ${JSON.stringify(join(ROOT, "src", "storage", "select.ts"))};
      const { adapter } = await openStore(${JSON.stringify(store)}, { home: ${JSON.stringify(home.path)} });
      const now = Date.now();
      await adapter.createSession({ id: "j1", title: "t", titleSource: "user", projectPath: "/p", status: "idle",
        createdAt: now, updatedAt: now, turnCount: 0, messageCount: 0 }, []);
      process.kill(process.pid, "SIGKILL");`;
    Bun.spawnSync([BUN, "-e", writer], { env: { ...process.env, FREECODE_HOME: home.path } });
    expect(readdirSync(join(home.path, "state")).some((f) => f.endsWith(".journal"))).toBe(true);
    const r = parseJson<{ sessions: number; ok: boolean }>(
      runCli(["store", "verify", "--store", store, "--json"], { home: home.path }),
    );
    expect([store, r.sessions, r.ok]).toEqual([store, 1, true]);
    // A journal line damaged so that it still parses but no longer applies (a broken SQL
    // statement) is corrupt, said in one line, as one that does not parse: not a crash (exit 70).
    if (store !== "sqljs") continue;
    const journal = join(home.path, "state", "store-sqljs.db.journal");
    writeFileSync(journal, readFileSync(journal, "utf8").replace("INSERT", "INSERTT"));
    const damaged = runCli(["session", "list", "--store", store], { home: home.path });
    expect(damaged.code).toBe(2);
    expect(damaged.stderr).toContain("corrupt journal line at byte");
    expect(damaged.stderr).not.toContain("    at ");
  }
});

test("store verify names the temp files of rewrites whose process died; --repair removes them", async () => {
  await using home = await tempHome();
  create(home.path, "files", "s1", "hello");
  const project = readdirSync(join(home.path, "sessions"))[0]!;
  const dead = 2 ** 22 + 12345; // past any pid this machine hands out
  const stale = [
    join(home.path, "state", `store.json.${dead}.1.tmp`),
    join(home.path, "sessions", project, "s1", `meta.json.${dead}.2.tmp`),
  ];
  for (const f of stale) writeFileSync(f, "partial");
  // A rewrite at work (this process is alive) is left alone.
  const live = join(home.path, "state", `imports.json.${process.pid}.1.tmp`);
  writeFileSync(live, "in progress");
  const found = parseJson<{ problems: { kind: string; file: string }[] }>(
    runCli(["store", "verify", "--json"], { home: home.path }),
  );
  expect(found.problems.map((p) => [p.kind, p.file]).sort()).toEqual(
    stale.map((f) => ["stale_temp", f]).sort(),
  );
  expect(runCli(["store", "verify", "--repair"], { home: home.path }).code).toBe(0);
  expect(stale.filter((f) => existsSync(f))).toEqual([]);
  expect(existsSync(live)).toBe(true);
  expect(runCli(["store", "verify"], { home: home.path }).code).toBe(0);
});
