/** `freecode replay` and `freecode usage` over the fixture log and config.json prices. */
import { describe, expect, test } from "bun:test";
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadReplay } from "../../src/rollout/load.ts";
import { CORPUS, parseJson, ROOT, runCli, tempHome } from "../_helpers.ts";

function setup(home: string) {
  const dir = join(home, "rollout", "sessions", "fixture-session");
  mkdirSync(dir, { recursive: true });
  copyFileSync(join(ROOT, "test/rollout/fixtures/session.jsonl"), join(dir, "events.jsonl"));
}

describe("replay", () => {
  test("--json: turns keyed across the resume, calls with outputs; human output lists them", async () => {
    await using home = await tempHome();
    setup(home.path);
    const printed = runCli(["replay", "fixture-session", "--json", "--max-output", "4"], { home: home.path });
    const r = parseJson<{ turns: { turnKey: string }[]; totalCalls: number }>(printed);
    // Written in pieces, byte for byte what JSON.stringify gives for the library's Replay.
    const file = join(home.path, "rollout", "sessions", "fixture-session", "events.jsonl");
    const replay = await loadReplay({ file, sessionId: "fixture-session" }, { maxOutputChars: 4 });
    expect(printed.stdout).toBe(`${JSON.stringify(replay, null, 2)}\n`);
    expect(r.turns.map((t) => t.turnKey)).toEqual(["turn-0#1", "turn-1#1", "turn-0#2"]);
    expect(r.totalCalls).toBe(6);
    const text = runCli(["replay", "fixture-session"], { home: home.path }).stdout;
    expect(text).toContain("✗ Bash");
    expect(text).toContain("⊘ Write denied by mode: plan mode forbids writes");
    expect(text).toContain("unreadable line 29");
  });
  test("regression: a finished call whose output records no failed flag is marked unknown (?), not succeeded (✓)", async () => {
    await using home = await tempHome();
    const events = [
      { type: "function.call", tool: "Bash", callId: "a" },
      { type: "function.output", tool: "Bash", callId: "a", output: "?" },
      { type: "function.call", tool: "Bash", callId: "b" },
      { type: "function.output", tool: "Bash", callId: "b", output: "ok", failed: false },
    ];
    const stdin = `${events.map((e) => JSON.stringify(e)).join("\n")}\n`;
    expect(runCli(["rollout", "append", "s"], { home: home.path, stdin }).code).toBe(0);
    const text = runCli(["replay", "s"], { home: home.path }).stdout;
    expect(text).toContain("  ? Bash({})");
    expect(text).toContain("  ✓ Bash({})");
  });
});

describe("usage", () => {
  test("regression: a model id longer than the column widens it, so every row's numbers stay under their headings", async () => {
    await using home = await tempHome();
    const model = "anthropic.claude-sonnet-in-a-very-long-deployment-name";
    const events = [
      { type: "model.request", turnId: "t", provider: "bedrock", model },
      {
        type: "model.response",
        turnId: "t",
        provider: "bedrock",
        model,
        inputTokens: 1000,
        outputTokens: 100,
      },
      { type: "model.request", turnId: "t", provider: "openai", model: "gpt-4o" },
      {
        type: "model.response",
        turnId: "t",
        provider: "openai",
        model: "gpt-4o",
        inputTokens: 10,
        outputTokens: 1,
      },
    ];
    const stdin = `${events.map((e) => JSON.stringify(e)).join("\n")}\n`;
    expect(runCli(["rollout", "append", "s"], { home: home.path, stdin }).code).toBe(0);
    const lines = runCli(["usage", "s"], { home: home.path }).stdout.trimEnd().split("\n");
    const callsEnd = lines[0]!.indexOf("CALLS") + "CALLS".length;
    expect(lines.slice(1, 4).map((l) => l.slice(callsEnd - 1, callsEnd))).toEqual(["1", "1", "2"]);
    expect(lines[1]).toContain(`bedrock/${model}`);
  });

  test("unpriced models say cost unknown, never $0; prices from config.json apply by glob", async () => {
    await using home = await tempHome();
    setup(home.path);
    const before = parseJson<{ totals: { costUsd: number | null } }>(
      runCli(["usage", "--json"], { home: home.path }),
    );
    expect(before.totals.costUsd).toBeNull();
    expect(runCli(["usage"], { home: home.path }).stdout).toContain("cost unknown");
    writeFileSync(
      join(home.path, "config.json"),
      JSON.stringify({ prices: { "claude-*": { input: 3, output: 15 } } }),
    );
    const after = parseJson<{ models: { model: string; costUsd: number | null }[] }>(
      runCli(["usage", "fixture-session", "--json"], { home: home.path }),
    );
    const claude = after.models.find((m) => m.model === "claude-sonnet-4")!;
    expect(claude.costUsd).toBeCloseTo((2500 * 3 + 500 * 15 + 5000 * 3 + 100 * 3) / 1e6, 10);
    expect(after.models.find((m) => m.model === "gpt-5")!.costUsd).toBeNull();
  });
});

describe("usage: costs the agent recorded", () => {
  const response = (model: string, costUsd?: number) =>
    JSON.stringify({
      type: "model.response",
      turnId: "t",
      provider: "opencode",
      model,
      inputTokens: 1_000_000,
      outputTokens: 0,
      ...(costUsd === undefined ? {} : { costUsd }),
    });

  test("used for a model with no price when every response recorded one; prices win; a gap is unknown", async () => {
    await using home = await tempHome();
    const log = [response("kimi", 0.25), response("kimi", 0.5), response("glm", 0.1), response("glm")];
    expect(runCli(["rollout", "append", "oc"], { home: home.path, stdin: `${log.join("\n")}\n` }).code).toBe(
      0,
    );
    type Out = {
      models: { model: string; costUsd: number | null; costFrom?: string; recordedCostUsd: number | null }[];
      totals: { costUsd: number | null; unpricedModels: string[] };
    };
    const usage = () => parseJson<Out>(runCli(["usage", "oc", "--json"], { home: home.path }));
    const before = usage();
    expect(before.models.map((m) => [m.model, m.costUsd, m.costFrom, m.recordedCostUsd])).toEqual([
      ["kimi", 0.75, "recorded", 0.75],
      ["glm", null, undefined, null],
    ]);
    expect(before.totals).toMatchObject({ costUsd: 0.75, unpricedModels: ["glm"] });
    const text = runCli(["usage", "oc"], { home: home.path }).stdout;
    expect(text).toMatch(/opencode\/kimi .* \$0\.7500 \(recorded\)/);
    expect(text).toMatch(/opencode\/glm .* cost unknown/);
    // The total covers kimi only, and says so in the table; failed requests have their column.
    expect(text).toMatch(/total \(1 session\) .* \$0\.7500 \(partial\)/);
    expect(text.split("\n")[0]).toMatch(/CALLS ERRORS/);
    // A configured price is what the user pays: it wins over what the agent recorded.
    writeFileSync(
      join(home.path, "config.json"),
      JSON.stringify({ prices: { kimi: { input: 2, output: 8 } } }),
    );
    const priced = usage().models.find((m) => m.model === "kimi")!;
    expect([priced.costUsd, priced.costFrom, priced.recordedCostUsd]).toEqual([4, "prices", 0.75]);
    // Over all sessions: one whose only request for the model failed, and a fork whose one
    // response is a copy, cost nothing and leave the recorded cost standing (diff review 1).
    writeFileSync(join(home.path, "config.json"), "{}");
    const request = '{"type":"model.request","turnId":"t","provider":"opencode","model":"kimi"}';
    const failed =
      '{"type":"model.error","turnId":"t","provider":"opencode","model":"kimi","kind":"provider"}';
    const paid = JSON.stringify({ ...JSON.parse(response("kimi", 0.5)), responseId: "r9" });
    for (const [id, lines] of [
      ["failed", [request, failed]],
      ["parent", [request, paid]],
      ["fork", [request, paid]],
    ] as const)
      expect(
        runCli(["rollout", "append", id], { home: home.path, stdin: `${lines.join("\n")}\n` }).code,
      ).toBe(0);
    const all = parseJson<Out>(runCli(["usage", "--json"], { home: home.path }));
    expect(all.models.find((m) => m.model === "kimi")).toMatchObject({
      costUsd: 1.25,
      costFrom: "recorded",
      recordedCostUsd: 1.25,
    });
    // A negative cost is not one: the event is refused.
    const bad = runCli(["rollout", "append", "oc"], { home: home.path, stdin: `${response("kimi", -1)}\n` });
    expect([bad.code, bad.stderr]).toEqual([2, expect.stringContaining("(field costUsd)")]);
  });
});

test("regression: a recorded cost of 0 for a response that used tokens is unknown, whoever wrote it: usage and trace say so", async () => {
  await using home = await tempHome();
  const response = (costUsd: number, inputTokens: number) =>
    JSON.stringify({
      type: "model.response",
      turnId: "t",
      provider: "p",
      model: "m",
      inputTokens,
      outputTokens: 0,
      costUsd,
    });
  const log = [response(0, 1000), response(0.5, 10)].join("\n");
  expect(runCli(["rollout", "append", "zero"], { home: home.path, stdin: `${log}\n` }).code).toBe(0);
  const usage = parseJson<{ models: { costUsd: number | null; recordedCostUsd: number | null }[] }>(
    runCli(["usage", "zero", "--json"], { home: home.path }),
  );
  expect(usage.models.map((m) => [m.costUsd, m.recordedCostUsd])).toEqual([[null, null]]);
  expect(runCli(["usage", "zero"], { home: home.path }).stdout).toMatch(/p\/m .* cost unknown/);
  const trace = parseJson<{ modelSpans: { costUsd?: number }[] }>(
    runCli(["trace", "zero", "--json"], { home: home.path }),
  );
  expect(trace.modelSpans.map((s) => s.costUsd ?? null)).toEqual([null, 0.5]);
  // A response of no tokens that recorded 0 did cost nothing.
  const free = JSON.stringify({ type: "model.response", turnId: "t", provider: "p", model: "m", costUsd: 0 });
  expect(runCli(["rollout", "append", "free"], { home: home.path, stdin: `${free}\n` }).code).toBe(0);
  const none = parseJson<{ models: { costUsd: number | null }[] }>(
    runCli(["usage", "free", "--json"], { home: home.path }),
  );
  expect(none.models.map((m) => m.costUsd)).toEqual([0]);
});

test("a response of no tokens needs no recorded cost: usage and eval's cost check agree (final review 9)", async () => {
  await using home = await tempHome();
  const lines = [
    {
      type: "model.response",
      turnId: "t",
      provider: "p",
      model: "m",
      inputTokens: 1000,
      outputTokens: 100,
      costUsd: 0.5,
    },
    { type: "model.response", turnId: "t", provider: "p", model: "m", inputTokens: 0, outputTokens: 0 },
  ];
  const stdin = `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`;
  expect(runCli(["rollout", "append", "mix"], { home: home.path, stdin }).code).toBe(0);
  const u = parseJson<{ models: { costUsd: number | null; costFrom?: string }[] }>(
    runCli(["usage", "mix", "--json"], { home: home.path }),
  );
  expect(u.models.map((m) => [m.costUsd, m.costFrom])).toEqual([[0.5, "recorded"]]);
  const cases = join(home.path, "cost.yaml");
  writeFileSync(cases, "id: budget\nsessions: [mix]\nexpect:\n  - cost: {maxUsd: 0.4}\n");
  const ev = runCli(["eval", cases, "--json", "--include-running"], { home: home.path });
  expect(
    parseJson<{ cases: { sessions: { checks: { message: string }[] }[] }[] }>(ev).cases[0]!.sessions[0]!
      .checks[0]!.message,
  ).toContain("$0.5000");
});

describe("usage over imported forks", () => {
  // A Claude Code fork (`--fork-session`, or an old `--resume`) starts a new session file with the
  // parent's entries copied in, message ids kept: those responses were paid for once.
  const ORIGINAL = join(CORPUS, "claude/drmaciver_claude-reliability/coverage-test-fix.transcript.jsonl");
  const PARENT = "c64cc478-3430-40fe-8e9c-4ee9986e9754";
  const FORK = "c64cc478-3430-40fe-8e9c-0000000f0f0f";

  test("a response copied into a fork counts once over all sessions, and fully in the fork alone", async () => {
    await using home = await tempHome();
    const projects = join(home.path, "claude-projects", "-tmp-tmpw6sk2trg");
    mkdirSync(projects, { recursive: true });
    const text = readFileSync(ORIGINAL, "utf8");
    writeFileSync(join(projects, `${PARENT}.jsonl`), text);
    const lines = text
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l));
    const last = lines.findLast((e) => e.type === "assistant");
    const more = {
      ...last,
      uuid: "f0f0f0f0-0000-4000-8000-000000000001",
      parentUuid: last.uuid,
      timestamp: "2026-01-21T07:00:00.000Z",
      message: {
        ...last.message,
        id: "msg_fork_only_response",
        content: [{ type: "text", text: "one more answer, in the fork only" }],
        usage: {
          input_tokens: 7,
          output_tokens: 11,
          cache_read_input_tokens: 0,
          cache_creation_input_tokens: 0,
        },
      },
    };
    writeFileSync(
      join(projects, `${FORK}.jsonl`),
      `${text.replaceAll(PARENT, FORK).trimEnd()}\n${JSON.stringify({ ...more, sessionId: FORK })}\n`,
    );
    const imp = runCli(["import", "claude", join(home.path, "claude-projects")], { home: home.path });
    expect(imp.code, imp.stderr).toBe(0);

    type U = {
      copiedResponses: number;
      totals: { responses: number; requests: number; outputTokens: number; inputTokens: number };
    };
    const one = (id: string) => parseJson<U>(runCli(["usage", id, "--json"], { home: home.path }));
    const parent = one(`claude-${PARENT}`);
    const fork = one(`claude-${FORK}`);
    // An independent count: the distinct message ids with usage in the original file.
    const responses = new Set(
      lines.filter((e) => e.type === "assistant" && e.message?.usage).map((e) => e.message.id),
    );
    expect(parent.totals.responses).toBe(responses.size);
    expect(fork.totals.responses).toBe(responses.size + 1);
    expect(fork.totals.outputTokens).toBe(parent.totals.outputTokens + 11);
    expect(fork.copiedResponses).toBe(0);

    const all = parseJson<U & { sessions: { sessionId: string; copiedResponses: number }[] }>(
      runCli(["usage", "--json"], { home: home.path }),
    );
    expect(all.totals.responses).toBe(responses.size + 1);
    expect(all.totals.requests).toBe(parent.totals.requests + 1);
    expect(all.totals.outputTokens).toBe(parent.totals.outputTokens + 11);
    expect(all.totals.inputTokens).toBe(parent.totals.inputTokens + 7);
    expect(all.copiedResponses).toBe(responses.size);
    // Credited to the parent, which went quiet before the fork did.
    expect(all.sessions.map((s) => [s.sessionId, s.copiedResponses])).toEqual([
      [`claude-${FORK}`, responses.size],
      [`claude-${PARENT}`, 0],
    ]);
    expect(runCli(["usage"], { home: home.path }).stdout).toContain(
      `(${responses.size} responses found in more than one session — a fork's copied history — counted once)`,
    );
  }, 30_000);
});

test("a response id repeated inside one session, or by an unrelated session with other tokens, is never a copy", async () => {
  await using home = await tempHome();
  // A local provider's short ids repeat (Ollama's `chatcmpl-7`).
  const events = (input: number) =>
    [
      { type: "turn.started", turnId: "t1" },
      { type: "model.request", turnId: "t1", provider: "ollama", model: "llama3" },
      {
        type: "model.response",
        turnId: "t1",
        provider: "ollama",
        model: "llama3",
        responseId: "chatcmpl-7",
        inputTokens: input,
        outputTokens: 10,
      },
    ]
      .map((e) => JSON.stringify(e))
      .join("\n");
  for (const [id, input] of [
    ["sessA", 1000],
    ["sessA", 2000],
    ["sessB", 500],
  ] as const)
    expect(runCli(["rollout", "append", id], { home: home.path, stdin: `${events(input)}\n` }).code).toBe(0);
  const all = parseJson<{
    copiedResponses: number;
    totals: { responses: number; requests: number; inputTokens: number };
  }>(runCli(["usage", "--json"], { home: home.path }));
  expect(all.totals).toMatchObject({ responses: 3, requests: 3, inputTokens: 3500 });
  expect(all.copiedResponses).toBe(0);
});

test("an API error copied into a fork counts once over all sessions, its request too", async () => {
  await using home = await tempHome();
  const dir = join(home.path, "claude-projects", "p");
  mkdirSync(dir, { recursive: true });
  const id = "5be6102c-c895-48ac-84b1-8f176ed80112";
  const fork = "5be6102c-c895-48ac-84b1-00000000f0f0";
  const text = readFileSync(
    join(CORPUS, "claude/laf-us_idaho-vault/c--Users-loganf-Documents-IDAHO-VAULT", `${id}.jsonl`),
    "utf8",
  );
  writeFileSync(join(dir, `${id}.jsonl`), text);
  writeFileSync(join(dir, `${fork}.jsonl`), text.replaceAll(id, fork));
  expect(runCli(["import", "claude", join(home.path, "claude-projects")], { home: home.path }).code).toBe(0);
  type U = { copiedErrors: number; totals: { requests: number; errors: number; responses: number } };
  const one = parseJson<U>(runCli(["usage", `claude-${id}`, "--json"], { home: home.path }));
  expect(one.totals.errors).toBe(1);
  const all = parseJson<U>(runCli(["usage", "--json"], { home: home.path }));
  expect(all.totals).toEqual(
    expect.objectContaining({ requests: one.totals.requests, errors: 1, responses: one.totals.responses }),
  );
  expect(all.copiedErrors).toBe(1);
});
