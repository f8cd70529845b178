/** `freecode rollout append|cat|verify`: stdin validation (all or nothing, line numbers), exit codes. */
import { describe, expect, test } from "bun:test";
import {
  appendFileSync,
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { BUN, binaryPath, parseJson, ROOT, runBinary, runCli, tempHome } from "../_helpers.ts";

const logOf = (home: string, id: string) => join(home, "rollout", "sessions", id, "events.jsonl");
const GOOD = [
  { type: "session.started", provider: "p", model: "m" },
  { type: "turn.started", turnId: "turn-0" },
  { type: "model.request", turnId: "turn-0", provider: "p", model: "m" },
]
  .map((e) => JSON.stringify(e))
  .join("\n");

describe("rollout append", () => {
  test("appends validated events; seq continues across calls", async () => {
    await using home = await tempHome();
    const first = runCli(["rollout", "append", "s1", "--json"], { home: home.path, stdin: `${GOOD}\n` });
    expect(first.code).toBe(0);
    expect(parseJson(first)).toEqual({ sessionId: "s1", appended: 3, firstSeq: 1, lastSeq: 3 });
    const second = runCli(["rollout", "append", "s1", "--json"], {
      home: home.path,
      stdin: '{"type":"turn.aborted","turnId":"turn-0","reason":"user"}\n',
    });
    expect(parseJson(second)).toMatchObject({ firstSeq: 4, lastSeq: 4 });
    const lines = readFileSync(logOf(home.path, "s1"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => l.seq)).toEqual([1, 2, 3, 4]);
    expect(lines.every((l) => l.aggregateID === "s1" && /^[0-9A-Z]{26}$/.test(l.id))).toBe(true);
  });

  test.each([
    [
      '{"type":"turn.started","turnId":"t"}\n\n{"type":"turn.started"}\n',
      /<stdin>:3: .*turn.started.*\(field turnId\)/,
    ],
    ['{"type":"turn.started","turnId":"t"}\nnot json\n', /<stdin>:2: not JSON/],
    ['{"type":"turn.started","turnId":"t","seq":9}\n', /<stdin>:1: seq is assigned by the store/],
    ['{"type":"poke.triggered"}\n', /<stdin>:1: unknown event type "poke.triggered"/],
    ['{"type":"function.denied","tool":"Bash","source":"boss"}\n', /<stdin>:1: .*\(field source\)/],
    [
      '{"type":"model.response","turnId":"t","provider":"p","model":"m","outputTokens":-1000000}\n',
      /<stdin>:1: .*\(field outputTokens\)/,
    ],
    [
      '{"type":"turn.started","turnId":"t"}\n{"type":"turn.started","turnId":"u","budget":{"ms":1e999}}\n',
      /<stdin>:2: a number too large for a double \(stored, it would become null\) \(field budget\.ms\)/,
    ],
    // Regression: the store refused it, naming no line.
    [
      '{"type":"turn.started","turnId":"t"}\n{"type":"turn.started","turnId":"u","timestamp":1e300}\n',
      /<stdin>:2: invalid event: timestamp must be milliseconds a date can hold .*\(field timestamp\)/,
    ],
    [
      '{"type":"turn.started","turnId":"t"}\n{"type":"model.response","turnId":"t","provider":"p","model":"m","content":"SECRET"}\n',
      /<stdin>:2: rollout events hold no message bodies .*field "content" is refused.*\(field content\)/,
    ],
  ])("rejects %j with exit 2, naming the line, writing nothing", async (stdin, message) => {
    await using home = await tempHome();
    const r = runCli(["rollout", "append", "s2"], { home: home.path, stdin });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(existsSync(logOf(home.path, "s2"))).toBe(false);
  });

  test("a bad session id is refused", async () => {
    await using home = await tempHome();
    const r = runCli(["rollout", "append", "../x"], { home: home.path, stdin: `${GOOD}\n` });
    expect(r.code).toBe(2);
  });
});

describe("rollout cat and verify", () => {
  test("cat prints JSONL (or one JSON document); verify is clean on a good log", async () => {
    await using home = await tempHome();
    runCli(["rollout", "append", "s1"], { home: home.path, stdin: GOOD });
    const cat = runCli(["rollout", "cat", "s1", "--type", "turn."], { home: home.path });
    expect(
      cat.stdout
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l).type),
    ).toEqual(["turn.started"]);
    const doc = parseJson<{ events: unknown[] }>(
      runCli(["rollout", "cat", "s1", "--json"], { home: home.path }),
    );
    expect(doc.events).toHaveLength(3);
    const ok = runCli(["rollout", "verify", "s1", "--json"], { home: home.path });
    expect(ok.code).toBe(0);
    expect(parseJson(ok)).toMatchObject({ ok: true, events: 3, lastSeq: 3 });
  });

  test("cat --json is written as the events come, byte for byte JSON.stringify's document", async () => {
    await using home = await tempHome();
    runCli(["rollout", "append", "s1"], { home: home.path, stdin: GOOD });
    appendFileSync(logOf(home.path, "s1"), "not json\n");
    const events = readFileSync(logOf(home.path, "s1"), "utf8")
      .split("\n")
      .slice(0, 3)
      .map((l) => JSON.parse(l));
    const doc = (evs: unknown[], issues: unknown[]) =>
      `${JSON.stringify({ sessionId: "s1", events: evs, issues, unknownTypes: 0 }, null, 2)}\n`;
    const all = runCli(["rollout", "cat", "s1", "--json"], { home: home.path });
    const issues = parseJson<{ issues: unknown[] }>(all).issues;
    expect(issues).toHaveLength(1);
    expect(all.stdout).toBe(doc(events, issues));
    const none = runCli(["rollout", "cat", "s1", "--json", "--type", "nothing."], { home: home.path });
    expect(none.stdout).toBe(doc([], issues));
  });

  test("regression: cat prints an event of a type this version does not know as it is (it was left out, so cat | append dropped it), and counts it", async () => {
    await using home = await tempHome();
    const h = { home: home.path };
    runCli(["rollout", "append", "u1"], { ...h, stdin: '{"type":"turn.started","turnId":"a"}\n' });
    const future = {
      type: "future.thing",
      id: "F1",
      aggregateID: "u1",
      timestamp: 1796108814616,
      seq: 2,
      x: 1,
    };
    appendFileSync(logOf(home.path, "u1"), `${JSON.stringify(future)}\n`);
    runCli(["rollout", "append", "u1"], { ...h, stdin: '{"type":"turn.started","turnId":"b"}\n' });
    const text = runCli(["rollout", "cat", "u1"], h);
    const lines = text.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines.map((e) => [e.seq, e.type])).toEqual([
      [1, "turn.started"],
      [2, "future.thing"],
      [3, "turn.started"],
    ]);
    expect(lines[1]).toEqual(future);
    expect(text.stderr).toContain("1 event(s) of types this version does not know (printed as they are)");
    const doc = parseJson<{ events: { type: string }[]; unknownTypes: number }>(
      runCli(["rollout", "cat", "u1", "--json"], h),
    );
    expect([doc.events.length, doc.unknownTypes]).toEqual([3, 1]);
    expect(runCli(["rollout", "cat", "u1", "--type", "future."], h).stdout).toBe(
      `${JSON.stringify(future)}\n`,
    );
    // Counted among those printed: one `--type` leaves out is not said to be printed.
    const turns = runCli(["rollout", "cat", "u1", "--type", "turn."], h);
    expect(turns.stderr).not.toContain("does not know");
    const json = runCli(["rollout", "cat", "u1", "--type", "turn.", "--json"], h);
    expect(parseJson<{ unknownTypes: number }>(json).unknownTypes).toBe(0);
  });

  test("stdout and stderr sent to one place stay in the order they were written (2>&1)", async () => {
    await using home = await tempHome();
    runCli(["rollout", "append", "s1"], { home: home.path, stdin: GOOD });
    appendFileSync(logOf(home.path, "s1"), "not json\n");
    const p = Bun.spawnSync(["sh", "-c", `"${BUN}" src/cli/main.ts rollout cat s1 2>&1`], {
      cwd: ROOT,
      env: { ...process.env, FREECODE_HOME: home.path, NO_COLOR: "1" },
    });
    const lines = p.stdout.toString().trim().split("\n");
    // The three events, then the warning about line 4: not the warning first.
    expect(lines.slice(0, 3).map((l) => JSON.parse(l).seq)).toEqual([1, 2, 3]);
    expect(lines[3]).toMatch(/^\[warn\] .*:4: not valid JSON/);
  });

  test("verify finds a seq gap, a repeat, a schema error and a torn last line (exit 1)", async () => {
    await using home = await tempHome();
    runCli(["rollout", "append", "s1"], { home: home.path, stdin: GOOD });
    const base = { id: "x", aggregateID: "s1", timestamp: 1 };
    appendFileSync(
      logOf(home.path, "s1"),
      [
        JSON.stringify({ ...base, type: "turn.started", turnId: "a", seq: 5 }),
        JSON.stringify({ ...base, type: "turn.started", turnId: "b", seq: 5 }),
        JSON.stringify({ ...base, type: "model.first_token", turnId: "b", seq: 6 }),
        '{"type":"turn.sta',
      ].join("\n"),
    );
    const r = runCli(["rollout", "verify", "s1", "--json"], { home: home.path });
    expect(r.code).toBe(1);
    const report = parseJson<{ problems: { kind: string; line?: number }[] }>(r);
    expect(report.problems.map((p) => [p.kind, p.line])).toEqual([
      ["seq_gap", 4],
      ["seq_repeat", 5],
      ["schema", 6],
      ["torn", 7],
    ]);
    const human = runCli(["rollout", "verify", "s1"], { home: home.path });
    expect(human.stdout).toContain("seq jumps from 3 to 5");
  });

  test("a seq past the safe integers is not a seq: the next append does not repeat it, and verify names it", async () => {
    await using home = await tempHome();
    runCli(["rollout", "append", "s1"], { home: home.path, stdin: GOOD });
    const base = { id: "x", aggregateID: "s1", timestamp: 1 };
    appendFileSync(
      logOf(home.path, "s1"),
      `${JSON.stringify({ ...base, type: "turn.started", turnId: "x", seq: 1e300 })}\n`,
    );
    const a = runCli(["rollout", "append", "s1"], {
      home: home.path,
      stdin: '{"type":"turn.started","turnId":"y"}\n',
    });
    expect(a.code).toBe(0);
    expect(a.stderr + a.stdout).toContain("(seq 4–4)");
    const report = parseJson<{ problems: { kind: string; line?: number }[] }>(
      runCli(["rollout", "verify", "s1", "--json"], { home: home.path }),
    );
    expect(report.problems.map((p) => [p.kind, p.line])).toEqual([["schema", 4]]);
  });

  test("unknown session: exit 3", async () => {
    await using home = await tempHome();
    expect(runCli(["rollout", "cat", "nope"], { home: home.path }).code).toBe(3);
    expect(runCli(["rollout", "verify", "nope"], { home: home.path }).code).toBe(3);
  });

  test("cat through a pipe: every line arrives; a reader that stops early ends it quietly (exit 141)", async () => {
    await using home = await tempHome();
    // ~1.2 MB of JSONL: far more than a pipe holds, so the writer meets a closed pipe.
    const pad = "x".repeat(300);
    const events = [{ type: "session.started", provider: "p", model: "m" }];
    for (let i = 0; i < 4000; i++) events.push({ type: "turn.started", turnId: `turn-${i}-${pad}` } as never);
    const stdin = events.map((e) => JSON.stringify(e)).join("\n");
    expect(runBinary(["rollout", "append", "big"], { home: home.path, stdin }).code).toBe(0);
    const all = runBinary(["rollout", "cat", "big"], { home: home.path });
    expect(all.code).toBe(0);
    expect(all.stdout.split("\n").filter(Boolean)).toHaveLength(4001);

    const proc = Bun.spawn([binaryPath(), "rollout", "cat", "big"], {
      env: { ...process.env, FREECODE_HOME: home.path, NO_COLOR: "1" },
      stdout: "pipe",
      stderr: "pipe",
    });
    const reader = proc.stdout.getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value).startsWith('{"type":"session.started"')).toBe(true);
    await reader.cancel(); // like `| head -1`: the read end closes
    expect(await proc.exited).toBe(141);
    expect(await new Response(proc.stderr).text()).toBe("");
  }, 120_000);

  test("regression: a report written through to stdout whose reader goes away ends quietly too (trace --otlp /dev/stdout | head: an EPIPE stack trace, exit 70)", async () => {
    await using home = await tempHome();
    const lines = Array.from({ length: 4000 }, (_, i) =>
      JSON.stringify({
        type: "function.call",
        tool: "bash",
        callId: `c${i}`,
        args: { command: "x".repeat(200) },
      }),
    );
    expect(runBinary(["rollout", "append", "big"], { home: home.path, stdin: lines.join("\n") }).code).toBe(
      0,
    );
    const proc = Bun.spawn([binaryPath(), "trace", "big", "--otlp", "/dev/stdout"], {
      env: { ...process.env, FREECODE_HOME: home.path, NO_COLOR: "1" },
      stdout: "pipe",
      stderr: "pipe",
    });
    const reader = proc.stdout.getReader();
    await reader.read();
    await reader.cancel();
    expect(await proc.exited).toBe(141);
    expect(await new Response(proc.stderr).text()).toBe("");
  }, 120_000);

  test.skipIf(!existsSync("/dev/full"))(
    "stdout that cannot be written (a full disk): one line on stderr, exit 74",
    async () => {
      await using home = await tempHome();
      expect(runBinary(["rollout", "append", "s"], { home: home.path, stdin: GOOD }).code).toBe(0);
      // More than is gathered before a write (64 KiB): the write fails in the command, and the
      // final flush fails again with the same error (it was said twice).
      const big = Array.from({ length: 400 }, (_, i) =>
        JSON.stringify({ type: "turn.started", turnId: `t${i}-${"x".repeat(300)}` }),
      );
      expect(runBinary(["rollout", "append", "b"], { home: home.path, stdin: big.join("\n") }).code).toBe(0);
      const full = openSync("/dev/full", "w");
      try {
        for (const id of ["s", "b"]) {
          const p = Bun.spawnSync([binaryPath(), "rollout", "cat", id], {
            env: { ...process.env, FREECODE_HOME: home.path, NO_COLOR: "1" },
            stdout: full,
            stderr: "pipe",
          });
          expect([id, p.exitCode, p.stderr.toString()]).toEqual([
            id,
            74,
            "[error] cannot write to standard output: ENOSPC: no space left on device, write\n",
          ]);
        }
      } finally {
        closeSync(full);
      }
    },
    120_000,
  );

  test("end to end with the compiled binary: append, then verify", async () => {
    await using home = await tempHome();
    expect(runBinary(["rollout", "append", "e2e"], { home: home.path, stdin: GOOD }).code).toBe(0);
    const r = runBinary(["rollout", "verify", "e2e", "--json"], { home: home.path });
    expect(parseJson(r)).toMatchObject({ ok: true, events: 3 });
  }, 120_000);
});

test("regression: usage and rollout verify show what a log recorded with its control characters escaped, as trace does", async () => {
  await using home = await tempHome();
  const red = "m\u001b[31mRED";
  const log = [
    { type: "turn.started", turnId: "t0" },
    { type: "model.request", turnId: "t0", provider: "p", model: red },
    { type: "model.response", turnId: "t0", provider: "p", model: red, inputTokens: 5, outputTokens: 5 },
  ];
  const lines = log.map((e) => JSON.stringify(e)).join("\n");
  expect(runCli(["rollout", "append", "ctl"], { home: home.path, stdin: `${lines}\n` }).code).toBe(0);
  const usage = runCli(["usage", "ctl"], { home: home.path });
  expect(usage.stdout + usage.stderr).not.toContain("\u001b");
  expect(usage.stdout).toContain("p/m\\x1b[31mRED");
  const dir = join(home.path, "rollout", "sessions", "v");
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, "events.jsonl"),
    `${JSON.stringify({ type: "x\u001b[2Jy", id: "a", seq: 1, aggregateID: "v", timestamp: 1 })}\n${JSON.stringify({ type: "turn.started", turnId: "q", id: "c", seq: 2, aggregateID: "v\u001b[31m", timestamp: 3 })}\n{"type": "turn.started", "x": "\u0000"\n`,
  );
  const verify = runCli(["rollout", "verify", "v"], { home: home.path });
  expect(verify.code).toBe(1);
  expect(verify.stdout).not.toMatch(/[\u0000\u001b]/);
  expect(verify.stdout).toContain("x\\x1b[2Jy ×1");
  // Messages quote recorded text too (the JSON parser quotes the bad token): escaped there as well.
  const bad = runCli(["rollout", "append", "x"], {
    home: home.path,
    stdin: '{"type":"turn.started"}\u001b[2J\n',
  });
  expect([bad.code, bad.stderr]).toEqual([2, expect.stringContaining("'\\x1b'")]);
  expect(bad.stderr).not.toContain("\u001b");
  const cat = runCli(["rollout", "cat", "v"], { home: home.path });
  expect(cat.stderr).not.toMatch(/[\u0000\u001b]/);
});

test("regression: a log an older version wrote with a negative duration or a fractional count still reads: verify, usage and trace take it", async () => {
  await using home = await tempHome();
  const dir = join(home.path, "rollout", "sessions", "old");
  mkdirSync(dir, { recursive: true });
  const base = { aggregateID: "old", timestamp: 1_700_000_000_000 };
  const lines = [
    { ...base, type: "turn.started", id: "a", seq: 1, turnId: "t" },
    { ...base, type: "model.request", id: "b", seq: 2, turnId: "t", provider: "p", model: "m" },
    {
      ...base,
      type: "model.response",
      id: "c",
      seq: 3,
      turnId: "t",
      provider: "p",
      model: "m",
      inputTokens: 10.5,
      outputTokens: 4,
      duration_ms: -1,
    },
  ];
  writeFileSync(join(dir, "events.jsonl"), `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`);
  expect(runCli(["rollout", "verify", "old"], { home: home.path }).code).toBe(0);
  const usage = parseJson<{ totals: { outputTokens: number } }>(
    runCli(["usage", "old", "--json"], { home: home.path }),
  );
  expect(usage.totals.outputTokens).toBe(4);
  expect(
    parseJson<{ modelSpans: unknown[]; parseErrors: unknown[] }>(
      runCli(["trace", "old", "--json"], { home: home.path }),
    ),
  ).toMatchObject({
    modelSpans: [expect.anything()],
    parseErrors: [],
  });
  // Its OTLP spans never end before they start (one did, by its negative duration).
  const otlp = join(home.path, "spans.json");
  expect(runCli(["trace", "old", "--otlp", otlp], { home: home.path }).code).toBe(0);
  const spans = JSON.parse(readFileSync(otlp, "utf8")).resourceSpans[0].scopeSpans[0].spans as {
    startTimeUnixNano: string;
    endTimeUnixNano: string;
  }[];
  expect(spans.filter((s) => BigInt(s.endTimeUnixNano) < BigInt(s.startTimeUnixNano))).toEqual([]);
});

test("regression: a rollout log that cannot be read is named with its path (exit 74), and store verify lists it as a problem and goes on (it stopped, naming no file)", async () => {
  await using home = await tempHome();
  const h = { home: home.path };
  runCli(["rollout", "append", "ok1"], { ...h, stdin: '{"type":"turn.started","turnId":"a"}\n' });
  mkdirSync(logOf(home.path, "s1"), { recursive: true });
  for (const args of [
    ["rollout", "verify", "s1"],
    ["rollout", "cat", "s1"],
    ["trace", "--list"],
  ]) {
    const r = runCli(args, h);
    expect([args, r.code, r.stderr.trim()]).toEqual([
      args,
      74,
      expect.stringContaining(`${logOf(home.path, "s1")}: is a directory (EISDIR)`),
    ]);
  }
  const v = runCli(["store", "verify", "--json"], h);
  expect(v.code).toBe(1);
  const problems = parseJson<{ problems: { kind: string; sessionId: string; file?: string }[] }>(v).problems;
  expect(problems.map((p) => [p.kind, p.sessionId, p.file])).toEqual([
    ["unreadable", "s1", logOf(home.path, "s1")],
  ]);
});
