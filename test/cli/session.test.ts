/** `freecode session …` from source: every subcommand, --json shapes, bad input, file modes. */
import { describe, expect, test } from "bun:test";
import { appendFileSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { withLock } from "../../src/util/lock.ts";
import { parseJson, runCli, runCliAsync, tempHome } from "../_helpers.ts";

const jsonl = (...xs: unknown[]) => `${xs.map((x) => JSON.stringify(x)).join("\n")}\n`;
const user = (content: string, extra = {}) => ({
  role: "user",
  parts: [{ type: "text", content }],
  ...extra,
});
const assistant = (content: string, extra = {}) => ({
  role: "assistant",
  parts: [{ type: "text", content }],
  ...extra,
});

function walk(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    return e.isDirectory() ? [p, ...walk(p)] : [p];
  });
}

describe("freecode session (CLI)", () => {
  test("regression: session list --project takes a Windows path however it is spelled, as search does", async () => {
    await using home = await tempHome();
    const cli = (args: string[]) => runCli([...args, "--json"], { home: home.path });
    // Stored as the agents wrote them (an import makes only the drive letter upper case).
    const projects: [string, string][] = [
      ["w1", "C:\\Users\\me\\app"],
      ["w2", "C:/Users/me/app"],
      ["w3", "C:\\Users\\me\\application"],
      ["w4", "C:\\Users\\me\\app\\sub"],
    ];
    for (const [id, project] of projects)
      parseJson(cli(["session", "create", "--id", id, "--project", project, "--prompt", id]));
    const listed = (project: string, ...more: string[]) =>
      parseJson<{ items: { id: string }[]; total: number }>(
        cli(["session", "list", "--project", project, ...more]),
      );
    for (const spelling of [
      "C:\\Users\\me\\app",
      "c:\\Users\\me\\app",
      "C:/Users/me/app",
      "C:\\Users\\me\\app\\",
    ]) {
      const page = listed(spelling);
      expect([spelling, page.items.map((m) => m.id).sort(), page.total]).toEqual([spelling, ["w1", "w2"], 2]);
    }
    // Paged after the filter: the total is the project's.
    const first = listed("c:/Users/me/app", "--limit", "1");
    expect([first.items.length, first.total]).toEqual([1, 2]);
    expect(listed("C:\\Users\\me\\app", "--offset", "1").items).toHaveLength(1);
  });

  test("the whole lifecycle with --json", async () => {
    await using home = await tempHome();
    const cli = (args: string[], stdin?: string) => runCli([...args, "--json"], { home: home.path, stdin });
    const created = parseJson<{ id: string; title: string }>(
      cli(
        ["session", "create", "--id", "s1", "--project", "/w/app", "--model", "m-1", "--provider", "p"],
        jsonl(user("fix the parser")),
      ),
    );
    expect(created).toMatchObject({ id: "s1", title: "fix the parser" });
    const appended = cli(
      ["session", "append", "s1"],
      jsonl(
        {
          id: "a1",
          ...assistant("reading"),
          parts: [{ type: "tool", tool: { name: "read", args: { path: "p.ts" } }, result: "src" }],
          usage: { inputTokens: 9 },
          responseId: "r1",
        },
        { id: "u2", ...user("and now?") },
        { id: "a2", ...assistant("half an answ"), interrupted: true },
      ),
    );
    expect(parseJson(appended)).toMatchObject({ appended: 3, messageIds: ["a1", "u2", "a2"] });
    parseJson(cli(["session", "create", "--id", "s2", "--project", "/w/other", "--prompt", "other work"]));

    const list = parseJson<{ items: { id: string }[]; total: number }>(cli(["session", "list"]));
    expect(list.items.map((m) => m.id)).toEqual(["s2", "s1"]);
    expect(
      parseJson<{ items: { id: string }[] }>(cli(["session", "list", "--project", "/w/app"])).items.map(
        (m) => m.id,
      ),
    ).toEqual(["s1"]);
    // --project is a path as `session create` takes it: a trailing `/`, `.` and relative ones resolve.
    const listed = (project: string, cwd: string) =>
      parseJson<{ items: { id: string }[] }>(
        runCli(["session", "list", "--project", project, "--json"], { home: home.path, cwd }),
      ).items.map((m) => m.id);
    expect(listed("/w/app/", "/")).toEqual(["s1"]);
    expect(listed("../w/app", "/tmp")).toEqual(["s1"]);
    expect(listed("w/other", "/")).toEqual(["s2"]);
    parseJson(cli(["session", "pin", "s1"]));
    expect(
      parseJson<{ items: { id: string }[] }>(cli(["session", "list", "--limit", "1"])).items.map((m) => m.id),
    ).toEqual(["s1"]);

    const show = parseJson<{
      meta: { messageCount: number; tokens: { input: number } };
      messages: unknown[];
    }>(cli(["session", "show", "s1"]));
    expect(show.meta.messageCount).toBe(4);
    expect(show.meta.tokens.input).toBe(9);
    const turns = parseJson<{ turns: { prompt: string; tools: { name: string }[]; interrupted: boolean }[] }>(
      cli(["session", "show", "s1", "--turns"]),
    );
    expect(turns.turns.map((t) => [t.prompt, t.tools.map((x) => x.name), t.interrupted])).toEqual([
      ["fix the parser", ["read"], false],
      ["and now?", [], true],
    ]);

    const resumed = parseJson<{
      model: string;
      provider: string;
      continued: boolean;
      messages: { role: string; content: { text?: string }[] }[];
    }>(cli(["session", "resume", "s1"]));
    expect(resumed).toMatchObject({ model: "m-1", provider: "p", continued: true });
    expect(resumed.messages.at(-1)?.content[0]?.text).toBe("Continue from where you left off.");

    const fork = parseJson<{ id: string; parentId: string; messageCount: number }>(
      cli(["session", "fork", "s1", "--at", "a1"]),
    );
    expect(fork).toMatchObject({ parentId: "s1", messageCount: 2 });
    expect(parseJson<{ title: string }>(cli(["session", "rename", fork.id, "my fork"])).title).toBe(
      "my fork",
    );

    expect(parseJson<{ status: string }>(cli(["session", "archive", "s2"])).status).toBe("archived");
    expect(parseJson<{ status: string }>(cli(["session", "unarchive", "s2"])).status).toBe("idle");
    expect(parseJson<{ status: string }>(cli(["session", "delete", "s2"])).status).toBe("deleted");
    expect(parseJson<{ items: unknown[] }>(cli(["session", "list"])).items).toHaveLength(2);
    expect(parseJson<{ items: unknown[] }>(cli(["session", "list", "--all"])).items).toHaveLength(3);
    expect(parseJson<{ status: string }>(cli(["session", "restore", "s2"])).status).toBe("idle");
    expect(parseJson<{ pinned: boolean }>(cli(["session", "unpin", "s1"])).pinned).toBe(false);

    const compacted = parseJson<{ compacted: boolean; messagesAfter: number }>(
      cli(["session", "compact", "s1", "--keep", "1"]),
    );
    expect(compacted).toMatchObject({ compacted: true, messagesAfter: 2 });

    expect(parseJson(cli(["session", "delete", fork.id, "--purge"]))).toEqual({ id: fork.id, purged: true });
    expect(cli(["session", "show", fork.id]).code).toBe(3);

    // Everything created is private.
    for (const p of walk(home.path)) {
      const mode = statSync(p).mode & 0o777;
      expect([p, mode]).toEqual([p, statSync(p).isDirectory() ? 0o700 : 0o600]);
    }
  }, 60_000);

  test("human output: readable show with folded tool calls, list lines", async () => {
    await using home = await tempHome();
    runCli(["session", "create", "--id", "h1", "--project", "/x"], {
      home: home.path,
      stdin: jsonl(user("hello"), {
        ...assistant(""),
        parts: [{ type: "tool", tool: { name: "bash", args: { cmd: "ls" } }, result: "a\nb\nc" }],
      }),
    });
    const show = runCli(["session", "show", "h1"], { home: home.path });
    expect(show.code).toBe(0);
    expect(show.stdout).toContain("── user");
    expect(show.stdout).toContain('▸ bash({"cmd":"ls"}) ✓ a b c');
    expect(runCli(["session", "list"], { home: home.path }).stdout).toContain("h1");
    // An empty page of a list that is not empty says so, rather than "no sessions".
    expect(runCli(["session", "list", "--offset", "5"], { home: home.path }).stdout).toBe("0 of 1\n");
    // The columns stay aligned past the id column's width (an imported subagent's id runs to 80).
    const long = `claude-${"a".repeat(36)}.agent-a0294d5`;
    runCli(["session", "create", "--id", long, "--project", "/x", "--prompt", "hi"], { home: home.path });
    const lines = runCli(["session", "list"], { home: home.path }).stdout.split("\n").slice(0, 2);
    expect(lines.map((l) => l.indexOf(" idle "))).toEqual([long.length + 2, long.length + 2]);
  });

  test("show --last N: only the last messages (or turns), saying how many are not shown", async () => {
    await using home = await tempHome();
    const say = (role: string, text: string) =>
      JSON.stringify({ role, parts: [{ type: "text", content: text }] });
    const stdin = [1, 2, 3]
      .flatMap((i) => [say("user", `ask ${i}`), say("assistant", `answer ${i}`)])
      .join("\n");
    expect(runCli(["session", "create", "--id", "l1"], { home: home.path, stdin }).code).toBe(0);
    const shown = runCli(["session", "show", "l1", "--last", "2"], { home: home.path }).stdout;
    expect(shown).toContain("(4 earlier messages not shown)");
    expect(shown).toContain("ask 3");
    expect(shown).not.toContain("ask 2");
    const json = parseJson<{ messages: { parts: { content: string }[] }[]; omitted: number }>(
      runCli(["session", "show", "l1", "--last", "3", "--json"], { home: home.path }),
    );
    expect(json.messages.map((m) => m.parts[0]!.content)).toEqual(["answer 2", "ask 3", "answer 3"]);
    expect(json.omitted).toBe(3);
    const turns = runCli(["session", "show", "l1", "--turns", "--last", "1"], { home: home.path }).stdout;
    expect(turns).toContain("(l1, idle, 3 turns, the last 1 shown)");
    expect(turns).toContain("ask 3");
    expect(turns).not.toContain("prompt:  ask 1");
    const bad = runCli(["session", "show", "l1", "--last", "0"], { home: home.path });
    expect(bad.code).toBe(2);
  });

  test("regression: append took a message id the session already had (its export then did not import)", async () => {
    await using home = await tempHome();
    const msg = (id: string, text: string) =>
      JSON.stringify({ id, role: "user", parts: [{ type: "text", content: text }] });
    const cli = (args: string[], stdin?: string) => runCli(args, { home: home.path, stdin });
    expect(cli(["session", "create", "--id", "d1"], msg("m1", "first")).code).toBe(0);
    const again = cli(["session", "append", "d1"], `${msg("m2", "ok")}\n${msg("m1", "again")}\n`);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain("<stdin>:2: message id m1 is already in session d1");
    const twice = cli(["session", "append", "d1"], `${msg("m3", "a")}\n${msg("m3", "b")}\n`);
    expect(twice.code).toBe(2);
    expect(twice.stderr).toContain("<stdin>:2: duplicate message id m3");
    // Nothing was written, and messages without ids are appended as before.
    expect(cli(["session", "append", "d1"], JSON.stringify({ role: "user", parts: [] })).code).toBe(0);
    const shown = parseJson<{ messages: { id: string }[] }>(cli(["session", "show", "d1", "--json"]));
    expect(shown.messages.map((m) => m.id).slice(0, 1)).toEqual(["m1"]);
    expect(shown.messages).toHaveLength(2);
    const exported = cli(["session", "export", "d1"]);
    expect(cli(["session", "import", "-", "--id", "d2"], exported.stdout).code).toBe(0);
  });

  test("regression: two processes appending one given id both stored it (the check ran outside the append's lock)", async () => {
    await using home = await tempHome();
    const msg = (id: string, text: string) =>
      JSON.stringify({ id, role: "user", parts: [{ type: "text", content: text }] });
    expect(
      runCli(["session", "create", "--id", "d1"], { home: home.path, stdin: msg("m0", "hi") }).code,
    ).toBe(0);
    const dir = join(home.path, "sessions", readdirSync(join(home.path, "sessions"))[0]!, "d1");
    // Another process holds the session's lock and appends `m1`; ours waits for the lock, then
    // finds `m1` there. (Checked before taking the lock, ours found no m1 and stored a second.)
    let waited = false;
    const { running } = await withLock(join(home.path, "state", "locks", "s-d1.lock"), async () => {
      const running = runCliAsync(["session", "append", "d1"], { home: home.path, stdin: msg("m1", "ours") });
      waited = (await Promise.race([running.then(() => false), Bun.sleep(1500).then(() => true)])) === true;
      appendFileSync(join(dir, "messages.jsonl"), `${msg("m1", "theirs").slice(0, -1)},"timestamp":1}\n`);
      return { running }; // not awaited here: the lock is released first
    });
    const ours = await running;
    expect(waited).toBe(true);
    expect([ours.code, ours.stderr]).toEqual([
      2,
      expect.stringContaining("message id m1 is already in session d1"),
    ]);
  });

  test("bad input: one-line error, exit 2, nothing written", async () => {
    await using home = await tempHome();
    const run = (args: string[], stdin?: string) => runCli(args, { home: home.path, stdin });
    expect(run(["session", "create", "--id", "ok", "--prompt", "x"]).code).toBe(0);
    const before = run(["session", "show", "ok", "--json"]).stdout;
    const cases: [string[], string | undefined, string][] = [
      [["session", "create", "--id", "a/b", "--prompt", "x"], undefined, "id"],
      [["session", "create", "--id", "..", "--prompt", "x"], undefined, ".."],
      [["session", "create", "--id", "x".repeat(129), "--prompt", "x"], undefined, "128"],
      [["session", "append", "a/../b"], jsonl(user("x")), "id"],
      [["session", "append", "ok"], jsonl(user("fine"), { role: "robot", parts: [] }), "<stdin>:2"],
      [
        ["session", "append", "ok"],
        `${JSON.stringify(user("fine"))}\n{"role": "user", "parts": [}\n`,
        "<stdin>:2: not JSON",
      ],
      [["session", "append", "ok"], jsonl(user("fine"), { id: "a\u0000b", ...user("nul") }), "<stdin>:2"],
      [
        ["session", "append", "ok"],
        `${JSON.stringify(user("fine"))}\n{"role":"assistant","parts":[{"type":"tool","tool":{"name":"t","args":{"n":1e999}}}]}\n`,
        "(field parts.0.tool.args.n)",
      ],
      [["session", "append", "ok"], `${JSON.stringify(user("x".repeat(10 * 1024 * 1024)))}\n`, "longer than"],
      [["session", "append", "ok"], Buffer.from([0x7b, 0xff, 0xfe, 0x0a]).toString("latin1"), "UTF-8"],
      [
        ["session", "append", "ok"],
        jsonl(
          user("a", { usage: { inputTokens: 1 }, responseId: "r" }),
          assistant("b", { usage: { inputTokens: 1 }, responseId: "r" }),
        ),
        "<stdin>:2",
      ],
    ];
    for (const [args, stdin, needle] of cases) {
      const input =
        args.includes("append") && needle === "UTF-8" ? Buffer.from([0x7b, 0xff, 0xfe, 0x0a]) : stdin;
      const r = runCli(args, { home: home.path, stdin: input });
      expect([args.join(" ").slice(0, 60), r.code]).toEqual([args.join(" ").slice(0, 60), 2]);
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
      expect(r.stderr).toContain(needle);
    }
    expect(run(["session", "show", "ok", "--json"]).stdout).toBe(before);
    expect(parseJson<{ total: number }>(run(["session", "list", "--all", "--json"])).total).toBe(1);
    expect(run(["session", "append", "missing"], jsonl(user("x"))).code).toBe(3);
    expect(run(["session", "list", "--status", "bogus"]).code).toBe(2);
    expect(run(["session", "create"], "").code).toBe(2);
  }, 60_000);
});

test("counts read as words: 1 turn, 1 message, 1 tool call (never '1 turns')", async () => {
  await using home = await tempHome();
  expect(runCli(["session", "create", "--id", "one", "--prompt", "hello"], { home: home.path }).code).toBe(0);
  const turns = runCli(["session", "show", "one", "--turns"], { home: home.path }).stdout;
  expect(turns.split("\n")[0]).toContain("1 turn)");
  const full = runCli(["session", "show", "one"], { home: home.path }).stdout;
  expect(full).toContain("1 message, 1 turn");
  const call = '{"type":"function.call","turnId":"t0","tool":"bash","args":{},"callId":"c1"}';
  const output = '{"type":"function.output","turnId":"t0","tool":"bash","callId":"c1","output":"ok"}';
  runCli(["rollout", "append", "one"], {
    home: home.path,
    stdin: `{"type":"turn.started","turnId":"t0"}\n${call}\n${output}\n`,
  });
  expect(runCli(["trace", "one"], { home: home.path }).stdout).toContain(
    "1 turn · 0 model calls · 1 tool call ·",
  );
  expect(runCli(["replay", "one"], { home: home.path }).stdout).toContain("1 turn, 1 tool call,");
});

test("no rollout log: a session that recorded nothing is told apart from no session, with what to do", async () => {
  await using home = await tempHome();
  expect(runCli(["session", "create", "--id", "quiet", "--prompt", "hello"], { home: home.path }).code).toBe(
    0,
  );
  const quiet = runCli(["trace", "quiet"], { home: home.path });
  expect([quiet.code, quiet.stderr]).toEqual([
    3,
    expect.stringContaining("session quiet has no rollout log: nothing was recorded"),
  ]);
  expect(quiet.stderr).not.toContain("events.jsonl");
  const none = runCli(["trace", "nope"], { home: home.path });
  expect([none.code, none.stderr]).toEqual([
    3,
    expect.stringContaining("and no session nope (`freecode trace --list`"),
  ]);
});

test("regression: session resume shows recorded text escaped, and counts the session's own messages as stored (it sent raw escapes to the terminal, and counted the synthetic ones)", async () => {
  await using home = await tempHome();
  const h = { home: home.path };
  const created = runCli(
    [
      "session",
      "create",
      "--id",
      "e1",
      "--prompt",
      "go",
      "--provider",
      "op\u001b[2Jen",
      "--model",
      "m\u202eX",
      "--json",
    ],
    h,
  );
  expect(created.code).toBe(0);
  expect(runCli(["session", "rename", "e1", "evil\u001b[31mRED\u202egnp.exe"], h).code).toBe(0);
  const stdin = `${JSON.stringify({ role: "assistant", parts: [{ type: "text", content: "half" }], interrupted: true })}\n`;
  expect(runCli(["session", "append", "e1"], { ...h, stdin }).code).toBe(0);
  const r = runCli(["session", "resume", "e1"], h);
  expect(r.code).toBe(0);
  expect(r.stdout).not.toMatch(/[\u001b\u202e]/);
  expect(r.stdout).toContain("resume e1: evil\\x1b[31mRED\\u202egnp.exe");
  expect(r.stdout).toContain("provider/model: op\\x1b[2Jen/m\\u202eX");
  expect(r.stdout).toContain("messages: 2 stored → 3 loop messages");
});
