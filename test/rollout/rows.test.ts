import { describe, expect, test } from "bun:test";
import { NumberRows } from "../../src/rollout/folds/_rows.ts";

describe("NumberRows", () => {
  test("rows keep their values across the first chunk's doublings and later full chunks", () => {
    const rows = new NumberRows(3);
    const n = 10_000; // past the first chunk's growth (16 → 4096) and into a third chunk
    for (let i = 0; i < n; i++) {
      expect(rows.add()).toBe(i);
      rows.set(i, 0, i);
      if (i % 3 === 0) rows.set(i, 2, -i);
    }
    expect(rows.length).toBe(n);
    for (const i of [0, 15, 16, 17, 31, 32, 4095, 4096, 4097, 8191, 8192, 9999]) {
      expect(rows.get(i, 0)).toBe(i);
      expect(Number.isNaN(rows.get(i, 1))).toBe(true);
      if (i % 3 === 0) expect(rows.get(i, 2)).toBe(-i);
      else expect(Number.isNaN(rows.get(i, 2))).toBe(true);
    }
    rows.clear();
    expect(rows.length).toBe(0);
    expect(rows.add()).toBe(0);
    expect(Number.isNaN(rows.get(0, 0))).toBe(true);
  });
});
