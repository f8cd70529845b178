/** Indented JSON written in pieces: the same text JSON.stringify(value, null, 2) gives, byte for byte. */
import { expect, test } from "bun:test";
import { writeJson } from "../../src/util/json-write.ts";
import { seeded } from "../_random.ts";

const written = (value: unknown) => {
  const parts: string[] = [];
  writeJson(value, (text) => parts.push(text));
  return parts.join("");
};

test("the edges JSON.stringify has: left-out values, toJSON, empty containers, key order, escapes", () => {
  const cases: unknown[] = [
    1,
    "x",
    null,
    [],
    {},
    [undefined, () => 1, Symbol("s")],
    { a: undefined, b: () => 1, c: 1, [Symbol("k")]: 2 },
    { d: new Date(0), e: Number.NaN, f: { toJSON: () => undefined }, g: { toJSON: () => ({ h: [1] }) } },
    [{ toJSON: () => undefined }, { x: [] }, [[[]]]],
    { nested: { deep: { deeper: [1, 2, { z: 'é✓ \u2028 \n "q"' }] } } },
    { "": 1, "1": 2, b: 3, a: 4, "0": 5 },
  ];
  for (const c of cases) expect(written(c)).toBe(JSON.stringify(c, null, 2));
  expect(written(undefined)).toBe("");
});

test("random nested values are written as JSON.stringify writes them", () => {
  const r = seeded(7);
  const leaf = () =>
    r.pick<unknown>([
      0,
      -1.5,
      1e21,
      "",
      "a\nb",
      "é🚀",
      true,
      false,
      null,
      undefined,
      Number.POSITIVE_INFINITY,
    ]);
  const make = (depth: number): unknown => {
    if (depth > 4 || r.chance(0.3)) return leaf();
    if (r.chance(0.5)) return Array.from({ length: r.int(5) }, () => make(depth + 1));
    const o: Record<string, unknown> = {};
    for (let i = r.int(5); i > 0; i--) o[r.pick(["a", "b", "k", "1", "__proto__x", ""])] = make(depth + 1);
    return r.chance(0.1) ? { toJSON: () => o } : o;
  };
  for (let i = 0; i < 500; i++) {
    const v = make(0);
    expect(written(v)).toBe(JSON.stringify(v, null, 2) ?? "");
  }
});

test("a long list is handed over an element at a time, not as one string", () => {
  const list = Array.from({ length: 1000 }, (_, i) => ({ i, s: "x".repeat(100) }));
  let largest = 0;
  writeJson({ list }, (text) => {
    largest = Math.max(largest, text.length);
  });
  expect(largest).toBeLessThan(200);
});
