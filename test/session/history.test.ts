import { describe, expect, test } from "bun:test";
import type { FreecodeError } from "../../src/errors.ts";
import { loadHistory, NO_RESULT_TEXT, toolCallId } from "../../src/session/history.ts";
import { toStoredMessages } from "../../src/session/lifecycle.ts";
import type { StoredMessage } from "../../src/storage/records.ts";

const m = (id: string, role: StoredMessage["role"], parts: StoredMessage["parts"]): StoredMessage => ({
  id,
  role,
  parts,
  timestamp: 1,
});

describe("loadHistory", () => {
  test("tool ids are tool-<msgId>-<partIndex>: unique within a message, stable across reloads (regression: colliding ids)", () => {
    const stored = [
      m("u1", "user", [{ type: "text", content: "read both" }]),
      m("a1", "assistant", [
        { type: "text", content: "reading" },
        { type: "tool", tool: { name: "read", args: { path: "a" } }, result: "A" },
        { type: "tool", tool: { name: "read", args: { path: "b" } }, result: "B", failed: true },
      ]),
    ];
    const loop = loadHistory(stored);
    expect(loop).toHaveLength(3);
    const uses = loop[1]!.content.filter((b) => b.type === "tool_use");
    expect(uses.map((u) => (u as { id: string }).id)).toEqual([toolCallId("a1", 1), toolCallId("a1", 2)]);
    expect(loop[2]).toEqual({
      role: "user",
      sourceId: "a1",
      content: [
        { type: "tool_result", toolUseId: "tool-a1-1", content: "A", isError: false },
        { type: "tool_result", toolUseId: "tool-a1-2", content: "B", isError: true },
      ],
    });
    expect(loadHistory(stored)).toEqual(loop);
  });

  test("stored tool args that are not a plain object (written before the rule) are kept whole under input, never dropped (regression: `args || {}`) nor a reason resume fails", () => {
    for (const args of ["rm -rf /", ["a"], 42, null]) {
      const stored = [m("a1", "assistant", [{ type: "tool", tool: { name: "bash", args } }])];
      expect(loadHistory(stored)[0]!.content[0]).toMatchObject({ type: "tool_use", input: { input: args } });
    }
    expect(
      loadHistory([m("a1", "assistant", [{ type: "tool", tool: { name: "x", args: undefined } }])])[0]!
        .content[0],
    ).toMatchObject({ input: {} });
  });

  test("writing a tool call whose args are not a JSON object is refused, naming the field", () => {
    for (const [args, what] of [
      ["rm -rf /", "string"],
      [["a"], "an array"],
      [42, "number"],
      [null, "null"],
    ] as const) {
      const input = [
        { role: "user", parts: [{ type: "text", content: "go" }] },
        { role: "assistant", parts: [{ type: "tool", tool: { name: "bash", args } }] },
      ];
      expect(() => toStoredMessages(input)).toThrow(
        `invalid message: tool args must be a JSON object, not ${what}`,
      );
      try {
        toStoredMessages(input);
      } catch (e) {
        expect((e as FreecodeError).source).toEqual({ line: 2, field: "parts.0.tool.args" });
      }
    }
    const ok = toStoredMessages([
      { role: "assistant", parts: [{ type: "tool", tool: { name: "bash", args: { c: 1 } } }] },
    ]);
    expect(ok[0]!.parts[0]!.tool).toEqual({ name: "bash", args: { c: 1 } });
  });

  test("regression: a tool call with no result recorded (interrupted) got no tool_result, which providers refuse", () => {
    const loop = loadHistory([
      m("u1", "user", [{ type: "text", content: "go" }]),
      m("a1", "assistant", [
        { type: "tool", tool: { name: "read", args: { path: "a" } }, result: "A" },
        { type: "tool", tool: { name: "bash", args: { command: "make" } } },
      ]),
    ]);
    expect(loop.map((l) => l.role)).toEqual(["user", "assistant", "user"]);
    expect(loop[2]!.content).toEqual([
      { type: "tool_result", toolUseId: "tool-a1-0", content: "A", isError: false },
      { type: "tool_result", toolUseId: "tool-a1-1", content: NO_RESULT_TEXT, isError: true },
    ]);
  });

  test("code and images map to blocks", () => {
    const [msg] = loadHistory([
      m("u", "user", [
        { type: "code", language: "ts", content: "x" },
        { type: "image", mediaType: "image/jpeg", data: "AAA" },
      ]),
    ]);
    expect(msg!.content).toEqual([
      { type: "text", text: "```ts\nx\n```" },
      { type: "image", mediaType: "image/jpeg", data: "AAA" },
    ]);
  });
});
