/** The hand-written message check gives the schema's verdict on valid and mutated messages. */
import { expect, test } from "bun:test";
import * as v from "valibot";
import { isValidMessage } from "../../src/storage/_message-check.ts";
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
