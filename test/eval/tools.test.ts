import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { expectBashMatches, forbidBashMatches, isShellTool } from "../../src/eval/assertions/bash.ts";
import {
  expectFirstToolIn,
  expectInArgs,
  expectNoTools,
  expectParallelTools,
  expectTool,
  forbidTools,
  toolCallCount,
} from "../../src/eval/assertions/tools.ts";
import { runEval } from "../../src/eval/runner.ts";
import type { RolloutEvent } from "../../src/rollout/events.ts";
import { argumentSpec, DEFAULT_CHANGED_FILE_TOOLS } from "../../src/rollout/folds/changed-files.ts";
import { buildTrace } from "../../src/rollout/folds/trace.ts";
import { CORPUS, tempHome } from "../_helpers.ts";
import { importOne } from "../import/_corpus.ts";
import { trace } from "./_trace.ts";

describe("expectTool", () => {
  test("given one read call, then expectTool read passes and points at it", () => {
    const r = expectTool(trace({ tools: ["read"] }), "read");
    expect(r.verdict).toBe("pass");
    expect(r.callIndex).toBe(0);
  });
  test("given no calls, then expectTool fails and lists what ran", () => {
    const r = expectTool(trace({ tools: ["bash"] }), "edit");
    expect(r.verdict).toBe("fail");
    expect(r.message).toBe("edit: expected at least 1 call, got 0 (tools that ran: bash)");
  });
  test("duplicates count by position: three identical reads are three", () => {
    const t = trace({
      tools: [
        ["read", { p: "a" }],
        ["read", { p: "a" }],
        ["read", { p: "a" }],
      ],
    });
    expect(expectTool(t, { name: "read", count: 3 }).verdict).toBe("pass");
    expect(expectTool(t, { name: "read", count: { max: 2 } }).verdict).toBe("fail");
    expect(expectTool(t, { name: "read", args: { p: "a" }, count: 3 }).verdict).toBe("pass");
  });
  test("globs match names", () => {
    expect(expectTool(trace({ tools: ["mcp__gh__search"] }), "mcp__*").verdict).toBe("pass");
  });
  test("args mismatch explains the closest call with differing paths", () => {
    const t = trace({
      tools: [
        ["edit", { path: "src/logout.ts", mode: "x" }],
        ["edit", { path: "src/login.ts", mode: "x" }],
      ],
    });
    const r = expectTool(t, { name: "edit", args: { path: "login.ts", mode: "w" } });
    expect(r.verdict).toBe("fail");
    expect(r.callIndex).toBe(1);
    expect(r.diffs).toEqual([{ path: "mode", expected: 'contains "w"', actual: '"x"' }]);
    expect(r.message).toContain("closest is call #1 (seq");
  });
  test("missing args: a call recorded without args never matches an args spec", () => {
    const r = expectInArgs(trace({ tools: ["edit"] }), "edit", { path: "a" });
    expect(r.verdict).toBe("fail");
    expect(r.message).toBe("no recorded args for edit (1 call)");
  });
  test("count 0 with nothing called passes (empty against empty)", () => {
    expect(expectTool(trace(), { name: "edit", count: 0 }).verdict).toBe("pass");
  });
});

describe("forbidTools / expectNoTools / first / parallel / count", () => {
  test("forbidTools fails at the first forbidden call that ran", () => {
    const r = forbidTools(trace({ tools: ["read", "bash"] }), ["ba*"]);
    expect(r.verdict).toBe("fail");
    expect(r.callIndex).toBe(1);
  });
  test("a denied attempt is not a run unless includeDenied", () => {
    const t = trace({ denied: [{ tool: "bash", source: "permission" }] });
    expect(forbidTools(t, ["bash"]).verdict).toBe("pass");
    expect(forbidTools(t, ["bash"], { includeDenied: true }).verdict).toBe("fail");
    expect(expectNoTools(t).verdict).toBe("fail");
    expect(expectNoTools(trace()).verdict).toBe("pass");
  });
  test("regression: a call started with no output recorded (still running, or the agent died mid-call) is a run to forbidTools, forbidBashMatches and expectNoTools (a started `rm -rf /` passed all three)", () => {
    const t = trace({
      pendingCalls: [{ tool: "bash", callId: "c1", seq: 5, at: 1000, args: { command: "rm -rf /" } }],
    });
    expect(forbidTools(t, ["bash"]).message).toBe(
      "forbidden tool bash was started at seq 5 (no output recorded)",
    );
    expect(forbidBashMatches(t, ["rm -rf"]).verdict).toBe("fail");
    expect(forbidBashMatches(t, ["git push"]).verdict).toBe("pass");
    expect(expectNoTools(t).message).toBe(
      "expected no tool call, but bash was started at seq 5 (no output recorded)",
    );
    expect(forbidTools(t, ["read"]).verdict).toBe("pass");
    // Refused by a denial naming no id: the fold withdraws the call, which never started.
    const log = (...events: Record<string, unknown>[]) =>
      buildTrace(
        "s",
        events.map((e, i) => ({ id: `e${i + 1}`, seq: i + 1, timestamp: 1000 + i, ...e }) as RolloutEvent),
      );
    const rm = { type: "function.call", tool: "bash", args: { command: "rm -rf /" } };
    const refused = log(rm, { type: "function.denied", tool: "bash", source: "user" });
    expect(refused.pendingCalls).toEqual([]);
    expect(forbidTools(refused, ["bash"]).verdict).toBe("pass");
    expect(forbidBashMatches(refused, ["rm -rf"]).verdict).toBe("pass");
    // The same arguments with their keys in another order are the same arguments; other values are not.
    const reordered = (command: string) =>
      log(
        { type: "function.call", tool: "bash", args: { command: "ls", timeout: 5, env: { A: "1", B: "2" } } },
        {
          type: "function.denied",
          tool: "bash",
          source: "permission",
          args: { env: { B: "2", A: "1" }, timeout: 5, command },
        },
      );
    expect(forbidTools(reordered("ls"), ["bash"]).verdict).toBe("pass");
    expect(forbidTools(reordered("ls -a"), ["bash"]).verdict).toBe("fail");
  });
  test("expectFirstToolIn: empty trajectory fails, wrong first tool names it", () => {
    expect(expectFirstToolIn(trace(), ["read"]).verdict).toBe("fail");
    const r = expectFirstToolIn(trace({ tools: ["bash", "read"] }), ["read", "grep"]);
    expect(r.message).toContain("got bash");
    expect(expectFirstToolIn(trace({ tools: ["Read"] }), ["read"]).verdict).toBe("pass");
  });
  test("regression: expectParallelTools counts the calls after a response's request when the response records no toolCalls (two calls made at once counted as none)", () => {
    const at = (...es: Record<string, unknown>[]) =>
      buildTrace(
        "s",
        es.map((e, i) => ({ id: `e${i + 1}`, seq: i + 1, timestamp: 1000 + i, ...e }) as RolloutEvent),
      );
    const request = { type: "model.request", turnId: "t", provider: "a", model: "m" };
    const response = { type: "model.response", turnId: "t", provider: "a", model: "m" };
    const call = (id: string, tool: string) => ({
      type: "function.call",
      turnId: "t",
      tool,
      callId: id,
      args: {},
    });
    const output = (id: string, tool: string) => ({
      type: "function.output",
      turnId: "t",
      tool,
      callId: id,
      output: "ok",
    });
    const parallel = at(
      request,
      response,
      call("c1", "read"),
      call("c2", "grep"),
      output("c1", "read"),
      output("c2", "grep"),
    );
    expect(expectParallelTools(parallel).verdict).toBe("pass");
    // One call a step, each after its own request: not parallel.
    const steps = at(
      request,
      response,
      call("c1", "read"),
      output("c1", "read"),
      request,
      response,
      call("c2", "grep"),
      output("c2", "grep"),
    );
    expect(expectParallelTools(steps).message).toBe(
      "expected a response with at least 2 tool calls, the most was 1",
    );
  });
  test("expectParallelTools reads the model responses' tool calls", () => {
    expect(expectParallelTools(trace({ models: [{ toolCalls: ["read"] }] })).verdict).toBe("fail");
    expect(expectParallelTools(trace({ models: [{ toolCalls: ["read", "grep"] }] })).verdict).toBe("pass");
    expect(expectParallelTools(trace({ models: [{ toolCalls: ["read", "grep"] }] }), 3).verdict).toBe("fail");
  });
  test("toolCallCount bounds the number of calls", () => {
    expect(toolCallCount(trace({ tools: ["a", "b"] }), { max: 1 }).callIndex).toBe(1);
    expect(toolCallCount(trace(), { max: 1 }).verdict).toBe("pass");
  });
});

describe("shell commands", () => {
  const t = trace({
    tools: [
      ["bash", { command: "npm test" }],
      ["exec_command", { cmd: ["git", "push", "-f"] }],
    ],
  });
  test("expectBashMatches needs every pattern to match some command", () => {
    expect(expectBashMatches(t, ["NPM TEST", "git push"]).verdict).toBe("pass");
    expect(expectBashMatches(t, ["cargo"]).verdict).toBe("fail");
    expect(expectBashMatches(trace(), ["x"]).message).toContain("no shell command ran");
  });
  test("forbidBashMatches names the command and its call", () => {
    const r = forbidBashMatches(t, ["push\\s+-f"]);
    expect(r.verdict).toBe("fail");
    expect(r.callIndex).toBe(1);
    expect(forbidBashMatches(t, ["rm -rf"]).verdict).toBe("pass");
  });
  test("every agent's shell tool counts, with its command from a string or an argv array", () => {
    const calls: [string, unknown][] = [
      ["Bash", { command: "npm test" }],
      ["shell", { command: ["bash", "-lc", "npm test"] }],
      ["shell_command", { command: "npm test", workdir: "/w" }],
      ["local_shell", { type: "exec", command: ["npm", "test"] }],
      ["exec_command", { cmd: "npm test" }],
      ["run_shell_command", { command: "npm test", directory: "." }],
    ];
    for (const call of calls) {
      expect([call[0], expectBashMatches(trace({ tools: [call] }), ["npm test"]).verdict]).toEqual([
        call[0],
        "pass",
      ]);
    }
  });
  test("a tool changed-files reads shell patches from is a shell tool here too (the lists agree)", () => {
    const shells = Object.entries(DEFAULT_CHANGED_FILE_TOOLS)
      .filter(([, specs]) => specs.some((s) => ["command", "cmd"].includes(argumentSpec(s).name)))
      .map(([tool]) => tool);
    expect(shells.length).toBeGreaterThan(0);
    expect(shells.filter((t) => !isShellTool(t))).toEqual([]);
  });
  test("regression: Codex's shell_command was not a shell tool (imported corpus rollout)", async () => {
    await using home = await tempHome();
    const path = join(
      CORPUS,
      "codex",
      "rollout-2026-04-10T09-55-11-019d781a-be34-7041-abb1-577f9360b907.jsonl",
    );
    const { adapter } = await importOne(home.path, "codex", path);
    const file = join(home.path, "shell.cases.json");
    const body = (id: string, exp: object) => ({ id, sessions: "all", expect: [exp] });
    writeFileSync(
      file,
      JSON.stringify([
        body("ran", { expectBashMatches: ["git status --short"] }),
        body("forbidden", { forbidBashMatches: ["git status"] }),
      ]),
    );
    const r = await runEval({ cases: [file], store: { adapter, home: home.path }, workers: 1 });
    await adapter.close();
    const byId = Object.fromEntries(r.cases.map((c) => [c.id, c]));
    expect(byId.ran!.verdict).toBe("pass");
    expect(byId.forbidden!.verdict).toBe("fail");
    expect(byId.forbidden!.sessions[0]!.checks[0]!.message).toMatch(
      /^forbidden shell command "git status --short" matched \/git status\/i at call #\d+/,
    );
  });
});
