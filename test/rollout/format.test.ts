/** The waterfall's numbers: rounded first, so a value just under a unit's edge carries over. */
import { expect, test } from "bun:test";
import type { RolloutEvent } from "../../src/rollout/events.ts";
import { buildTrace } from "../../src/rollout/folds/trace.ts";
import { traceToOtlp } from "../../src/rollout/otlp.ts";
import { fmtMs, fmtTokens, renderWaterfall } from "../../src/rollout/waterfall.ts";

test("durations carry into the next unit instead of showing 60 of the last", () => {
  const cases: [number, string][] = [
    [0, "0ms"],
    [999.4, "999ms"],
    [999.6, "1.00s"],
    [1500, "1.50s"],
    [59_994, "59.99s"],
    [59_996, "1m00.0s"],
    [119_960, "2m00.0s"],
    [125_000, "2m05.0s"],
    [3_599_990, "1h00m"],
    [3_725_000, "1h02m"],
  ];
  expect(cases.map(([ms]) => [ms, fmtMs(ms)])).toEqual(cases);
});

test("token counts carry from k to M", () => {
  const cases: [number, string][] = [
    [999, "999"],
    [1000, "1.0k"],
    [999_949, "999.9k"],
    [999_960, "1.0M"],
    [3_400_000, "3.4M"],
  ];
  expect(cases.map(([n]) => [n, fmtTokens(n)])).toEqual(cases);
});

test("an empty log says it has no events rather than starting in 1970", () => {
  const text = renderWaterfall(buildTrace("empty", []), { width: 100, color: false });
  expect(text.split("\n")[0]).toBe("session empty  (no events)  open (no session.ended)");
});

const events = (...es: Record<string, unknown>[]) =>
  es.map((e, i) => ({ id: `e${i + 1}`, seq: i + 1, timestamp: 1_700_000_000_000, ...e }) as RolloutEvent);

test("regression: a span reaching back before the log's first event (an output, a response or an error with no call or request, started its duration earlier) is drawn from the first column (trace threw a RangeError)", () => {
  for (const orphan of [
    { type: "function.output", turnId: "t", tool: "Bash", output: "ok", duration_ms: 1200 },
    { type: "model.response", turnId: "t", provider: "anthropic", model: "m", duration_ms: 5000 },
    {
      type: "model.error",
      turnId: "t",
      provider: "anthropic",
      model: "m",
      duration_ms: 5000,
      kind: "provider",
    },
  ]) {
    const text = renderWaterfall(buildTrace("s", events({ type: "turn.started", turnId: "t" }, orphan)), {
      width: 100,
    });
    expect(text).toContain("── turn t#1");
  }
});

test("regression: rows are fitted by terminal columns: wide characters count two, escapes are never cut (a row of Chinese names ran 122 columns in 100, its bar shifted)", () => {
  const trace = buildTrace(
    "s",
    events(
      { type: "turn.started", turnId: "t" },
      { type: "function.call", turnId: "t", tool: "Bash", callId: "a", args: { command: "ls" } },
      {
        type: "function.output",
        turnId: "t",
        tool: "Bash",
        callId: "a",
        output: "",
        duration_ms: 500,
        timestamp: 1_700_000_000_500,
      },
      {
        type: "function.call",
        turnId: "t",
        tool: "读取文件工具读取文件工具读取文件工具",
        callId: "b",
        args: { command: `echo ${"日本語".repeat(20)}` },
      },
      {
        type: "function.output",
        turnId: "t",
        tool: "读取文件工具读取文件工具读取文件工具",
        callId: "b",
        output: "",
        duration_ms: 500,
        timestamp: 1_700_000_000_500,
      },
      {
        type: "function.denied",
        turnId: "t",
        tool: "Bash",
        source: "user",
        reason: `no\u2066${"x".repeat(80)}`,
      },
    ),
  );
  const rows = renderWaterfall(trace, { width: 100 })
    .split("\n")
    .filter((l) => /^\s+\+\S+ (tool|denied) /.test(l));
  expect(rows.length).toBe(3);
  for (const row of rows) expect(Bun.stringWidth(row)).toBeLessThanOrEqual(100);
  // The bars start in one column.
  const barAt = (row: string) => Bun.stringWidth(row.slice(0, row.search(/[█▒░▓■]/)));
  expect(barAt(rows[1]!)).toBe(barAt(rows[0]!));
  expect(rows.join("\n")).not.toMatch(/\\u…|\\u[0-9a-f]{0,3}…/);
});

test("regression: a request still open when the session ended was never answered; the head says ended, not in flight", () => {
  const log = (end: boolean) =>
    buildTrace(
      "s",
      events(
        { type: "session.started", reason: "new" },
        { type: "turn.started", turnId: "t" },
        { type: "model.request", turnId: "t", provider: "openai", model: "m" },
        ...(end ? [{ type: "session.ended", reason: "exit" }] : []),
      ),
      { now: 1_700_000_000_005 },
    );
  const ended = renderWaterfall(log(true), { width: 100 });
  expect(ended.split("\n")[0]).toEndWith("ended (a model request was never answered)");
  expect(ended).toContain("never answered 0ms");
  expect(ended).not.toContain("in flight");
  const open = renderWaterfall(log(false), { width: 100 });
  expect(open.split("\n")[0]).toEndWith("in flight (a model request is still open)");
  expect(open).toContain("in flight 5ms");
});

test("regression: a log that repeats a seq exports spans of distinct ids to OTLP (two shared one)", () => {
  const log = [
    { type: "turn.started", turnId: "t0", seq: 1 },
    { type: "model.request", turnId: "t0", provider: "p", model: "m", seq: 2 },
    { type: "model.request", turnId: "t0", provider: "p", model: "m", seq: 2 },
    { type: "function.call", turnId: "t0", tool: "X", seq: 4 },
    { type: "function.call", turnId: "t0", tool: "X", seq: 4 },
  ].map((e, i) => ({ id: `e${i}`, timestamp: 1_700_000_000_000 + i, ...e }) as RolloutEvent);
  const spans = traceToOtlp(buildTrace("v", log)).resourceSpans[0]!.scopeSpans[0]!.spans;
  expect(new Set(spans.map((s) => s.spanId)).size).toBe(spans.length);
});
