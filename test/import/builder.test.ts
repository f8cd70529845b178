import { describe, expect, test } from "bun:test";
import { newBuilderState, SessionBuilder } from "../../src/import/builder.ts";

const meta = { agent: "claude", projectPath: "/p", source: { agent: "claude", id: "s", path: "/p/s.jsonl" } };

/** The ids of the events a builder fed `keys` (one compaction each) derives, after its session.started. */
function eventIds(keys: string[]): string[] {
  const b = new SessionBuilder(newBuilderState("claude-s"));
  for (const [i, key] of keys.entries()) b.compaction(key, 1_000 + i, 10, 5);
  const [started, ...rest] = b.result(meta as never).events;
  expect(started).toEqual({
    type: "session.started",
    id: "claude-s:session.started:import",
    timestamp: 1_000,
    reason: "import",
    projectPath: "/p",
  });
  return rest.map((e) => String(e.id));
}

describe("session builder: event ids", () => {
  test("a key given again (a damaged transcript) gets #2, #3, …; other keys stay as they are", () => {
    expect(eventIds(["a", "b", "a", "a", "c", "b"])).toEqual([
      "claude-s:compact.occurred:a",
      "claude-s:compact.occurred:b",
      "claude-s:compact.occurred:a#2",
      "claude-s:compact.occurred:a#3",
      "claude-s:compact.occurred:c",
      "claude-s:compact.occurred:b#2",
    ]);
  });

  test("a key that looks like a renamed one still gets an id of its own", () => {
    expect(eventIds(["a", "a", "a#2"])).toEqual([
      "claude-s:compact.occurred:a",
      "claude-s:compact.occurred:a#2",
      "claude-s:compact.occurred:a#2#2",
    ]);
  });

  test("50,000 distinct keys: 50,000 ids as given, the same on every run", () => {
    const keys = Array.from({ length: 50_000 }, (_, i) => `toolu_${i.toString(36)}`);
    const ids = eventIds(keys);
    expect(ids).toEqual(keys.map((k) => `claude-s:compact.occurred:${k}`));
    expect(eventIds(keys)).toEqual(ids);
  });

  test("session.started comes once, first, in the first part that has events; a parent is named", () => {
    const b = new SessionBuilder(newBuilderState("claude-s"));
    b.compaction("a", 2_000, 10, 5);
    b.addMessage({ id: "m1", role: "user", parts: [{ type: "text", content: "hi" }], timestamp: 2_000 });
    const first = b.result({ ...meta, projectPath: "c:\\work\\app", parentId: "claude-p" } as never, true);
    b.compaction("b", 3_000, 10, 5);
    b.addMessage({ id: "m2", role: "user", parts: [{ type: "text", content: "again" }], timestamp: 3_000 });
    const second = b.result(meta as never, true);
    expect(first?.events.map((e) => e.type)).toEqual(["session.started", "compact.occurred"]);
    expect(first?.events[0]).toMatchObject({
      projectPath: "C:\\work\\app",
      parentId: "claude-p",
      timestamp: 2_000,
    });
    expect(second?.events.map((e) => e.type)).toEqual(["compact.occurred"]);
  });
});

describe("session builder: times taken", () => {
  test("regression: a duration a transcript got wrong (negative, not finite) is 0, not an event the store refuses", () => {
    const b = new SessionBuilder(newBuilderState("claude-s"));
    b.turnStart("t", 1_000);
    b.toolCall("c1", "bash", { command: "ls" }, 1_010);
    b.toolResult("c1", { at: 1_020, output: "ok", durationMs: -250 });
    b.toolCall("c2", "bash", { command: "pwd" }, 1_030);
    b.toolResult("c2", { at: 1_040, output: "/", durationMs: Number.NaN });
    const outputs = b.result(meta as never).events.filter((e) => e.type === "function.output");
    expect(outputs.map((e) => e.duration_ms)).toEqual([0, 0]);
  });
});

describe("session builder: calls in the order they were made", () => {
  /** `function.*` events as "type callId", after feeding `steps` to a fresh builder. */
  function calls(steps: (b: SessionBuilder) => void): string[] {
    const b = new SessionBuilder(newBuilderState("claude-s"));
    b.turnStart("t1", 1_000);
    steps(b);
    b.finish(true);
    return b
      .result(meta as never)
      .events.filter((e) => String(e.type).startsWith("function."))
      .map((e) => `${e.type} ${e.callId}`);
  }

  test("regression: a call made after an already-written call ran is written before that call's output", () => {
    // a's call is written when its response ends (writeUnanswered); b is made while a runs; a's
    // output then brought out nothing, so b went in after it, with its own output, its time going back.
    expect(
      calls((b) => {
        b.toolCall("a", "Bash", {}, 1_100);
        b.writeUnanswered(["a"]);
        b.toolCall("b", "Read", {}, 1_200);
        b.toolResult("a", { at: 1_300, output: "done" });
        b.toolResult("b", { at: 1_400, output: "read" });
      }),
    ).toEqual(["function.call a", "function.call b", "function.output a", "function.output b"]);
  });

  test("a call made after the output's time stays behind it", () => {
    expect(
      calls((b) => {
        b.toolCall("a", "Bash", {}, 1_100);
        b.writeUnanswered(["a"]);
        b.toolCall("b", "Read", {}, 1_500);
        b.toolResult("a", { at: 1_300, output: "done" });
        b.toolResult("b", { at: 1_600, output: "read" });
      }),
    ).toEqual(["function.call a", "function.output a", "function.call b", "function.output b"]);
  });
});
