/**
 * Audit findings on the trace fold and its OTLP export, each a regression test named after the bug:
 * a denied call's output taking another call's slot (so the denied call looked as if it never ran),
 * `gen_ai.usage.input_tokens` without cached tokens, pending tool calls missing from the export, and
 * success spans marked OK where the conventions leave status Unset.
 */
import { describe, expect, test } from "bun:test";
import { deniedNeverRan } from "../../src/eval/assertions/denied.ts";
import { replaySession } from "../../src/rollout/folds/replay.ts";
import { buildTrace } from "../../src/rollout/folds/trace.ts";
import { type OtlpSpan, otlpSpans } from "../../src/rollout/otlp.ts";
import { logBuilder } from "./_events.ts";

const attr = (s: OtlpSpan, key: string) => s.attributes.find((a) => a.key === key)?.value;
const text = (s: OtlpSpan, key: string) => {
  const v = attr(s, key);
  return v && "stringValue" in v ? v.stringValue : undefined;
};
const spans = (events: ReturnType<typeof logBuilder>["events"]) => [...otlpSpans(buildTrace("s", events))];

describe("an output naming a denied or answered call takes no other call's slot", () => {
  /** The audit's log: two bash calls, A denied, then A's output: A ran anyway; B did not. */
  const deniedThenRan = () =>
    logBuilder()
      .add({ type: "turn.started", turnId: "turn-0" })
      .add({
        type: "function.call",
        turnId: "turn-0",
        tool: "bash",
        callId: "A",
        args: { command: "rm -rf /" },
      })
      .add({ type: "function.call", turnId: "turn-0", tool: "bash", callId: "B", args: { command: "ls" } })
      .add({ type: "function.denied", turnId: "turn-0", tool: "bash", callId: "A", source: "permission" })
      .at(50)
      .add({ type: "function.output", turnId: "turn-0", tool: "bash", callId: "A", output: "deleted" });

  test("bug: A's output was paired with B, so the trace said B ran and A never did", () => {
    const t = buildTrace("s", deniedThenRan().events);
    expect(t.toolSpans.map((s) => [s.callId, s.outputSeq, s.unpaired ?? false])).toEqual([["A", 5, true]]);
    expect(t.pendingCalls.map((p) => [p.callId, p.args])).toEqual([["B", { command: "ls" }]]);
    expect(t.deniedSpans.map((d) => d.callId)).toEqual(["A"]);
  });

  test("deniedNeverRan fails on it (it passed while B took A's output)", () => {
    const r = deniedNeverRan(buildTrace("s", deniedThenRan().events));
    expect(r.verdict).toBe("fail");
    expect(r.seq).toBe(5);
  });

  test("the OTLP export shows A's output as run and B as still pending, not B as run", () => {
    const tools = spans(deniedThenRan().events).filter((s) => s.name === "execute_tool bash");
    const byId = (id: string) => tools.filter((s) => text(s, "gen_ai.tool.call.id") === id);
    expect(byId("A").map((s) => text(s, "error.type"))).toEqual([undefined, "denied"]);
    expect(byId("B").map((s) => attr(s, "rollout.incomplete"))).toEqual([{ boolValue: true }]);
  });

  test("a second output for an answered id is its own span; the other call keeps its output", () => {
    const log = logBuilder()
      .add({ type: "function.call", tool: "bash", callId: "A" })
      .add({ type: "function.call", tool: "bash", callId: "B" })
      .add({ type: "function.output", tool: "bash", callId: "A", duration_ms: 1 })
      .add({ type: "function.output", tool: "bash", callId: "A", duration_ms: 2 })
      .add({ type: "function.output", tool: "bash", callId: "B", duration_ms: 3 });
    const t = buildTrace("s", log.events);
    expect(t.toolSpans.map((s) => [s.callId, s.callSeq, s.outputSeq, s.unpaired ?? false])).toEqual([
      ["A", 1, 3, false],
      ["B", 2, 5, false],
      ["A", 4, 4, true],
    ]);
    expect(t.pendingCalls).toEqual([]);
  });

  test("ids closed after the first output that found no call are closed too", () => {
    const log = logBuilder()
      .add({ type: "function.output", tool: "bash", callId: "orphan", duration_ms: 1 }) // gathers closed ids
      .add({ type: "function.call", tool: "bash", callId: "A" })
      .add({ type: "function.call", tool: "bash", callId: "B" })
      .add({ type: "function.call", tool: "bash", callId: "C" })
      .add({ type: "function.denied", tool: "bash", callId: "C", source: "user" })
      .add({ type: "function.output", tool: "bash", callId: "A", duration_ms: 1 })
      .add({ type: "function.output", tool: "bash", callId: "A", duration_ms: 1 })
      .add({ type: "function.output", tool: "bash", callId: "C", duration_ms: 1 })
      .add({ type: "function.output", tool: "bash", callId: "orphan", duration_ms: 1 });
    const t = buildTrace("s", log.events);
    expect(t.toolSpans.filter((s) => !s.unpaired).map((s) => s.callId)).toEqual(["A"]);
    expect(t.pendingCalls.map((p) => p.callId)).toEqual(["B"]);
  });

  test("a denial of a call never announced closes its id too", () => {
    const log = logBuilder()
      .add({ type: "function.denied", tool: "bash", callId: "A", source: "hook" })
      .add({ type: "function.call", tool: "bash" })
      .add({ type: "function.output", tool: "bash", callId: "A", duration_ms: 1 });
    const t = buildTrace("s", log.events);
    expect(t.toolSpans.map((s) => [s.callId, s.unpaired ?? false])).toEqual([["A", true]]);
    expect(t.pendingCalls.map((p) => p.seq)).toEqual([2]);
  });

  test("still paired by tool: id-less logs, and an output whose id no call named", () => {
    const log = logBuilder()
      .add({ type: "function.call", tool: "bash", args: { command: "a" } })
      .add({ type: "function.call", tool: "bash", args: { command: "b" } })
      .add({ type: "function.output", tool: "bash", duration_ms: 1 })
      .add({ type: "function.output", tool: "bash", callId: "late-id", duration_ms: 2 });
    const t = buildTrace("s", log.events);
    expect(t.toolSpans.map((s) => [s.callSeq, s.outputSeq, s.callId, s.unpaired ?? false])).toEqual([
      [1, 3, undefined, false],
      [2, 4, "late-id", false],
    ]);
  });
});

describe("OTLP export", () => {
  test("bug: gen_ai.usage.input_tokens left out cached tokens (3 next to cache_read 14874)", () => {
    const log = logBuilder()
      .add({ type: "turn.started", turnId: "turn-0" })
      .add({ type: "model.request", turnId: "turn-0", provider: "anthropic", model: "m" })
      .at(100)
      .add({
        type: "model.response",
        turnId: "turn-0",
        provider: "anthropic",
        model: "m",
        inputTokens: 3,
        outputTokens: 9,
        cacheReadTokens: 14_874,
        cacheWriteTokens: 120,
      })
      .add({ type: "model.request", turnId: "turn-0", provider: "anthropic", model: "m" })
      .add({ type: "model.response", turnId: "turn-0", provider: "anthropic", model: "m", inputTokens: 5 });
    const out = spans(log.events);
    const chats = out.filter((s) => s.name === "chat m");
    expect(chats.map((s) => attr(s, "gen_ai.usage.input_tokens"))).toEqual([
      { intValue: "14997" },
      { intValue: "5" },
    ]);
    expect(attr(chats[0]!, "gen_ai.usage.cache_read.input_tokens")).toEqual({ intValue: "14874" });
    expect(attr(chats[0]!, "gen_ai.usage.cache_creation.input_tokens")).toEqual({ intValue: "120" });
    expect(attr(out[0]!, "gen_ai.usage.input_tokens")).toEqual({ intValue: "15002" });
  });

  test("bug: a tool call with no output was left out; it ends at the fold's time, ERROR, incomplete", () => {
    const log = logBuilder()
      .add({ type: "turn.started", turnId: "turn-0" })
      .at(10)
      .add({
        type: "function.call",
        turnId: "turn-0",
        tool: "Bash",
        callId: "c",
        args: { command: "sleep 9" },
      })
      .at(70)
      .add({ type: "hook.triggered", hookName: "tick" });
    const pending = spans(log.events).filter((s) => s.name === "execute_tool Bash");
    expect(pending).toHaveLength(1);
    const [s] = pending;
    expect([s!.startTimeUnixNano, s!.endTimeUnixNano]).toEqual([
      "1700000000010000000",
      "1700000000070000000",
    ]);
    expect(s!.status.code).toBe(2);
    expect(attr(s!, "rollout.incomplete")).toEqual({ boolValue: true });
    expect(attr(s!, "error.type")).toEqual({ stringValue: "incomplete" });
    expect(attr(s!, "gen_ai.tool.call.id")).toEqual({ stringValue: "c" });
    // Aged against `now` when the fold is (trace --follow), as open requests are.
    const followed = [...otlpSpans(buildTrace("s", log.events, { now: 1_700_000_000_500 }))];
    expect(followed.find((x) => x.name === "execute_tool Bash")!.endTimeUnixNano).toBe("1700000000500000000");
  });

  test("success leaves status Unset (0), never OK; errors and aborted turns are ERROR", () => {
    const log = logBuilder()
      .add({ type: "turn.started", turnId: "turn-0" })
      .add({ type: "model.request", turnId: "turn-0", provider: "p", model: "m" })
      .add({ type: "model.response", turnId: "turn-0", provider: "p", model: "m" })
      .add({ type: "function.call", turnId: "turn-0", tool: "Read", callId: "r" })
      .add({ type: "function.output", turnId: "turn-0", tool: "Read", callId: "r", failed: false })
      .add({ type: "function.call", turnId: "turn-0", tool: "Bash", callId: "b" })
      .add({ type: "function.output", turnId: "turn-0", tool: "Bash", callId: "b", failed: true })
      .add({ type: "turn.started", turnId: "turn-1" })
      .add({ type: "turn.aborted", turnId: "turn-1", reason: "user" });
    const out = spans(log.events);
    expect(out.map((s) => [s.name, s.status])).toEqual([
      ["invoke_agent freecode", { code: 0 }],
      ["turn turn-0", { code: 0 }],
      ["turn turn-1", { code: 2, message: "aborted (user)" }],
      ["chat m", { code: 0 }],
      ["execute_tool Read", { code: 0 }],
      ["execute_tool Bash", { code: 2 }],
    ]);
    expect(attr(out[2]!, "error.type")).toEqual({ stringValue: "cancelled" });
  });
});

test("regression: OTLP times stay within unsigned 64-bit nanoseconds (a log's time before 1970 or past 2554 made a collector refuse the export)", () => {
  for (const t0 of [-5_000, 8e15]) {
    const log = logBuilder("s", t0)
      .add({ type: "turn.started", turnId: "t" })
      .add({ type: "model.request", turnId: "t", provider: "p", model: "m" })
      .at(10)
      .add({ type: "model.response", turnId: "t", provider: "p", model: "m" });
    for (const s of spans(log.events))
      for (const n of [s.startTimeUnixNano, s.endTimeUnixNano]) {
        expect(n).toMatch(/^\d+$/);
        expect(BigInt(n) <= 2n ** 64n - 1n).toBe(true);
      }
  }
});

test("regression: a call made without arguments, refused with them, that ran anyway — the trace's changedFiles and the replay take the refusal's arguments, and it ran from its call", () => {
  // The trace took the paths from the call alone (changedFiles missed /etc/passwd), and the replay
  // kept the call's missing arguments.
  const log = logBuilder("s");
  log.at(0).add({ type: "turn.started", turnId: "t0" });
  log.at(10).add({ type: "function.call", turnId: "t0", tool: "Write", callId: "c1" });
  log.at(20).add({
    type: "function.denied",
    turnId: "t0",
    tool: "Write",
    callId: "c1",
    source: "permission",
    args: { file_path: "/etc/passwd", content: "x" },
  });
  log.at(50).add({ type: "function.output", turnId: "t0", tool: "Write", callId: "c1", output: "written" });
  const trace = buildTrace("s", log.events);
  expect(trace.changedFiles).toEqual(["/etc/passwd"]);
  expect(trace.toolSpans.map((s) => [s.args, s.duration_ms])).toEqual([
    [{ file_path: "/etc/passwd", content: "x" }, 40],
  ]);
  const calls = replaySession("s", log.events).turns.flatMap((t) => t.calls);
  expect(calls.map((c) => [c.args, c.duration_ms, c.done])).toEqual([
    [{ file_path: "/etc/passwd", content: "x" }, 40, true],
  ]);
});
