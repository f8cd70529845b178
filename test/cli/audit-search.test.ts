/**
 * Regressions from the search audit, through real CLI processes: a damaged `state/freecode.db`
 * crashed `search` and `store reindex` (exit 70); `--project` did not take `.`, `sub`, a trailing
 * `/` or a `C:\…` path; extra words were dropped (`search todo zzz` = `search todo`); `session show
 * --turns` ignored the thread store (no compaction-erased calls, durations or denials); and
 * `--since` took `2025-02-30` as March 2 and `-5` as a year.
 */
import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { closeSync, mkdirSync, openSync, readdirSync, statSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import files from "../../src/storage/adapters/files.ts";
import type { SessionMeta, StoredMessage } from "../../src/storage/records.ts";
import { threadDbPath } from "../../src/threads/store.ts";
import { parseJson, runCli, tempDir, tempHome } from "../_helpers.ts";

interface Result {
  engine: string;
  total: number;
  hits: { sessionId: string; kind: string; snippet: string }[];
}

const meta = (id: string, projectPath: string, title = `session ${id}`): SessionMeta => ({
  id,
  title,
  projectPath,
  status: "idle",
  createdAt: 1000,
  updatedAt: 1000,
  turnCount: 1,
  messageCount: 0,
});
const user = (id: string, text: string, ts: number): StoredMessage => ({
  id,
  role: "user",
  parts: [{ type: "text", content: text }],
  timestamp: ts,
});

/** Checkpoint the WAL into the file, then overwrite pages: zeros, or garbage, every `step`-th from `from`. */
function damage(file: string, fill: number, from: number, step: number): void {
  const db = new Database(file);
  db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  const { page_size: size } = db.query("PRAGMA page_size").get() as { page_size: number };
  db.close();
  const pages = statSync(file).size / size;
  const fd = openSync(file, "r+");
  for (let p = from; p < pages; p += step) writeSync(fd, Buffer.alloc(size, fill), 0, size, p * size);
  closeSync(fd);
}

describe("search and the thread store from the command line (audit)", () => {
  test("a damaged freecode.db is set aside and rebuilt by search and by store reindex (audit 2)", async () => {
    await using home = await tempHome();
    const a = files({ home: home.path });
    for (let i = 0; i < 40; i++)
      await a.createSession(meta(`s${i}`, "/p"), [
        user("u1", `the marmot number ${i} ${"filler ".repeat(40)}`, 2000 + i),
      ]);
    await a.close();
    const cli = (args: string[]) => runCli(args, { home: home.path });
    const search = () => parseJson<Result>(cli(["search", "marmot", "--json"]));
    expect(search().total).toBe(40);
    const db = threadDbPath(home.path);
    const damages: [fill: number, from: number, step: number][] = [
      [0, 1, 1], // everything but the header page
      [0, 1, 3],
      [0x5a, 2, 2], // overwritten, not zeroed
    ];
    for (const [fill, from, step] of damages) {
      damage(db, fill, from, step);
      const r = cli(["search", "marmot", "--json"]);
      expect([r.code, r.stderr]).toEqual([0, ""]);
      expect(parseJson<Result>(r).total).toBe(40);
      damage(db, fill, from, step);
      const re = cli(["store", "reindex", "--json"]);
      expect([re.code, re.stderr]).toEqual([0, ""]);
      expect(search().total).toBe(40);
    }
    expect(readdirSync(join(home.path, "state")).some((f) => f.startsWith("freecode.db.corrupt-"))).toBe(
      true,
    );
    // Regression: a file that passes quick_check but lost a table (edited by hand, or another tool)
    // is damage too: search and reindex died with a stack trace (exit 70).
    for (const table of ["search_rows", "search", "turns"]) {
      const { Database } = await import("bun:sqlite");
      const d = new Database(db);
      d.exec(`DROP TABLE ${table}`);
      d.close();
      const r = cli(["search", "marmot", "--json"]);
      expect([table, r.code, r.stderr, parseJson<Result>(r).total]).toEqual([table, 0, "", 40]);
    }
    // A table of another shape (it failed with "table turns has 2 columns but 5 values were supplied").
    const shaped = new (await import("bun:sqlite")).Database(db);
    shaped.exec("DROP TABLE IF EXISTS turns; CREATE TABLE turns (a, b)");
    shaped.close();
    const a2 = files({ home: home.path });
    await a2.createSession(meta("late", "/p"), [user("u1", "the marmot comes late", 9000)]);
    await a2.close();
    const late = cli(["search", "marmot", "--json"]);
    expect([late.code, late.stderr, parseJson<Result>(late).total]).toEqual([0, "", 41]);
    const d = new (await import("bun:sqlite")).Database(db);
    d.exec("DELETE FROM search_rows");
    d.close();
    const re = cli(["store", "reindex", "--json"]);
    expect([re.code, re.stderr]).toEqual([0, ""]);
    expect(search().total).toBe(41);
  }, 60_000);

  test("--project: `.`, `sub`, a trailing slash and a Windows path, that project and below it (audit 6)", async () => {
    await using home = await tempHome();
    await using work = await tempDir();
    const proj = join(work.path, "proj");
    mkdirSync(join(proj, "sub"), { recursive: true });
    const a = files({ home: home.path });
    await a.createSession(meta("top", proj), [user("u1", "marmot", 2000)]);
    await a.createSession(meta("below", join(proj, "sub")), [user("u1", "marmot", 2001)]);
    await a.createSession(meta("beside", `${proj}x`), [user("u1", "marmot", 2002)]);
    await a.createSession(meta("win", "C:\\Users\\john\\app"), [user("u1", "marmot", 2003)]);
    await a.close();
    const ids = (project: string, cwd = work.path) => {
      const r = runCli(["search", "marmot", "--project", project, "--json"], { home: home.path, cwd });
      return parseJson<Result>(r)
        .hits.map((h) => h.sessionId)
        .sort();
    };
    expect(ids(".", proj)).toEqual(["below", "top"]);
    expect(ids("proj")).toEqual(["below", "top"]);
    expect(ids("proj/sub/")).toEqual(["below"]);
    expect(ids(`${proj}/`)).toEqual(["below", "top"]);
    expect(ids("sub", proj)).toEqual(["below"]);
    expect(ids("C:\\Users\\john")).toEqual(["win"]);
    expect(ids("C:/Users/john/")).toEqual(["win"]);
  }, 60_000);

  test("every word of an unquoted query must match (audit 7)", async () => {
    await using home = await tempHome();
    const a = files({ home: home.path });
    await a.createSession(meta("s1", "/p"), [user("u1", "the tokenizer crashes on emoji", 2000)]);
    await a.createSession(meta("s2", "/p"), [user("u1", "the tokenizer is fine", 2001)]);
    await a.close();
    const total = (...words: string[]) =>
      parseJson<Result>(runCli(["search", ...words, "--json"], { home: home.path })).total;
    expect(total("tokenizer")).toBe(2);
    expect(total("tokenizer", "zzz")).toBe(0);
    expect(total("tokenizer", "crash")).toBe(1);
    expect(total("tokenizer crash")).toBe(1);
    const plain = runCli(["search", "tokenizer", "emoji"], { home: home.path });
    expect(plain.stdout).toContain("the [tokenizer] crashes on [emoji]");
  }, 60_000);

  test("session show --turns is the thread store's view: erased calls, durations, denials (audit 8)", async () => {
    await using home = await tempHome();
    const a = files({ home: home.path });
    await a.createSession(meta("s1", "/p", "bug hunt"), [
      user("u1", "find the bug", 2000),
      {
        id: "a1",
        role: "assistant",
        parts: [
          { type: "tool", tool: { name: "grep", args: { pattern: "bug" } }, callId: "c1", result: "x.ts" },
        ],
        timestamp: 2100,
      },
      user("u2", "now fix it", 3000),
      { id: "a2", role: "assistant", parts: [{ type: "text", content: "fixed" }], timestamp: 3100 },
    ]);
    await a.appendEvents("s1", [
      { type: "function.call", tool: "grep", args: { pattern: "bug" }, callId: "c1", timestamp: 2050 },
      { type: "function.output", tool: "grep", callId: "c1", duration_ms: 12, timestamp: 2100 },
      {
        type: "function.denied",
        tool: "bash",
        args: { command: "rm -rf /" },
        callId: "c2",
        source: "user",
        timestamp: 3050,
      },
    ]);
    // Compaction dropped the first turn's messages; the rollout still holds its call.
    await a.replaceMessages("s1", [
      user("u2", "now fix it", 3000),
      { id: "a2", role: "assistant", parts: [{ type: "text", content: "fixed" }], timestamp: 3100 },
    ]);
    await a.close();
    const shown = runCli(["session", "show", "s1", "--turns"], { home: home.path });
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain('grep({"pattern":"bug"}) ✓ 12 ms');
    expect(shown.stdout).toContain('bash({"command":"rm -rf /"}) ✗ denied by user');
    expect(shown.stdout).toContain("outcome: fixed");
    const json = parseJson<{
      turns: {
        prompt: string;
        tools: { name: string; args?: unknown; durationMs?: number; deniedBy?: string }[];
        interrupted: boolean;
      }[];
    }>(runCli(["session", "show", "s1", "--turns", "--json"], { home: home.path }));
    expect(json.turns.map((t) => [t.prompt, t.tools, t.interrupted])).toEqual([
      [
        "now fix it",
        [
          { name: "grep", args: { pattern: "bug" }, durationMs: 12 },
          { name: "bash", args: { command: "rm -rf /" }, deniedBy: "user" },
        ],
        false,
      ],
    ]);
  }, 60_000);

  test("--since and --until take real dates only (audit 12)", async () => {
    await using home = await tempHome();
    const a = files({ home: home.path });
    await a.createSession(meta("s1", "/p"), [user("u1", "marmot", Date.UTC(2025, 1, 28, 12))]);
    await a.close();
    const run = (...flags: string[]) => runCli(["search", "marmot", ...flags, "--json"], { home: home.path });
    for (const bad of [
      "--since=2025-02-30",
      "--since=-5",
      "--until=2025-13-01",
      "--since=2025-02-28T25:00",
      "--since=soon",
    ]) {
      const r = run(bad);
      expect([bad, r.code]).toEqual([bad, 2]);
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
    }
    expect(parseJson<Result>(run("--since=2025-02-28", "--until=2025-02-28")).total).toBe(1);
    expect(parseJson<Result>(run("--since=2025-02-28T13:00Z")).total).toBe(0);
    expect(parseJson<Result>(run(`--until=${Date.UTC(2025, 1, 28, 11)}`)).total).toBe(0);
  }, 60_000);
});

test("regression: one session whose meta.json cannot be read is left out of search and reindex, named, and the rest is searched (every search and reindex failed)", async () => {
  await using home = await tempHome();
  const h = { home: home.path };
  for (const [id, prompt] of [
    ["ok1", "the aardvark migration"],
    ["bad1", "the aardvark rollback"],
  ])
    expect(
      runCli(["session", "create", "--id", id!, "--prompt", prompt!, "--project", home.path], h).code,
    ).toBe(0);
  // Its rollout log too (an imported session has one): the store knows it from there.
  const turn = `${JSON.stringify({ type: "turn.started", turnId: "t" })}\n`;
  expect(runCli(["rollout", "append", "bad1"], { ...h, stdin: turn }).code).toBe(0);
  const meta = [
    ...new Bun.Glob("sessions/*/bad1/meta.json").scanSync({ cwd: home.path, absolute: true }),
  ][0]!;
  writeFileSync(meta, '{"id":"bad1","title":');
  const found = runCli(["search", "aardvark"], h);
  expect([found.code, found.stdout]).toEqual([0, expect.stringContaining("ok1")]);
  expect(found.stderr).toContain("session bad1 left out of the search:");
  const reindex = runCli(["store", "reindex"], h);
  expect(reindex.code).toBe(1);
  expect(reindex.stderr).toContain("bad1");
  // The session store's own error is not taken for the thread store's damage.
  const { isDamage } = await import("../../src/threads/sql-damage.ts");
  const { FreecodeError } = await import("../../src/errors.ts");
  expect(
    isDamage(new FreecodeError("bad_input", "corrupt journal line at byte 654 (no such table: ressions)")),
  ).toBe(false);
});
