/** The hand-written message check gives the schema's verdict on valid and mutated messages; the size check is exact. */
import { expect, test } from "bun:test";
import * as v from "valibot";
import { checkMessageSize, isValidMessage, MAX_MESSAGE_BYTES } from "../../src/storage/_message-check.ts";
import { MessageSchema } from "../../src/storage/records.ts";

const base = () => ({
  id: "msg-1",
  role: "assistant",
  parts: [
    { type: "text", content: "hi" },
    {
      type: "tool",
      tool: { name: "read", args: { p: 1 } },
      result: { any: true },
      failed: false,
      callId: "c",
    },
    { type: "image", data: "AA", mediaType: "image/png", altText: "x" },
    { type: "code", content: "x", language: "ts" },
  ],
  timestamp: 5,
  interrupted: true,
  usage: {
    inputTokens: 1,
    outputTokens: 2,
    cacheReadInputTokens: 3,
    cacheCreationInputTokens: 4,
    reasoningTokens: 5,
    extra: "kept",
  },
  responseId: "r",
  synthetic: "continue",
  future: { anything: 1 },
});

const BAD_VALUES: unknown[] = [
  undefined,
  null,
  0,
  -1,
  1.5,
  Number.NaN,
  "",
  "x",
  "a/b",
  "..",
  "x".repeat(129),
  true,
  [],
  {},
  [1],
  { name: 1 },
  { name: "n" },
];

function mutations(): unknown[] {
  const out: unknown[] = [base()];
  const paths: (string | number)[][] = [
    ["id"],
    ["role"],
    ["parts"],
    ["timestamp"],
    ["interrupted"],
    ["usage"],
    ["responseId"],
    ["synthetic"],
    ["future"],
    ["usage", "inputTokens"],
    ["usage", "reasoningTokens"],
    ["usage", "extra"],
    ["parts", 0],
    ["parts", 0, "type"],
    ["parts", 0, "content"],
    ["parts", 1, "tool"],
    ["parts", 1, "tool", "name"],
    ["parts", 1, "failed"],
    ["parts", 1, "callId"],
    ["parts", 1, "result"],
    ["parts", 2, "data"],
    ["parts", 2, "mediaType"],
    ["parts", 2, "altText"],
    ["parts", 3, "language"],
  ];
  for (const path of paths) {
    for (const value of BAD_VALUES) {
      const m = base() as Record<string | number, unknown>;
      let target = m as Record<string | number, unknown>;
      for (const key of path.slice(0, -1)) target = target[key] as Record<string | number, unknown>;
      const last = path.at(-1)!;
      if (value === undefined) delete target[last];
      else target[last] = value;
      out.push(m);
    }
  }
  for (const role of ["user", "system", "tool", "robot"]) out.push({ ...base(), role });
  for (const t of ["text", "code", "tool", "image", "video"]) out.push({ ...base(), parts: [{ type: t }] });
  out.push(null, [], "str", 1);
  return out;
}

test("isValidMessage agrees with MessageSchema on every mutation", () => {
  const all = mutations();
  expect(all.length).toBeGreaterThan(400);
  let valid = 0;
  for (const m of all) {
    const schema = v.safeParse(MessageSchema, m).success;
    if (schema) valid++;
    expect([Bun.inspect(m).replace(/\s+/g, " "), isValidMessage(m)]).toEqual([
      Bun.inspect(m).replace(/\s+/g, " "),
      schema,
    ]);
  }
  expect(valid).toBeGreaterThan(50); // both verdicts are exercised
});

test("checkMessageSize refuses exactly the messages whose JSON line is over 8 MiB, in bytes", () => {
  const text = (content: string) => ({
    id: "m",
    role: "user",
    parts: [{ type: "text", content }],
    timestamp: 1,
  });
  const tool = (args: unknown) => ({ ...text(""), parts: [{ type: "tool", tool: { name: "t", args } }] });
  const over = (m: { id: string }) => {
    try {
      checkMessageSize(m);
      return false;
    } catch {
      return true;
    }
  };
  // Characters of 1, 2, 3, 4 (a surrogate pair) and 6 bytes of JSON (an escaped control character).
  for (const unit of ["x", "é", "€", "🚀", "\u0001"]) {
    const bytesPerUnit = Buffer.byteLength(JSON.stringify(unit)) - 2;
    const overhead = Buffer.byteLength(JSON.stringify(text("")));
    const fit = Math.floor((MAX_MESSAGE_BYTES - overhead) / bytesPerUnit);
    for (const count of [fit - 1, fit, fit + 1]) {
      const m = text(unit.repeat(count));
      expect([unit, count, over(m)]).toEqual([
        unit,
        count,
        Buffer.byteLength(JSON.stringify(m)) > MAX_MESSAGE_BYTES,
      ]);
    }
  }
  // Size hidden in structure, not strings: many numbers, deep nesting.
  expect(over(tool(Array.from({ length: 500_000 }, () => 1.2345678901234567)))).toBe(true);
  expect(over(tool(Array.from({ length: 100_000 }, () => 1.2345678901234567)))).toBe(false);
  let deep: unknown = "leaf";
  for (let i = 0; i < 100; i++) deep = { d: deep };
  expect(over(tool(deep))).toBe(false);
});
