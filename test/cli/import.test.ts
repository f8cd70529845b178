/**
 * `freecode import` end to end: the compiled binary imports the whole corpus (`auto`), a second run
 * changes nothing, bad usage and missing paths exit 2 and 3, each agent's own folder is found
 * without a path (and where its environment variable moves it), and `--watch` follows a live file
 * (a torn last line waits) until SIGINT.
 */
import { describe, expect, test } from "bun:test";
import { copyFileSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BUN, CORPUS, parseJson, ROOT, runBinary, tempDir, tempHome } from "../_helpers.ts";
import { buildOpencodeDb } from "../import/_opencode-db.ts";

interface Report {
  sources: {
    sessions: { created: number; updated: number; unchanged: number };
    warnings: unknown[];
    agents?: Record<string, number>;
  }[];
  totals: { created: number; updated: number; unchanged: number; imported: number };
}

describe("freecode import (binary)", () => {
  test("auto over the corpus, then a no-op re-import", async () => {
    await using home = await tempHome();
    const first = runBinary(["import", "auto", CORPUS, "--json"], { home: home.path });
    expect(first.code).toBe(0);
    const r1 = parseJson<Report>(first);
    // 12 Claude sessions (5 inline subagents), 3 Codex, 3 OpenCode (rows and exports agree), 1 Gemini.
    expect(r1.totals.created).toBe(19);
    // The files found, per agent (import audit 7); the text says it on the files line.
    expect(r1.sources[0]!.agents).toEqual({ claude: 7, codex: 3, gemini: 1, opencode: 4 });
    const second = parseJson<Report>(runBinary(["import", "auto", CORPUS, "--json"], { home: home.path }));
    expect(second.totals).toMatchObject({ created: 0, updated: 0, imported: 0 });
    expect(runBinary(["import", "auto", CORPUS], { home: home.path }).stdout).toContain(
      "15 found (7 claude, 3 codex, 1 gemini, 4 opencode), 0 read, 15 unchanged",
    );
    const list = runBinary(["session", "list", "--json"], { home: home.path });
    expect(list.code).toBe(0);
  }, 120_000);

  test("bad agent exits 2, a missing path exits 3", async () => {
    await using home = await tempHome();
    expect(runBinary(["import", "aider", CORPUS], { home: home.path }).code).toBe(2);
    const missing = runBinary(["import", "claude", join(home.path, "nope")], { home: home.path });
    expect(missing.code).toBe(3);
    expect(missing.stderr).toContain("nope");
  });

  test("regression: another agent's importer skips an OpenCode row dump, as it skips that agent's files", async () => {
    await using home = await tempHome();
    type Report = { sources: { files: { found: number }; sessions: { created: number } }[] };
    for (const agent of ["claude", "codex", "gemini"]) {
      const r = parseJson<Report>(
        runBinary(["import", agent, join(CORPUS, "opencode"), "--json"], { home: home.path }),
      );
      expect([agent, r.sources[0]!.files.found, r.sources[0]!.sessions.created]).toEqual([agent, 0, 0]);
    }
    const rows = join(CORPUS, "opencode", "richardaiand_aiand-portfolio-web", "rows");
    const named = runBinary(["import", "claude", rows], { home: home.path });
    expect(named.stderr).toContain("looks like an opencode row dump, not claude: skipped");
    expect(runBinary(["session", "list", "--all"], { home: home.path }).stdout).toContain("no sessions");
    const own = parseJson<Report>(runBinary(["import", "opencode", rows, "--json"], { home: home.path }));
    expect(own.sources[0]!.sessions.created).toBe(3);
  });

  test("regression: --json totals count a session once when two of the paths given feed it", async () => {
    await using home = await tempHome();
    const oc = join(CORPUS, "opencode", "richardaiand_aiand-portfolio-web");
    type Totals = { sources: { sessions: { created: number; updated: number; unchanged: number } }[] };
    const r = parseJson<Totals & { totals: { created: number; updated: number; unchanged: number } }>(
      runBinary(["import", "opencode", join(oc, "reconstructed_export"), join(oc, "rows"), "--json"], {
        home: home.path,
      }),
    );
    // Each source counts the three sessions it fed; the totals count three sessions, not six.
    const fed = r.sources.map((s) => s.sessions.created + s.sessions.updated + s.sessions.unchanged);
    expect(fed).toEqual([3, 3]);
    expect(r.totals.created + r.totals.updated + r.totals.unchanged).toBe(3);
    expect(r.totals.created).toBe(3);
  });

  test("regression: the same transcripts named through a symbolic link are unchanged, not read again", async () => {
    await using home = await tempHome();
    await using dir = await tempDir();
    const link = join(dir.path, "link");
    symlinkSync(join(CORPUS, "claude"), link);
    type Out = { totals: { created: number; updated: number; unchanged: number; imported: number } };
    const first = parseJson<Out>(
      runBinary(["import", "claude", join(CORPUS, "claude"), "--json"], { home: home.path }),
    );
    const again = parseJson<Out>(runBinary(["import", "claude", link, "--json"], { home: home.path }));
    expect(again.totals).toMatchObject({
      created: 0,
      updated: 0,
      unchanged: first.totals.created,
      imported: 0,
    });
  });

  test("regression: a default location that is a link is taken by its real path; a transcript linked under its own name imports", async () => {
    await using home = await tempHome();
    await using dir = await tempDir();
    // ~/.claude kept in a dotfiles folder and linked.
    const real = join(dir.path, "dotfiles", "claude");
    const transcript = join(
      CORPUS,
      "claude",
      "drmaciver_claude-reliability",
      "coverage-test-fix.transcript.jsonl",
    );
    mkdirSync(join(real, "projects", "p"), { recursive: true });
    copyFileSync(transcript, join(real, "projects", "p", "c64cc478-3430-40fe-8e9c-4ee9986e9754.jsonl"));
    symlinkSync(real, join(dir.path, ".claude"));
    type Out = { totals: { created: number; updated: number; unchanged: number; imported: number } };
    const env = { HOME: dir.path, CLAUDE_CONFIG_DIR: undefined };
    const first = parseJson<Out>(runBinary(["import", "claude", "--json"], { home: home.path, env }));
    expect(first.totals.created).toBe(1);
    const again = parseJson<Out>(
      runBinary(["import", "claude", join(real, "projects"), "--json"], { home: home.path, env }),
    );
    expect(again.totals).toMatchObject({ created: 0, updated: 0, unchanged: 1, imported: 0 });
    // A transcript linked under its own name from a file named otherwise: read as the name given.
    await using other = await tempHome();
    const blob = join(dir.path, "cblob");
    copyFileSync(transcript, blob);
    const named = join(dir.path, "linked", "c64cc478-3430-40fe-8e9c-4ee9986e9754.jsonl");
    mkdirSync(join(dir.path, "linked"));
    symlinkSync(blob, named);
    const linked = runBinary(["import", "claude", named, "--json"], { home: other.path });
    expect([linked.code, parseJson<Out>(linked).totals.created]).toEqual([0, 1]);
  });

  test("regression: a named path the importer cannot take is exit 2; the rest is imported", async () => {
    await using home = await tempHome();
    const claude = join(
      CORPUS,
      "claude",
      "drmaciver_claude-reliability",
      "coverage-test-fix.transcript.jsonl",
    );
    const codex = join(
      CORPUS,
      "codex",
      "rollout-2026-04-10T09-55-11-019d781a-be34-7041-abb1-577f9360b907.jsonl",
    );
    const r = runBinary(["import", "claude", claude, codex], { home: home.path });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("looks like a codex transcript, not claude: skipped");
    expect(r.stderr).toContain("1 path given is not claude's: not imported (`freecode import auto`");
    expect(r.stdout).toContain("1 named but not claude's (skipped)");
    // The Claude transcript was imported all the same.
    expect(runBinary(["session", "list"], { home: home.path }).stdout).toContain("1 of 1");
    // A folder with none of the importer's own files says whose they are (not an error).
    const folder = runBinary(["import", "codex", join(CORPUS, "claude", "laf-us_idaho-vault")], {
      home: home.path,
    });
    expect(folder.code).toBe(0);
    expect(folder.stderr).toContain(
      "no codex transcripts here, but 4 claude (`freecode import auto` takes each",
    );
    // `auto` given a file that is no transcript: no advice to run `import auto`.
    writeFileSync(join(home.path, "notes.jsonl"), '{"a":1}\n');
    const auto = runBinary(["import", "auto", join(home.path, "notes.jsonl")], { home: home.path });
    expect([auto.code, auto.stdout]).toEqual([
      2,
      expect.stringContaining("1 named but not a transcript (skipped)"),
    ]);
    expect(auto.stderr).toContain("1 path given is not a transcript of any agent freecode imports");
    expect(auto.stderr).not.toContain("import auto");
    // --interval means something only with --watch.
    const interval = runBinary(["import", "claude", claude, "--interval", "100"], { home: home.path });
    expect([interval.code, interval.stderr]).toEqual([2, expect.stringContaining("give --watch too")]);
    // Past what a timer waits, it fired every millisecond: a busy loop.
    const long = runBinary(["import", "claude", claude, "--watch", "--interval", "2147483648"], {
      home: home.path,
    });
    expect([long.code, long.stderr]).toEqual([
      2,
      expect.stringContaining(
        "--interval must be at most 2147483647 ms, what a timer waits (got 2147483648)",
      ),
    ]);
  });
});

/**
 * One session per agent where the agent keeps it, under `root`: Claude's projects folder, Codex's
 * dated sessions folder, OpenCode's data folder with its database, Gemini's per-project chats.
 */
function agentFolders(dirs: { claude: string; codex: string; opencode: string; gemini: string }): void {
  const put = (src: string, dest: string) => {
    mkdirSync(join(dest, ".."), { recursive: true });
    copyFileSync(src, dest);
  };
  put(
    join(CORPUS, "claude", "drmaciver_claude-reliability", "coverage-test-fix.transcript.jsonl"),
    join(dirs.claude, "projects", "-tmp-tmpw6sk2trg", "c64cc478-3430-40fe-8e9c-4ee9986e9754.jsonl"),
  );
  const rollout = "rollout-2026-04-19T22-10-31-019da915-31a8-74d0-ad7f-640110fae046.jsonl";
  put(join(CORPUS, "codex", rollout), join(dirs.codex, "sessions", "2026", "04", "19", rollout));
  mkdirSync(join(dirs.opencode, "opencode"), { recursive: true });
  buildOpencodeDb(join(dirs.opencode, "opencode", "opencode.db"));
  const chat = "session-2026-03-28T21-32-c4c43609.json";
  put(join(CORPUS, "gemini", chat), join(dirs.gemini, "tmp", "f528f00f72f2", "chats", chat));
}

describe("freecode import without a path", () => {
  test("finds each agent's own folder under HOME, and where its variable moves it", async () => {
    await using fake = await tempDir();
    const clean = {
      CLAUDE_CONFIG_DIR: undefined,
      CODEX_HOME: undefined,
      XDG_DATA_HOME: undefined,
      GEMINI_CLI_HOME: undefined,
    };
    const h = fake.path;
    agentFolders({
      claude: join(h, ".claude"),
      codex: join(h, ".codex"),
      opencode: join(h, ".local", "share"),
      gemini: join(h, ".gemini"),
    });
    await using home = await tempHome();
    const r = parseJson<Report>(
      runBinary(["import", "auto", "--json"], { home: home.path, env: { ...clean, HOME: h } }),
    );
    // 1 Claude, 1 Codex, 3 OpenCode (the database), 1 Gemini.
    expect(r.totals.created).toBe(6);

    await using moved = await tempDir();
    const m = moved.path;
    agentFolders({
      claude: join(m, "claude-config"),
      codex: join(m, "codex-home"),
      opencode: join(m, "xdg-data"),
      // Gemini CLI keeps `.gemini` under $GEMINI_CLI_HOME.
      gemini: join(m, "gemini-home", ".gemini"),
    });
    await using home2 = await tempHome();
    const env = {
      HOME: join(m, "empty"),
      CLAUDE_CONFIG_DIR: join(m, "claude-config"),
      CODEX_HOME: join(m, "codex-home"),
      XDG_DATA_HOME: join(m, "xdg-data"),
      GEMINI_CLI_HOME: join(m, "gemini-home"),
    };
    for (const [agent, n] of [
      ["claude", 1],
      ["codex", 1],
      ["opencode", 3],
      ["gemini", 1],
    ] as const) {
      const one = parseJson<Report>(runBinary(["import", agent, "--json"], { home: home2.path, env }));
      expect([agent, one.totals.created]).toEqual([agent, n]);
    }
  }, 120_000);
});

describe("freecode import --watch", () => {
  test("follows a growing transcript and waits for a torn line", async () => {
    await using home = await tempHome();
    await using dir = await tempDir();
    const src = join(CORPUS, "claude", "drmaciver_claude-reliability", "coverage-test-fix.transcript.jsonl");
    const lines = readFileSync(src, "utf8").split("\n").filter(Boolean);
    const live = join(dir.path, "live.jsonl");
    writeFileSync(live, `${lines.slice(0, 10).join("\n")}\n${lines[10]!.slice(0, 30)}`);
    const proc = Bun.spawn(
      [
        BUN,
        join(ROOT, "src/cli/main.ts"),
        "import",
        "claude",
        live,
        "--watch",
        "--interval",
        "100",
        "--json",
      ],
      {
        env: { ...process.env, FREECODE_HOME: home.path, NO_COLOR: "1" },
        stdout: "pipe",
        stderr: "pipe",
      },
    );
    const reader = proc.stdout.getReader();
    let buffered = "";
    const nextPass = async () => {
      for (;;) {
        const nl = buffered.indexOf("\n");
        if (nl >= 0) {
          const line = buffered.slice(0, nl);
          buffered = buffered.slice(nl + 1);
          return JSON.parse(line) as Report & { pass: number };
        }
        const { value, done } = await reader.read();
        if (done) throw new Error("watch ended early");
        buffered += new TextDecoder().decode(value);
      }
    };
    const p1 = await nextPass();
    expect(p1.totals.created).toBe(1);
    writeFileSync(live, `${lines.join("\n")}\n`);
    const p2 = await nextPass();
    expect(p2.totals.updated).toBe(1);
    proc.kill("SIGINT");
    expect(await proc.exited).toBe(0);
    // Once complete, the followed session traces like a one-shot import: 13 tool calls that ran.
    const trace = parseJson<{ toolSpans: unknown[]; pendingCalls: unknown[] }>(
      runBinary(["trace", "claude-c64cc478-3430-40fe-8e9c-4ee9986e9754", "--json"], { home: home.path }),
    );
    expect(trace.toolSpans).toHaveLength(13);
    expect(trace.pendingCalls).toHaveLength(0);
  }, 120_000);

  test("a warning every pass finds again is said once", async () => {
    await using home = await tempHome();
    await using dir = await tempDir();
    const codex = join(dir.path, "r.jsonl");
    const src = join(
      CORPUS,
      "codex",
      "rollout-2026-04-10T09-55-11-019d781a-be34-7041-abb1-577f9360b907.jsonl",
    );
    writeFileSync(codex, readFileSync(src));
    const proc = Bun.spawn(
      [BUN, join(ROOT, "src/cli/main.ts"), "import", "claude", codex, "--watch", "--interval", "50"],
      {
        env: { ...process.env, FREECODE_HOME: home.path, NO_COLOR: "1" },
        stdout: "pipe",
        stderr: "pipe",
      },
    );
    await Bun.sleep(1_500); // many passes
    proc.kill("SIGINT");
    expect(await proc.exited).toBe(0);
    const stderr = await new Response(proc.stderr).text();
    expect(stderr.split("\n").filter((l) => l.includes("looks like a codex transcript"))).toHaveLength(1);
  }, 60_000);
});
