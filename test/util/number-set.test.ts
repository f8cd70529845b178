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
