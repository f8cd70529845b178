import { describe, expect, test } from "bun:test";
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import pkg from "../../package.json" with { type: "json" };
import { BUN, CORPUS, parseJson, ROOT, runBinary, runCli, tempDir, tempHome } from "../_helpers.ts";

describe("CLI conventions", () => {
  test("--version prints the package version", () => {
    const r = runCli(["--version"]);
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe(pkg.version);
  });

  test("--help goes to stdout with exit 0 and lists commands", () => {
    const r = runCli(["--help"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("USAGE");
    expect(r.stdout).toContain("doctor");
    expect(r.stdout).not.toContain("\x1b["); // no colour when piped
  });

  test("no command: usage on stderr, exit 2, stdout empty", () => {
    const r = runCli([]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("USAGE");
  });

  test("an unknown flag is rejected with exit 2 and nothing on stdout", async () => {
    await using home = await tempHome();
    const r = runCli(["doctor", "--json", "--no-such-flag"], { home: home.path });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("unknown option --no-such-flag");
  });

  test("regression: one dash before a long name, a switch given a value, a switch both ways and an extra argument are refused (exit 2), nothing done", async () => {
    await using home = await tempHome();
    await using other = await tempHome();
    const h = { home: home.path };
    expect(
      runCli(["session", "create", "--id", "a1", "--project", home.path, "--prompt", "hi"], h).code,
    ).toBe(0);
    for (const [args, message] of [
      // `-home` was read as letters and dropped: the purge went to the default home.
      [
        ["session", "delete", "a1", "-home", other.path, "--purge"],
        "unknown option -home (a long option takes two dashes: --home)",
      ],
      [["-home", other.path, "session", "list"], "unknown option -home"],
      // `--purge=no` was on.
      [["session", "delete", "a1", "--purge=no"], '--purge is a switch: it takes no value (got "no")'],
      [["session", "list", "--no-json", "--json"], "--json is given both on and off"],
      // `a2` was dropped without a word.
      [["session", "delete", "a1", "a2"], 'unexpected argument "a2" (it takes one)'],
      [["doctor", "extra"], 'unexpected argument "extra" (it takes none)'],
      // A switch's one-letter alias too; and no `--` hint for a name no option has.
      [["trace", "x", "-f=false"], '-f is a switch: it takes no value (got "false")'],
      [["trace", "x", "-f", "--no-follow"], "--follow is given both on and off"],
      [["session", "list", "-fj"], "unknown option -fj\n"],
    ] as const) {
      const r = runCli([...args], h);
      expect([args, r.code, r.stderr.includes(message)]).toEqual([args, 2, true]);
    }
    expect(
      parseJson<{ meta: { status: string } }>(runCli(["session", "show", "a1", "--json"], h)).meta.status,
    ).toBe("idle");
    // What stays: `=true`/`=false`, one-letter aliases, commands that take many arguments.
    expect(runCli(["session", "list", "--json=true"], h).stdout.startsWith("{")).toBe(true);
    expect(runCli(["session", "list", "--json=false"], h).stdout.startsWith("{")).toBe(false);
    expect(runCli(["search", "hi", "there"], h).code).toBe(0);
  });

  test("regression: an unknown option is named before a missing argument (`search -foo` said a query was missing), with a `--` hint for a word that starts with -", async () => {
    await using home = await tempHome();
    const h = { home: home.path };
    for (const [args, message] of [
      [["search", "-foo"], "unknown option -foo (an argument that starts with - goes after --: -- -foo)"],
      [["search", "--fo"], "unknown option --fo\n"],
      [["search", "-x"], "unknown option -x (an argument that starts with - goes after --: -- -x)"],
      [["search", "-foo bar"], "(an argument that starts with - goes after --: -- '-foo bar')"],
      // Its arguments all given, no hint (following it gave "unexpected argument").
      [["session", "show", "s1", "-x"], "unknown option -x\n"],
      [["session", "list", "-x"], "unknown option -x\n"],
      // A flag the command takes more than once is not "given twice" here (the id was missing).
      [["session", "tag", "--add", "a", "--add", "b"], "Missing required positional argument: ID"],
      [["search"], "Missing required positional argument: QUERY (see freecode search --help)"],
    ] as const) {
      const r = runCli([...args], h);
      expect([args, r.code, r.stdout, r.stderr.includes(message)]).toEqual([args, 2, "", true]);
    }
    // The way the hint says works.
    const r = runCli(["search", "--", "-foo"], h);
    expect([r.code, r.stdout.trim()]).toEqual([0, "no matches"]);
  });

  test("an unknown command is bad usage", () => {
    const r = runCli(["frobnicate"]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
  });

  test("regression: a misspelt command with --help or --version is an error naming the command it may mean, not another command's help (exit 0)", () => {
    for (const [args, message] of [
      [
        ["sesion", "list", "--help"],
        'unknown command "sesion" for freecode (did you mean session? see freecode --help)',
      ],
      [["session", "lisst", "-h"], 'unknown command "lisst" for freecode session (did you mean list?'],
      // And with --version (it printed the version, exit 0).
      [["sesion", "--version"], 'unknown command "sesion" for freecode (did you mean session?'],
      [["store", "inf", "-v"], 'unknown command "inf" for freecode store (did you mean info?'],
    ] as const) {
      const r = runCli([...args]);
      expect([args, r.code, r.stdout, r.stderr.includes(message)]).toEqual([args, 2, "", true]);
    }
    expect(runCli(["session", "list", "--help"]).code).toBe(0);
    expect(runCli(["session", "list", "--version"]).code).toBe(0);
  });

  test("doctor --json: one JSON document with version, home, store and adapters", async () => {
    await using home = await tempHome();
    const r = runCli(["doctor", "--json"], { home: home.path });
    expect(r.code).toBe(0);
    const doc = parseJson<{
      version: string;
      home: string;
      store: string;
      adapters: { name: string; ok: boolean }[];
    }>(r);
    expect(doc.version).toBe(pkg.version);
    expect(doc.home).toBe(home.path);
    expect(doc.store).toBe("files");
    expect(doc.adapters.map((a) => a.name).sort()).toEqual(["files", "json", "memory", "sqlite", "sqljs"]);
    expect(doc.adapters.every((a) => a.ok)).toBe(true);
  });

  test("regression: doctor fails on a home whose sessions/ or state/ is a file, and says whether commands record (NODE_ENV=test turns it off)", async () => {
    await using home = await tempHome();
    writeFileSync(join(home.path, "state"), "not a directory");
    const r = runCli(["doctor", "--json"], {
      home: home.path,
      env: { NODE_ENV: "test", FREECODE_ROLLOUT: undefined },
    });
    const doc = parseJson<{
      homeCheck: { ok: boolean; error?: string };
      recording: { on: boolean; why?: string };
    }>(r);
    expect([r.code, doc.homeCheck]).toEqual([
      1,
      { ok: false, error: `${join(home.path, "state")} is a file, not a directory` },
    ]);
    expect(doc.recording).toEqual({
      on: false,
      why: "NODE_ENV=test; FREECODE_ROLLOUT=on records all the same",
    });
    const on = runCli(["doctor"], {
      home: home.path,
      env: { NODE_ENV: "production", FREECODE_ROLLOUT: undefined },
    });
    expect(on.stdout).toContain("rollout recording: on");
    // The compiled binary too (its build makes `process.env.NODE_ENV` a constant), and the reason is
    // what decided: a FREECODE_ROLLOUT value it does not know is not one.
    rmSync(join(home.path, "state"));
    const binary = runBinary(["doctor", "--json"], {
      home: home.path,
      env: { NODE_ENV: "test", FREECODE_ROLLOUT: undefined },
    });
    expect(parseJson<{ recording: { why?: string } }>(binary).recording.why).toBe(
      "NODE_ENV=test; FREECODE_ROLLOUT=on records all the same",
    );
    writeFileSync(join(home.path, "config.json"), '{"rollout": false}');
    const yes = runCli(["doctor", "--json"], {
      home: home.path,
      env: { NODE_ENV: "production", FREECODE_ROLLOUT: "yes" },
    });
    expect(parseJson<{ recording: { why?: string } }>(yes).recording.why).toBe(
      '"rollout": false in config.json',
    );
    // Every folder it writes into: snapshots/ as a file, sessions/ as a link to nowhere.
    const homeError = () =>
      parseJson<{ homeCheck: { error?: string } }>(runCli(["doctor", "--json"], { home: home.path }))
        .homeCheck.error;
    writeFileSync(join(home.path, "snapshots"), "");
    expect(homeError()).toBe(`${join(home.path, "snapshots")} is a file, not a directory`);
    rmSync(join(home.path, "snapshots"));
    symlinkSync(join(home.path, "nowhere"), join(home.path, "sessions"));
    expect(homeError()).toBe(
      `${join(home.path, "sessions")} is a link to ${join(home.path, "nowhere")}, which leads to no folder (missing, or a loop of links)`,
    );
  });

  test("--home beats FREECODE_HOME; --store beats FREECODE_STORE", async () => {
    await using home = await tempHome();
    const r = runCli(["doctor", "--json", "--home", home.path, "--store", "sqlite"], {
      env: { FREECODE_HOME: "/nonexistent", FREECODE_STORE: "json" },
    });
    const doc = parseJson<{ home: string; store: string }>(r);
    expect(doc.home).toBe(home.path);
    expect(doc.store).toBe("sqlite");
  });

  test("a bad config.json is a one-line error naming the file and field, exit 2", async () => {
    await using home = await tempHome();
    writeFileSync(join(home.path, "config.json"), JSON.stringify({ fsync: "sometimes" }));
    const r = runCli(["doctor"], { home: home.path });
    expect(r.code).toBe(1); // doctor reports the problem as a failed check
    expect(r.stdout).toContain("config.json");
    for (const args of [
      ["session", "list"],
      ["eval", "x"],
    ]) {
      const other = runCli(args, { home: home.path });
      expect(other.code).toBe(2);
      expect(other.stdout).toBe("");
      const lines = other.stderr.trim().split("\n");
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain(join(home.path, "config.json"));
      expect(lines[0]).toContain("field fsync");
    }
  });

  test("doctor checks what the schema cannot: a key variable that is not set; the store is still told", async () => {
    await using home = await tempHome();
    const summarizer = {
      type: "http",
      url: "http://127.0.0.1:9/v1",
      model: "m",
      apiKeyEnv: "FC_TEST_NO_SUCH_KEY",
    };
    writeFileSync(join(home.path, "config.json"), JSON.stringify({ summarizer }));
    const r = runCli(["doctor", "--json"], { home: home.path, env: { FREECODE_STORE: "json" } });
    expect(r.code).toBe(1);
    const doc = JSON.parse(r.stdout) as { config: { ok: boolean; error: string }; store: string };
    expect(doc.config.ok).toBe(false);
    expect(doc.config.error).toContain("FC_TEST_NO_SUCH_KEY (apiKeyEnv) is not set");
    expect(doc.store).toBe("json");
    const set = runCli(["doctor", "--json"], { home: home.path, env: { FC_TEST_NO_SUCH_KEY: "k" } });
    expect((JSON.parse(set.stdout) as { config: { ok: boolean } }).config.ok).toBe(true);
    // A sync endpoint that is not http(s) is a config error, not a surprise at the first export.
    writeFileSync(join(home.path, "config.json"), JSON.stringify({ syncEndpoint: "ftp://host/x" }));
    const ftp = runCli(["session", "list"], { home: home.path });
    expect(ftp.code).toBe(2);
    expect(ftp.stderr).toContain("syncEndpoint must be an http:// or https:// URL");
  });

  test("a damaged store: one line naming it (exit 2), and doctor says so (exit 1); an empty home is not made a store", async () => {
    await using home = await tempHome();
    mkdirSync(join(home.path, "state"), { recursive: true });
    writeFileSync(join(home.path, "state", "store.db"), Buffer.alloc(10_000, 0x5a));
    for (const args of [
      ["session", "list"],
      ["store", "info"],
    ]) {
      const r = runCli([...args, "--store", "sqlite"], { home: home.path });
      expect([r.code, r.stderr.trim().split("\n")]).toEqual([
        2,
        [expect.stringContaining("store.db: the sqlite store is damaged (file is not a database)")],
      ]);
    }
    // `auto` says so too: it took another store, listed none and wrote new sessions there.
    const auto = runCli(["session", "list", "--store", "auto"], { home: home.path });
    expect([auto.code, auto.stderr]).toEqual([2, expect.stringContaining("the sqlite store is damaged")]);
    expect(existsSync(join(home.path, "state", "store-sqljs.db"))).toBe(false);
    for (const store of ["sqlite", "auto"]) {
      const doctor = runCli(["doctor", "--json", "--store", store], { home: home.path });
      expect(doctor.code).toBe(1);
      const doc = JSON.parse(doctor.stdout) as { storeCheck: { ok: boolean; error: string } };
      expect(doc.storeCheck).toEqual({
        ok: false,
        error: expect.stringContaining("the sqlite store is damaged"),
      });
    }
    // A json store whose journal does not apply.
    await using json = await tempHome();
    expect(runCli(["session", "create", "--prompt", "p", "--store", "json"], { home: json.path }).code).toBe(
      0,
    );
    // A line that parses but holds an operation freecode does not write (a flipped bit: "meta" →
    // "oeta") is as corrupt: it was applied as nothing, and a session's meta vanished unsaid.
    await using flipped = await tempHome();
    expect(
      runCli(["session", "create", "--prompt", "p", "--store", "json", "--id", "k1"], { home: flipped.path })
        .code,
    ).toBe(0);
    appendFileSync(join(flipped.path, "state", "store.json.journal"), '[["oeta","k2",{"id":"k2"}]]\n');
    const f = runCli(["session", "list", "--store", "json"], { home: flipped.path });
    expect([f.code, f.stderr]).toEqual([2, expect.stringContaining("corrupt journal line at byte")]);
    expect(f.stderr).toContain("an operation freecode does not write");
    appendFileSync(join(json.path, "state", "store.json.journal"), "garbage\n");
    const j = runCli(["doctor", "--store", "json"], { home: json.path });
    expect([j.code, j.stdout]).toEqual([1, expect.stringContaining("ERROR")]);
    // Nothing to check in a home that holds no store yet, and nothing is made there.
    await using empty = await tempHome();
    for (const store of ["sqlite", "json", "files"]) {
      const e = runCli(["doctor", "--json", "--store", store], { home: empty.path });
      expect((JSON.parse(e.stdout) as { storeCheck: { ok: boolean } }).storeCheck.ok).toBe(true);
    }
    expect(readdirSync(empty.path)).toEqual([]);
  });
});

test("a home that is a symbolic link to nothing is refused, for reads and writes, and nothing is made", async () => {
  await using dir = await tempDir();
  const home = join(dir.path, "home");
  const missing = join(dir.path, "unmounted", "freecode");
  symlinkSync(missing, home);
  const said = `is a symbolic link to ${missing}, which does not exist`;
  // Listing read it as an empty store ("No sessions", exit 0); an import failed on a directory.
  for (const args of [
    ["session", "list"],
    ["import", "claude", join(CORPUS, "claude", "drmaciver_claude-reliability")],
  ]) {
    const flag = runCli([...args, "--home", home]);
    expect([flag.code, flag.stderr]).toEqual([2, expect.stringContaining(`--home ${home} ${said}`)]);
    const env = runCli(args, { home });
    expect([env.code, env.stderr]).toEqual([2, expect.stringContaining(`FREECODE_HOME ${home} ${said}`)]);
  }
  await using real = await tempHome();
  const m = runCli(["store", "migrate", "--to", "sqlite", "--to-home", home], { home: real.path });
  expect([m.code, m.stderr]).toEqual([2, expect.stringContaining(`--to-home ${home} ${said}`)]);
  expect(readdirSync(dir.path)).toEqual(["home"]);
  // A link to a home that exists is that home.
  mkdirSync(missing, { recursive: true });
  expect(runCli(["session", "list"], { home }).code).toBe(0);
});

test("regression: an argument or FREECODE_HOME that is not valid UTF-8 is refused, exit 2 (a --home so named made another directory; a prompt kept U+FFFD), and a real U+FFFD is taken", async () => {
  await using home = await tempHome();
  const sh = (script: string, env: Record<string, string> = {}) =>
    Bun.spawnSync(["sh", "-c", script], {
      env: {
        ...process.env,
        NODE_ENV: "test",
        FREECODE_CLI: join(ROOT, "src/cli/main.ts"),
        BUN,
        H: home.path,
        ...env,
      },
    });
  const bad = sh(`exec "$BUN" "$FREECODE_CLI" --home "$H/x$(printf '\\377')" session list`);
  expect([bad.exitCode, bad.stderr.toString()]).toEqual([2, expect.stringContaining("is not valid UTF-8")]);
  const prompt = sh(`exec "$BUN" "$FREECODE_CLI" --home "$H" session create --prompt "caf$(printf '\\351')"`);
  expect(prompt.exitCode).toBe(2);
  const envHome = sh(`FREECODE_HOME="$H/y$(printf '\\377')" exec "$BUN" "$FREECODE_CLI" session list`);
  expect([envHome.exitCode, envHome.stderr.toString()]).toEqual([
    2,
    expect.stringContaining("FREECODE_HOME"),
  ]);
  expect(readdirSync(home.path)).toEqual([]);
  const real = sh(`exec "$BUN" "$FREECODE_CLI" --home "$H" session create --prompt "real \uFFFD ok"`);
  expect(real.exitCode).toBe(0);
});
