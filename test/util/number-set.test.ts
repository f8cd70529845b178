import { describe, expect, test } from "bun:test";
import { idHash } from "../../src/util/id-hash.ts";
import { NumberSet } from "../../src/util/number-set.ts";

describe("NumberSet", () => {
  test("agrees with a Set over hashes, small integers, 0 and negatives, through many growths", () => {
    const mine = new NumberSet();
    const theirs = new Set<number>();
    const values = [
      0,
      -1,
      1,
      2 ** 52,
      -(2 ** 40),
      0.5,
      ...Array.from({ length: 60_000 }, (_, i) => idHash(`uuid-${i % 50_000}`)),
      ...Array.from({ length: 5_000 }, (_, i) => i),
    ];
    for (const v of values) {
      const fresh = !theirs.has(v);
      theirs.add(v);
      expect(mine.add(v)).toBe(fresh);
    }
    expect(mine.size).toBe(theirs.size);
    for (const v of theirs) expect(mine.has(v)).toBe(true);
    for (let i = 0; i < 2_000; i++)
      expect(mine.has(idHash(`absent-${i}`))).toBe(theirs.has(idHash(`absent-${i}`)));
  });
});

test("pack and parse keep the numbers; text that is not a packed set gives an empty one", () => {
  const s = new NumberSet();
  const values = [0, 1, 2 ** 53 - 1, 123_456_789_012, 36];
  for (const v of values) s.add(v);
  const back = NumberSet.parse(s.pack());
  expect(back.size).toBe(values.length);
  for (const v of values) expect(back.has(v)).toBe(true);
  expect(back.has(37)).toBe(false);
  expect(s.pack()).toMatch(/^[0-9a-z,]+$/);
  for (const bad of [undefined, 5, "", "1,,2", "-1", "zzzzzzzzzzzz", "1.5", "A"])
    expect(NumberSet.parse(bad).size).toBe(0);
});
