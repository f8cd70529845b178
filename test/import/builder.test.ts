import { describe, expect, test } from "bun:test";
import { newBuilderState, SessionBuilder } from "../../src/import/builder.ts";

const meta = { agent: "claude", projectPath: "/p", source: { agent: "claude", id: "s", path: "/p/s.jsonl" } };

/** The ids of the events a builder fed `keys` (one compaction each) derives. */
function eventIds(keys: string[]): string[] {
  const b = new SessionBuilder(newBuilderState("claude-s"));
  for (const [i, key] of keys.entries()) b.compaction(key, 1_000 + i, 10, 5);
  return b.result(meta as never).events.map((e) => String(e.id));
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
});
