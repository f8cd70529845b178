/** The shared fixture log, checked against every fold, so that they agree about the same session. */
import { describe, expect, test } from "bun:test";
import type { ReadIssue } from "../../src/storage/contract.ts";
import { FIXTURE_SOURCE, loadReplay, loadTrace, loadUsage, readRollout } from "./_events.ts";

describe("fixture: every fold reads the same session", () => {
  test("readRollout yields the valid events, reports bad lines and skips newer types", async () => {
    const issues: ReadIssue[] = [];
    const skipped: string[] = [];
    const events = [];
    for await (const e of readRollout(FIXTURE_SOURCE, {
      onIssue: (i) => issues.push(i),
      onSkip: (t) => skipped.push(t),
    }))
      events.push(e);
    expect(events).toHaveLength(31);
    expect(events.map((e) => e.seq)).toEqual([
      ...Array.from({ length: 30 }, (_, i) => i + 1).filter((s) => s !== 26),
      32,
      33,
    ]);
    expect(skipped).toEqual(["memory.exposure"]);
    expect(issues.map((i) => [i.line, i.torn])).toEqual([
      [29, false],
      [32, false],
      [35, true],
    ]);
    expect(issues[1]!.message).toContain("(field tool)");
  });

  test("trace", async () => {
    const t = await loadTrace(FIXTURE_SOURCE);
    expect(t.turns.map((x) => [x.turnKey, x.aborted ?? false])).toEqual([
      ["turn-0#1", false],
      ["turn-1#1", true],
      ["turn-0#2", false],
    ]);
    expect(t.modelSpans.map((s) => [s.turnKey, s.model, s.status, s.duration_ms])).toEqual([
      ["turn-0#1", "claude-sonnet-4", "ok", 1500],
      ["turn-1#1", "claude-sonnet-4", "ok", 2000],
      ["turn-0#2", "claude-sonnet-4", "error", 90000],
      ["turn-0#2", "gpt-5", "in_flight", 100],
    ]);
    expect(t.modelSpans[0]).toMatchObject({
      ttft_ms: 400,
      inputTokens: 1000,
      cacheReadTokens: 5000,
      toolCalls: ["Read", "Bash"],
    });
    expect(t.modelSpans[2]).toMatchObject({ errorKind: "stall", stalledBeforeFirstToken: true });
    // Call order, not completion order (Bash finished first).
    expect(t.toolSpans.map((s) => [s.index, s.tool, s.callSeq, s.failed])).toEqual([
      [0, "Read", 6, false],
      [1, "Bash", 7, true],
      [2, "Edit", 14, undefined],
      [3, "Write", 15, true],
      [4, "shell", 18, undefined],
    ]);
    expect(t.deniedSpans).toEqual([
      expect.objectContaining({
        tool: "Write",
        source: "mode",
        reason: "plan mode forbids writes",
        turnKey: "turn-0#1",
      }),
    ]);
    expect(t.pendingCalls.map((p) => [p.tool, p.callId])).toEqual([["Bash", "c5"]]);
    // The denied Write and the failed Write (src/b.ts) are not changes.
    expect(t.changedFiles).toEqual(["docs/new.md", "src/a.ts", "src/c.ts"]);
    expect([t.compactions.length, t.compactedTokens, t.redirects, t.redirectsSkipped]).toEqual([
      2, 42000, 1, 1,
    ]);
    expect([t.inputTokens, t.outputTokens, t.model_ms, t.tool_ms]).toEqual([2500, 500, 93600, 1930]);
    expect([t.hung, t.inFlight, t.ended, t.stalls, t.skippedEvents]).toEqual([false, true, false, 1, 1]);
    expect(t.parseErrors.map((e) => e.line)).toEqual([29, 32, 35]);
  });

  test("replay", async () => {
    const r = await loadReplay(FIXTURE_SOURCE);
    expect(
      r.turns.map((t) => [
        t.turnKey,
        t.calls.map((c) => `${c.tool}:${c.done ? (c.failed ? "fail" : "ok") : "open"}`),
      ]),
    ).toEqual([
      ["turn-0#1", ["Read:ok", "Bash:fail"]],
      ["turn-1#1", ["Edit:ok", "Write:fail", "shell:ok"]],
      ["turn-0#2", ["Bash:open"]],
    ]);
    expect(r.turns[0]!.calls[1]).toMatchObject({ output: "1 failing", duration_ms: 900 });
    expect(r.turns[0]!.denied).toEqual([expect.objectContaining({ tool: "Write", source: "mode" })]);
    expect(r.turns[1]).toMatchObject({ aborted: true, abortReason: "user" });
    expect([r.totalTurns, r.totalCalls, r.totalDenied]).toEqual([3, 6, 1]);
    expect([r.compactCount, r.totalTokensBefore, r.totalTokensAfter, r.compactedTokens]).toEqual([
      2, 50100, 8300, 42000,
    ]);
    expect(r.errors.map((e) => e.line)).toEqual([29, 32, 35]);
  });

  test("usage", async () => {
    const u = await loadUsage(FIXTURE_SOURCE, { "claude-*": { input: 3, output: 15, cacheRead: 0.3 } });
    const claude = u.models.find((m) => m.model === "claude-sonnet-4")!;
    expect(claude).toMatchObject({
      requests: 3,
      responses: 2,
      errors: 1,
      inputTokens: 2500,
      outputTokens: 500,
    });
    // 2500×3 + 500×15 + 5000×0.3 + 100×3 (cache write at the input rate) per million
    expect(claude.costUsd).toBeCloseTo((7500 + 7500 + 1500 + 300) / 1e6, 10);
    expect(u.models.find((m) => m.model === "gpt-5")).toMatchObject({
      requests: 1,
      responses: 0,
      costUsd: null,
    });
    expect(u.totals.unpricedModels).toEqual(["(redirect advisor)"]);
    expect(u.unreadableLines).toBe(3);
  });
});

test("replay: events naming no turn before any turn all land in one implicit turn (two used to crash it)", async () => {
  const { replaySession } = await import("../../src/rollout/folds/replay.ts");
  const ev = (seq: number, e: object) => ({
    id: `e${seq}`,
    seq,
    aggregateID: "s",
    timestamp: 1000 + seq,
    ...e,
  });
  const r = replaySession("s", [
    ev(1, { type: "function.call", tool: "Bash", callId: "a" }),
    ev(2, { type: "function.call", tool: "Read", callId: "b" }),
    ev(3, { type: "function.output", tool: "Read", callId: "b", output: "x" }),
    ev(4, { type: "turn.started", turnId: "turn-0" }),
    ev(5, { type: "model.request", turnId: "turn-0", provider: "p", model: "m" }),
  ] as Parameters<typeof replaySession>[1]);
  expect(
    r.turns.map((t) => [t.turnKey, t.implicit ?? false, t.calls.map((c) => `${c.tool}:${c.done}`)]),
  ).toEqual([
    ["(none)#0", true, ["Bash:false", "Read:true"]],
    ["turn-0#1", false, []],
  ]);
});
