import { describe, expect, test } from "bun:test";
import {
  compactions,
  duration,
  modelErrors,
  noHung,
  noInFlight,
  noStalls,
  percentile,
  ttft,
} from "../../src/eval/assertions/health.ts";
import { changedFiles, cost, maxModelCalls, tokens, turns } from "../../src/eval/assertions/outcome.ts";
import { trace } from "./_trace.ts";

describe("health", () => {
  test("hung and in-flight requests", () => {
    const hung = trace({ models: [{ status: "hung", duration_ms: 400_000, seq: 7 }], hung: true });
    expect(noHung(hung).verdict).toBe("fail");
    expect(noHung(hung).seq).toBe(7);
    expect(noHung(hung).message).toContain("got no response for 400 s");
    expect(noInFlight(hung).verdict).toBe("fail");
    const running = trace({ models: [{ status: "in_flight" }], inFlight: true });
    expect(noHung(running).verdict).toBe("pass");
    expect(noInFlight(running).message).toContain("still open at the end of the log");
    const pending = trace({ pendingCalls: [{ tool: "bash", seq: 3, at: 1 }] });
    expect(noInFlight(pending).message).toBe("1 tool call without output (first: bash at seq 3)");
    expect(noInFlight(trace({ models: [{}] })).verdict).toBe("pass");
  });
  test("stall before the first token", () => {
    expect(noStalls(trace({ models: [{ stalledBeforeFirstToken: true, seq: 4 }] })).seq).toBe(4);
  });
  test("ttft per call and p95; p95 over nothing cannot be evaluated", () => {
    const t = trace({ models: [{ ttft_ms: 100 }, { ttft_ms: 900, seq: 3 }, {}] });
    expect(ttft(t, { max: 1000 }).verdict).toBe("pass");
    const r = ttft(t, { max: 500 });
    expect(r.verdict).toBe("fail");
    expect(r.seq).toBe(3);
    expect(ttft(t, { p95: 500 }).verdict).toBe("fail");
    expect(ttft(trace(), { p95: 500 }).verdict).toBe("error");
    expect(ttft(trace(), { max: 500 }).verdict).toBe("pass");
    expect(percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 100], 95)).toBe(19);
  });
  test("durations of tools and of the session", () => {
    const t = trace({ tools: [{ tool: "bash", duration_ms: 5000 }], wall_ms: 60_000 });
    expect(duration(t, { of: "tool", tool: "bash", max: 1000 }).verdict).toBe("fail");
    expect(duration(t, { of: "session", max: 30_000 }).message).toContain("60000 ms > max 30000 ms");
  });
  test("regression: a tool call with no output counts with its age so far (a `npm test` left running an hour passed a 30 s bound)", () => {
    const t = trace({
      tools: [{ tool: "bash", duration_ms: 10 }],
      pendingCalls: [{ tool: "bash", seq: 9, at: 1_000, args: { command: "npm test" } }],
      asOf: 3_601_000,
    });
    const r = duration(t, { of: "tool", tool: "bash", max: 30_000 });
    expect([r.verdict, r.seq]).toEqual(["fail", 9]);
    expect(r.message).toContain("3600000");
    expect(duration(t, { of: "tool", tool: "read", max: 30_000 }).verdict).toBe("pass");
  });
  test("model errors by kind", () => {
    const t = trace({
      models: [
        { status: "error", errorKind: "abort" },
        { status: "error", errorKind: "stall", error: "idle" },
      ],
    });
    expect(modelErrors(t, { kind: "provider" }).verdict).toBe("pass");
    expect(modelErrors(t, { kind: ["stall"] }).message).toContain("stall at seq");
    expect(modelErrors(t, { max: 2 }).verdict).toBe("pass");
    expect(modelErrors(t).verdict).toBe("fail");
  });
  test("regression: model errors of some kinds are counted in plain words (it read 0 model error (provider)s)", () => {
    const t = trace({
      models: [
        { status: "error", errorKind: "stall" },
        { status: "error", errorKind: "stall" },
      ],
    });
    expect(modelErrors(t, { kind: "provider" }).message).toBe("0 model errors (provider) (at most 0)");
    expect(modelErrors(t, { kind: ["stall", "abort"], max: 2 }).message).toBe(
      "2 model errors (stall|abort) (at most 2)",
    );
    expect(modelErrors(t, { kind: "stall", max: 1 }).message).toStartWith(
      "2 model errors (stall), at most 1 allowed; stall at seq",
    );
  });
  test("compactions min/max", () => {
    const t = trace({ compactions: [{ seq: 3, at: 1, beforeTokens: 100, afterTokens: 10 }] });
    expect(compactions(t).verdict).toBe("pass");
    expect(compactions(trace()).verdict).toBe("fail");
    expect(compactions(t, { max: 0 }).seq).toBe(3);
  });
});

describe("outcome", () => {
  const t = {
    ...trace({
      changedFiles: ["/w/app/src/login.ts", "/w/app/README.md"],
      inputTokens: 1000,
      outputTokens: 200,
    }),
    projectPath: "/w/app",
  };
  test("changedFiles include / exclude / only", () => {
    expect(changedFiles(t, { include: ["src/login.ts"] }).verdict).toBe("pass");
    expect(changedFiles(t, { include: ["src/logout.ts"] }).message).toContain(
      "no changed file matches src/logout.ts",
    );
    expect(changedFiles(t, { exclude: ["*.md"] }).message).toBe(
      "changed file /w/app/README.md matches excluded *.md",
    );
    expect(changedFiles(t, { only: ["src/**"] }).verdict).toBe("fail");
    expect(changedFiles(trace(), { include: [] }).verdict).toBe("pass");
    // A write started with no output recorded is held to only/exclude (forbidTools calls it run).
    const started = trace({
      projectPath: "/app",
      pendingCalls: [{ tool: "Write", callId: "c1", seq: 3, at: 1000, paths: ["/etc/passwd"] }],
    });
    expect(changedFiles(started, { only: ["src/**"] }).message).toBe(
      "file /etc/passwd (written by a call with no output recorded) is outside the project /app (only: src/**)",
    );
    expect(changedFiles(started, { include: ["/etc/passwd"] }).verdict).toBe("fail");
  });
  test("regression: the redirect advisor's tokens count in token budgets, and leave the cost unpriced, as usage books them (a 55k-token advisor passed a 4k budget and a cost budget)", () => {
    const advised = trace({
      models: [{ model: "claude-x", inputTokens: 3000, outputTokens: 300 }],
      inputTokens: 3000,
      outputTokens: 300,
      redirectTokens: { input: 50_000, output: 5_000 },
    });
    expect(tokens(advised, { maxTotal: 4000 }).message).toBe(
      "total tokens 58300 (3000 uncached, 0 cache read, 0 cache write, 50000 redirect advisor, 5300 output) > budget 4000",
    );
    expect(tokens(advised, { maxTotal: 4000 }).verdict).toBe("fail");
    expect(tokens(advised, { maxTotal: 60_000 }).verdict).toBe("pass");
    const c = cost(advised, { maxUsd: 1 }, { "claude-*": { input: 3, output: 15 } });
    expect([c.verdict, c.message]).toEqual([
      "error",
      'no price for model (redirect advisor) (add it to config.json "prices" or the case\'s "prices")',
    ]);
  });
  test("token and cost budgets; an unpriced model cannot be evaluated", () => {
    expect(tokens(t, { maxTotal: 1200 }).verdict).toBe("pass");
    expect(tokens(t, { maxOutput: 100 }).message).toBe("output tokens 200 > budget 100");
    // Every budget exceeded is said (a failing maxTotal hid behind a failing maxInput).
    const both = tokens(t, { maxInput: 1, maxOutput: 10_000, maxTotal: 2 });
    expect(both.message).toMatch(/^input tokens \d+ .*> budget 1; total tokens \d+ .*> budget 2$/);
    expect(both.expected).toBe("≤ 1; ≤ 2");
    const priced = trace({ models: [{ model: "claude-x", inputTokens: 1_000_000, outputTokens: 100_000 }] });
    expect(cost(priced, { maxUsd: 5 }, { "claude-*": { input: 3, output: 15 } }).message).toBe(
      "cost $4.5000 within $5",
    );
    expect(cost(priced, { maxUsd: 4 }, { "claude-*": { input: 3, output: 15 } }).verdict).toBe("fail");
    // A cost exactly at its budget passes, though its sum is off in the last bits (0.17550000000000002).
    const exact = trace({
      models: [
        { model: "claude-x", inputTokens: 2000 },
        { model: "claude-x", inputTokens: 56500 },
      ],
    });
    expect(cost(exact, { maxUsd: 0.1755 }, { "claude-*": { input: 3, output: 15 } }).verdict).toBe("pass");
    // As many decimals as put the cost on its side of the budget (it read `$0.0054 > budget $0.00542`).
    const near = trace({ models: [{ model: "claude-x", inputTokens: 1810 }] });
    expect(cost(near, { maxUsd: 0.00542 }, { "claude-*": { input: 3, output: 15 } }).message).toBe(
      "cost $0.00543 > budget $0.00542",
    );
    // A tiny budget as written, not `$1e-7`.
    expect(cost(priced, { maxUsd: 1e-7 }, { "claude-*": { input: 3, output: 15 } }).message).toBe(
      "cost $4.5000 > budget $0.0000001",
    );
    expect(cost(priced, { maxUsd: 4 }, {}).verdict).toBe("error");
  });
  test("cost: a response the agent recorded a cost for is costed at it when its model has no price", () => {
    const oc = trace({
      models: [
        { model: "kimi", inputTokens: 1000, costUsd: 0.5 },
        { model: "kimi", inputTokens: 1000, costUsd: 0.25 },
      ],
    });
    expect(cost(oc, { maxUsd: 1 }, {}).message).toBe("cost $0.7500 within $1");
    expect(cost(oc, { maxUsd: 0.5 }, {}).verdict).toBe("fail");
    // A price, when there is one, is what the user pays: it wins.
    expect(cost(oc, { maxUsd: 1 }, { kimi: { input: 1_000_000, output: 0 } }).verdict).toBe("fail");
    // One response with tokens and neither a price nor a recorded cost: cannot be evaluated.
    const gap = trace({
      models: [
        { model: "kimi", inputTokens: 1000, costUsd: 0.5 },
        { model: "kimi", inputTokens: 1 },
      ],
    });
    expect(cost(gap, { maxUsd: 1 }, {}).verdict).toBe("error");
  });
  test("turns and model calls", () => {
    const tt = trace({
      turns: [
        { turnKey: "a", turnId: "a", startedAt: 1, seq: 1 },
        { turnKey: "b", turnId: "b", startedAt: 2, seq: 9 },
      ],
      models: [{}, {}, {}],
    });
    expect(turns(tt, { max: 1 }).seq).toBe(9);
    expect(maxModelCalls(tt, 3).verdict).toBe("pass");
    expect(maxModelCalls(tt, 2).verdict).toBe("fail");
  });
});
