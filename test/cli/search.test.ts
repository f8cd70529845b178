/**
 * `freecode search` from the command line: ranked hits with `[…]` markers off a terminal, --json
 * with the engine named, the filters, FTS5 and --scan agreeing, and a query with no words refused;
 * what a command printed (a call's output) in an imported Claude Code session is found.
 */
import { expect, test } from "bun:test";
import { join } from "node:path";
import { CORPUS, parseJson, runCli, tempHome } from "../_helpers.ts";

interface Result {
  engine: string;
  total: number;
  hits: { sessionId: string; kind: string; tool?: string; role?: string; snippet: string }[];
}

test("search: ranked hits, markers, filters, both engines, bad queries", async () => {
  await using home = await tempHome();
  const run = (args: string[], stdin?: string) =>
    runCli([...args, "--store", "sqlite"], { home: home.path, stdin });
  expect(
    run([
      "session",
      "create",
      "--id",
      "a",
      "--project",
      "/work/alpha",
      "--prompt",
      "the tokenizer crashes on emoji",
    ]).code,
  ).toBe(0);
  expect(
    run(["session", "create", "--id", "b", "--project", "/work/beta", "--prompt", "write release notes"])
      .code,
  ).toBe(0);
  const toolCall = {
    id: "m2",
    role: "assistant",
    parts: [{ type: "tool", tool: { name: "bash", args: { command: "grep -r tokenizer src" } } }],
    timestamp: 1_800_000_000_000,
  };
  expect(run(["session", "append", "b"], `${JSON.stringify(toolCall)}\n`).code).toBe(0);

  const plain = run(["search", "tokenizer"]);
  expect(plain.code).toBe(0);
  expect(plain.stdout).toContain("the [tokenizer] crashes on emoji");
  expect(plain.stdout).toContain("(fts5)");

  const all = parseJson<Result>(run(["search", "tokenizer", "--json"]));
  expect(all.engine).toBe("fts5");
  expect(all.total).toBe(3); // a's title and prompt, b's bash call
  const scan = parseJson<Result>(run(["search", "tokenizer", "--json", "--scan"]));
  expect(scan.engine).toBe("scan");
  expect(scan.hits.map((h) => `${h.sessionId}/${h.kind}`)).toEqual(
    all.hits.map((h) => `${h.sessionId}/${h.kind}`),
  );

  const tool = parseJson<Result>(run(["search", "tokenizer", "--tool", "bash", "--json"]));
  expect(tool.hits.map((h) => [h.sessionId, h.kind, h.tool, h.snippet])).toEqual([
    ["b", "tool", "bash", "bash command: grep -r [tokenizer] src"],
  ]);
  expect(parseJson<Result>(run(["search", "tokenizer", "--project", "/work/alpha", "--json"])).total).toBe(2);
  expect(parseJson<Result>(run(["search", "tokenizer", "--since", "2027-01-01", "--json"])).total).toBe(1);
  expect(parseJson<Result>(run(["search", "tokenizer", "--until", "2027-01-01", "--json"])).total).toBe(2);
  expect(run(["search", "nothing-like-this"]).stdout).toBe("no matches\n");
  expect(run(["search", "!!!"]).code).toBe(2);
  expect(run(["search", "x", "--since", "yesterday-ish"]).code).toBe(2);
}, 60_000);

test("search finds what a tool printed: an imported Claude Code session's pytest run", async () => {
  await using home = await tempHome();
  const file = join(CORPUS, "claude", "drmaciver_claude-reliability", "coverage-test-fix.transcript.jsonl");
  expect(runCli(["import", "claude", file], { home: home.path }).code).toBe(0);
  // Only pytest's output says "test session starts": not a prompt, a response or a command.
  for (const scan of [[], ["--scan"]]) {
    const r = parseJson<Result>(
      runCli(["search", "test session starts", "--json", ...scan], { home: home.path }),
    );
    expect(r.hits.map((h) => [h.kind, h.tool])).toEqual([["output", "Bash"]]);
    expect(r.hits[0]!.snippet).toContain("[test] [session] [starts]");
  }
  const text = runCli(["search", "test session starts"], { home: home.path }).stdout;
  expect(text).toContain("turn 1 output of Bash");
  expect(
    parseJson<Result>(
      runCli(["search", "test session starts", "--tool", "Read", "--json"], { home: home.path }),
    ).total,
  ).toBe(0);
}, 60_000);

test("a turn that ended on a provider error says so, and the error is found (a rate limit that ended the session)", async () => {
  await using home = await tempHome();
  const file = join(
    CORPUS,
    "claude",
    "laf-us_idaho-vault",
    "c--Users-loganf-Documents-IDAHO-VAULT",
    "5be6102c-c895-48ac-84b1-8f176ed80112.jsonl",
  );
  expect(runCli(["import", "claude", file], { home: home.path }).code).toBe(0);
  for (const scan of [[], ["--scan"]]) {
    const r = parseJson<Result>(runCli(["search", "hit your limit", "--json", ...scan], { home: home.path }));
    expect(r.hits.map((h) => [h.kind, h.role])).toEqual([["message", "error"]]);
  }
  const id = "claude-5be6102c-c895-48ac-84b1-8f176ed80112";
  const turns = runCli(["session", "show", id, "--turns"], { home: home.path }).stdout;
  expect(turns.trimEnd().split("\n").at(-1)).toBe(
    "  outcome: provider error: rate_limit: You've hit your limit · resets 1am (America/Denver)",
  );
});

test("regression: a session the rollout alone holds shows its turns (search found it, session show --turns said no session)", async () => {
  await using home = await tempHome();
  const events = (
    await Bun.file(join(import.meta.dir, "../../examples/rollouts/fix-login-1/events.jsonl")).text()
  )
    .trim()
    .split("\n")
    .map((l) => {
      const { seq: _s, aggregateID: _a, ...rest } = JSON.parse(l);
      return JSON.stringify(rest);
    })
    .join("\n");
  expect(runCli(["rollout", "append", "rec-1"], { home: home.path, stdin: events }).code).toBe(0);
  const shown = runCli(["session", "show", "rec", "--turns"], { home: home.path });
  expect(shown.code).toBe(0);
  const lines = shown.stdout.split("\n");
  expect(lines[0]).toBe("(rollout only) rec-1 (1 turn; no messages: turns from its rollout log)");
  expect(lines.filter((l) => l.startsWith("  tool:"))).toHaveLength(4);
  const json = parseJson<{ id: string; rolloutOnly: boolean; turns: unknown[] }>(
    runCli(["session", "show", "rec-1", "--turns", "--json"], { home: home.path }),
  );
  expect([json.id, json.rolloutOnly, json.turns.length]).toEqual(["rec-1", true, 1]);
  // Its messages: none; said so, with where to look.
  const plain = runCli(["session", "show", "rec-1"], { home: home.path });
  expect([plain.code, plain.stderr.trim()]).toEqual([
    3,
    "[error] no session rec-1: only its rollout log is stored (`freecode session show rec-1 --turns`, `freecode trace rec-1`)",
  ]);
});
