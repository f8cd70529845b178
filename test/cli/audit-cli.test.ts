/**
 * Regression tests for the CLI audit: each `describe` names the finding it guards (flags without a
 * value, an unusable home, flags before the command, --version everywhere, `eval add --help`, two
 * reporters on stdout, control characters from recorded text, `doctor --store`, a config of `[]`,
 * `--max-output abc`, `trace --follow` into a pipe, talk on stdout). Real processes, temp homes.
 */
import { describe, expect, test } from "bun:test";
import { copyFileSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import pkg from "../../package.json" with { type: "json" };
import { fsErrorLine } from "../../src/cli/_fs-error.ts";
import { escapeText, oneLine } from "../../src/util/one-line.ts";
import { BUN, parseJson, ROOT, type RunResult, runCli, tempDir, tempHome } from "../_helpers.ts";

const SESSIONS = "examples/rollouts";
const FIXTURE = join(ROOT, "test/rollout/fixtures/session.jsonl");

/** Exit 2 (or `code`), nothing on stdout, exactly one line on stderr containing `text`. */
function oneLineError(r: RunResult, text: string, code = 2) {
  expect({ code: r.code, stdout: r.stdout }).toEqual({ code, stdout: "" });
  const lines = r.stderr.trim().split("\n");
  expect(lines).toEqual([expect.stringContaining(text)]);
  expect(r.stderr).not.toContain("    at ");
}

function logIn(home: string, id: string, lines: string) {
  const dir = join(home, "rollout", "sessions", id);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "events.jsonl"), lines);
}

describe("1: a value flag without its value is a usage error", () => {
  test("--home at the end: exit 2, nothing written under $HOME/.freecode", async () => {
    await using fakeHome = await tempDir();
    const r = runCli(["session", "create", "--prompt", "hi", "--home"], {
      env: { HOME: fakeHome.path, FREECODE_HOME: undefined },
    });
    oneLineError(r, "--home needs a value");
    expect(existsSync(join(fakeHome.path, ".freecode"))).toBe(false);
  });

  test("--limit, --store, --otlp with nothing (or another option) after them", async () => {
    await using home = await tempHome();
    const opts = { home: home.path };
    oneLineError(runCli(["session", "list", "--limit"], opts), "--limit needs a value");
    oneLineError(runCli(["session", "list", "--limit", "--json"], opts), "--limit needs a value");
    oneLineError(runCli(["session", "list", "--store"], opts), "--store needs a value");
    oneLineError(runCli(["session", "list", "--store="], opts), "--store needs a value");
    oneLineError(runCli(["trace", "x", "--otlp"], opts), "--otlp needs a value");
    // A value that starts with a dash is still a value when written with `=`.
    expect(runCli(["session", "list", "--limit=1"], opts).code).toBe(0);
  });
});

describe("2: a home that cannot be used is one line with the path, exit 74", () => {
  test("a plain file as the home: session list (every adapter), eval add --out, store migrate --to-home", async () => {
    await using dir = await tempDir();
    const file = join(dir.path, "plain");
    writeFileSync(file, "");
    for (const store of ["files", "sqlite", "sqljs", "json"]) {
      const r = runCli(["session", "list", "--home", file, "--store", store]);
      oneLineError(r, `${file} is a file, not a directory`, 74);
    }
    // auto: no adapter can start, because of the machine, not a bug.
    oneLineError(
      runCli(["session", "list", "--home", file, "--store", "auto"]),
      "no storage adapter could start",
      74,
    );
    const add = runCli(["eval", "add", "fix-login-1", "--sessions", SESSIONS, "--out", join(file, "b.yaml")]);
    oneLineError(add, file, 74);
    await using home = await tempHome();
    const migrate = runCli(["store", "migrate", "--to", "sqlite", "--to-home", file], { home: home.path });
    oneLineError(migrate, `${file} is a file, not a directory`, 74);
  });

  test("doctor checks the home is a writable directory: exit 1 and says why", async () => {
    await using dir = await tempDir();
    const file = join(dir.path, "plain");
    writeFileSync(file, "");
    const text = runCli(["doctor", "--home", file]);
    expect(text.code).toBe(1);
    expect(text.stdout).toContain("is a file, not a directory");
    const doc = parseJson<{ ok: boolean; homeCheck: { ok: boolean } }>(
      runCli(["doctor", "--json", "--home", file]),
    );
    expect([doc.ok, doc.homeCheck.ok]).toEqual([false, false]);
    await using home = await tempHome();
    expect(
      parseJson<{ homeCheck: { ok: boolean } }>(runCli(["doctor", "--json"], { home: home.path })).homeCheck
        .ok,
    ).toBe(true);
  });

  test("permission, read-only and full-disk errors map to one line (root ignores chmod, so by hand)", () => {
    const err = (code: string, syscall: string, path: string) =>
      Object.assign(new Error(`${code}: x, ${syscall} '${path}'`), { code, syscall, path });
    expect(fsErrorLine(err("EACCES", "mkdir", "/h/state"))).toEqual({
      line: "cannot create directory /h/state: permission denied (EACCES)",
      code: 74,
    });
    expect(fsErrorLine(err("EROFS", "open", "/h/x"))?.line).toBe(
      "cannot open /h/x: read-only file system (EROFS)",
    );
    expect(fsErrorLine(new Error("wrapped", { cause: err("ENOSPC", "write", "/h/y") }))?.code).toBe(74);
    expect(fsErrorLine(new Error("a bug"))).toBeUndefined();
    // A write the runtime reports without a path names the store (it said where nothing).
    const pathless = Object.assign(new Error("ENOSPC: no space left on device, write"), {
      code: "ENOSPC",
      syscall: "write",
    });
    expect(fsErrorLine(pathless, "/h")?.line).toBe(
      "cannot write in the store at /h: no space left on the device (ENOSPC)",
    );
  });
});

describe("3: global flags before the command", () => {
  test("--home, --json and --store before the command are used, not dropped", async () => {
    await using home = await tempHome();
    expect(runCli(["--home", home.path, "session", "list"]).stdout).toBe("no sessions\n");
    const doc = parseJson<{ home: string; store: string }>(
      runCli(["--json", "--store", "sqlite", "--home", home.path, "doctor"]),
    );
    expect([doc.home, doc.store]).toEqual([home.path, "sqlite"]);
    oneLineError(
      runCli(["--home", home.path, "session", "list", "--home", home.path]),
      "--home is given twice",
    );
    // Any value flag: citty kept the last value, and --sessions a --sessions b ran over b alone.
    oneLineError(
      runCli(["eval", "examples/cases", "--sessions", "/nonexistent", "--sessions", "examples/rollouts"]),
      "--sessions is given twice (it takes one value)",
    );
    oneLineError(
      runCli(["session", "list", "--limit", "3", "--limit=5"], { home: home.path }),
      "--limit is given twice",
    );
    // -v or -h where a value goes is that flag without its value, not a request for the version.
    const asValue = runCli(["store", "goal", "s1", "--text", "-v"], { home: home.path });
    expect(asValue.code).toBe(2);
    expect(asValue.stdout).toBe("");
    expect(asValue.stderr).toContain("--text needs a value (got the option -v");
    // --help and --version count anywhere, as README says.
    const help = runCli(["session", "list", "--limit", "--help"], { home: home.path });
    expect([help.code, help.stdout.includes("List sessions")]).toEqual([0, true]);
    // Named as typed, not as citty's camel-cased key.
    oneLineError(
      runCli(["serve", "--max-stored-bytes", "1000", "--max-stored-bytes", "2000"], { home: home.path }),
      "--max-stored-bytes is given twice",
    );
  });

  test("any other flag there is one line naming it; citty's messages carry no colour when piped", () => {
    const colours = { NO_COLOR: undefined, TEST: undefined, CI: undefined, FORCE_COLOR: undefined };
    oneLineError(runCli(["--bogus"], { env: colours }), "unknown option --bogus before the command");
    oneLineError(runCli(["--limit", "3", "session", "list"], { env: colours }), "--limit");
    const unknown = runCli(["frobnicate"], { env: colours });
    oneLineError(unknown, 'unknown command "frobnicate"');
    expect(unknown.stderr).not.toContain("\x1b");
  });
});

describe("4 and 12: --version on every command; a missing argument is one line", () => {
  test("--version after a command prints the version", () => {
    for (const args of [["session", "list"], ["eval"], ["store", "migrate"], ["doctor"]]) {
      const r = runCli([...args, "--version"]);
      expect([r.code, r.stdout]).toEqual([0, `${pkg.version}\n`]);
    }
  });

  test("a missing argument or subcommand: the error and where the help is, not the help", () => {
    oneLineError(runCli(["session", "show"]), "(see freecode session show --help)");
    oneLineError(runCli(["session"]), "missing command: freecode session list|show");
  });
});

describe("5: eval add is a subcommand of its own", () => {
  test("eval add --help shows add's flags; eval --help lists add", () => {
    const add = runCli(["eval", "add", "--help"]);
    expect(add.code).toBe(0);
    expect(add.stdout).toContain("USAGE freecode eval add");
    expect(add.stdout).toContain("--id");
    expect(add.stdout).toContain("--force");
    expect(runCli(["eval", "--help"]).stdout).toMatch(/COMMANDS\s+add/);
  });
});

describe("6: only one machine format on stdout, github counted", () => {
  test("junit or tap with github on stdout is a usage error naming both", async () => {
    for (const machine of ["junit", "tap", "json"]) {
      const r = runCli([
        "eval",
        "examples/cases",
        "--sessions",
        SESSIONS,
        "--reporter",
        machine,
        "--reporter",
        "github",
      ]);
      oneLineError(r, `--reporter ${machine} and --reporter github would both write to stdout`);
    }
    // github beside a file is fine.
    await using dir = await tempDir();
    const xml = `junit:${join(dir.path, "eval.xml")}`;
    const ok = runCli([
      "eval",
      "examples/cases",
      "--sessions",
      SESSIONS,
      "--reporter",
      xml,
      "--reporter",
      "github",
    ]);
    expect(ok.code).toBe(1); // the example's deliberate failure
    expect(ok.stdout).toStartWith("::error ");
  });
});

describe("7: control characters of recorded text are shown escaped", () => {
  const ESC_EVENTS = [
    '{"type":"turn.started","turnId":"t0"}',
    '{"type":"function.call","turnId":"t0","tool":"Bash","callId":"c1","args":{"command":"ls \\u001b[31m"}}',
    '{"type":"function.output","turnId":"t0","tool":"Bash","callId":"c1","failed":true,"duration_ms":10,"output":"\\u001b[33mwarn\\u001b[0m \\u009b2J"}',
    '{"type":"function.denied","turnId":"t0","tool":"Write","callId":"c2","source":"mode","reason":"no\\u001b]0;pwned\\u0007"}',
  ].join("\n");

  test("replay and trace print no control bytes; --json keeps the text exact", async () => {
    await using home = await tempHome();
    expect(runCli(["rollout", "append", "esc"], { home: home.path, stdin: `${ESC_EVENTS}\n` }).code).toBe(0);
    for (const args of [
      ["replay", "esc"],
      ["trace", "esc"],
    ]) {
      const r = runCli(args, { home: home.path });
      expect(r.code).toBe(0);
      expect(r.stdout).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f-\x9f]/);
      expect(r.stdout).toContain("pwned");
    }
    expect(runCli(["trace", "esc"], { home: home.path }).stdout).toContain("ls \\x1b[31m");
    expect(runCli(["replay", "esc"], { home: home.path }).stdout).toContain("\\x1b[33mwarn\\x1b[0m \\x9b2J");
    const json = parseJson<{ turns: { calls: { output: string }[] }[] }>(
      runCli(["replay", "esc", "--json"], { home: home.path }),
    );
    expect(json.turns[0]!.calls[0]!.output).toBe("\x1b[33mwarn\x1b[0m \x9b2J");
  });

  test("session show --full keeps line ends and tabs, escapes the rest", async () => {
    await using home = await tempHome();
    const messages = [
      { role: "user", parts: [{ type: "text", content: "hi \x1b[2J\nthere" }] },
      {
        role: "assistant",
        parts: [{ type: "tool", tool: { name: "Bash", args: {} }, result: "\x1b[33mwarn\r\n\tok\rover" }],
      },
    ];
    const stdin = messages.map((m) => JSON.stringify(m)).join("\n");
    expect(runCli(["session", "create", "--id", "s1"], { home: home.path, stdin }).code).toBe(0);
    const full = runCli(["session", "show", "s1", "--full"], { home: home.path }).stdout;
    expect(full).not.toContain("\x1b");
    expect(full).toContain("hi \\x1b[2J\nthere");
    expect(full).toContain("\\x1b[33mwarn\r\n\tok\\rover");
    expect(runCli(["session", "list"], { home: home.path }).stdout).not.toContain("\x1b");
    // Regression: a result that is not a string printed [object Object].
    const blocks = [
      {
        role: "assistant",
        parts: [
          { type: "tool", tool: { name: "Task", args: {} }, result: [{ type: "text", text: "Found it" }] },
          { type: "tool", tool: { name: "Probe", args: {} }, result: { exit: 0 } },
        ],
      },
    ];
    const more = blocks.map((m) => JSON.stringify(m)).join("\n");
    expect(runCli(["session", "append", "s1"], { home: home.path, stdin: more }).code).toBe(0);
    const shown = runCli(["session", "show", "s1", "--full"], { home: home.path }).stdout;
    expect(shown).not.toContain("[object Object]");
    expect(shown).toContain("✓ Found it");
    expect(shown).toContain('✓ {\n  "exit": 0\n}');
  });

  test("oneLine and escapeText", () => {
    expect(oneLine("a\x1b[1mb\x7f\x85c", 100)).toBe("a\\x1b[1mb\\x7f\\x85c");
    expect(oneLine(`${"x".repeat(10)}\x1b`, 11)).toBe("xxxxxxxxxx…");
    expect(escapeText("a\nb\tc\r\nd\x07")).toBe("a\nb\tc\r\nd\\x07");
  });
});

describe("8 and 9: doctor --store and a config of []", () => {
  test("doctor --store bogus exits 2 as every command does; FREECODE_STORE too", async () => {
    await using home = await tempHome();
    oneLineError(runCli(["doctor", "--store", "bogus"], { home: home.path }), 'unknown store "bogus"');
    oneLineError(
      runCli(["doctor"], { home: home.path, env: { FREECODE_STORE: "bogus" } }),
      'unknown store "bogus" in FREECODE_STORE',
    );
  });

  test("config.json must be an object; an unknown field suggests the known one", async () => {
    await using home = await tempHome();
    const file = join(home.path, "config.json");
    writeFileSync(file, "[]");
    oneLineError(
      runCli(["session", "list"], { home: home.path }),
      `${file}: invalid config: the top level must be a JSON object, not an array`,
    );
    writeFileSync(file, '{"stroe":"files"}');
    oneLineError(
      runCli(["session", "list"], { home: home.path }),
      'invalid config: unknown field "stroe" (did you mean store?) (field stroe)',
    );
  });
});

describe("10: numeric flags are whole numbers", () => {
  test("replay --max-output abc is a usage error; 1e3 and '' too", async () => {
    await using home = await tempHome();
    logIn(home.path, "fixture-session", "");
    copyFileSync(FIXTURE, join(home.path, "rollout", "sessions", "fixture-session", "events.jsonl"));
    for (const bad of ["abc", "1e3", "-1", "0"])
      oneLineError(
        runCli(["replay", "--max-output", bad], { home: home.path }),
        "--max-output must be a whole number",
      );
    expect(runCli(["replay", "--max-output", "5"], { home: home.path }).code).toBe(0);
  });
});

describe("11: trace --follow into a pipe", () => {
  test("the notice goes to stderr once; the waterfall is written again only when the trace changed", async () => {
    await using home = await tempHome();
    const append = (line: string) =>
      runCli(["rollout", "append", "live"], { home: home.path, stdin: `${line}\n` });
    append('{"type":"turn.started","turnId":"turn-0"}');
    const proc = Bun.spawn([BUN, join(ROOT, "src/cli/main.ts"), "trace", "live", "--follow"], {
      env: { ...process.env, NO_COLOR: "1", FREECODE_HOME: home.path },
      stdout: "pipe",
      stderr: "pipe",
    });
    await Bun.sleep(3500); // three polls or more, nothing new
    append('{"type":"turn.started","turnId":"turn-1"}');
    await Bun.sleep(2500);
    proc.kill("SIGINT");
    const [out, err] = await Promise.all([
      new Response(proc.stdout).text(),
      new Response(proc.stderr).text(),
    ]);
    await proc.exited;
    expect(out).not.toContain("following…");
    expect(out.match(/^session live /gm)?.length).toBe(2);
    expect(err.match(/following… \(Ctrl\+C to stop\)/g)?.length).toBe(1);
  }, 30_000);
});

describe("12: talk goes to stderr", () => {
  test("usage's no-price note, import's nothing-to-import (naming where it looked)", async () => {
    await using home = await tempHome();
    logIn(home.path, "fixture-session", "");
    copyFileSync(FIXTURE, join(home.path, "rollout", "sessions", "fixture-session", "events.jsonl"));
    const usage = runCli(["usage"], { home: home.path });
    expect(usage.stdout).not.toContain("no price configured");
    expect(usage.stderr).toContain("no price configured");
    await using fake = await tempDir();
    const none = runCli(["import", "claude"], {
      home: home.path,
      env: { HOME: fake.path, CLAUDE_CONFIG_DIR: undefined },
    });
    expect([none.code, none.stdout]).toEqual([0, ""]);
    expect(none.stderr).toContain(
      `nothing to import: no transcripts in ${join(fake.path, ".claude", "projects")}`,
    );
  });

  test("store migrate's hint is on stderr", async () => {
    await using home = await tempHome();
    runCli(["session", "create", "--prompt", "hi"], { home: home.path });
    const r = runCli(["store", "migrate", "--to", "json"], { home: home.path });
    expect(r.code).toBe(0);
    expect(r.stdout).toStartWith("copied 1 sessions");
    expect(r.stdout).not.toContain("to use it");
    expect(r.stderr).toContain('to use it: set "store": "json"');
  });
});
