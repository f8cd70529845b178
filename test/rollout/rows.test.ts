import { describe, expect, test } from "bun:test";
import { IntRows, NumberRows, StringTable } from "../../src/rollout/folds/_rows.ts";
import { TextColumn } from "../../src/rollout/folds/_text-column.ts";

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

describe("IntRows", () => {
  test("small integers in 4 bytes; anything else spills to a map and reads back exactly", () => {
    const rows = new IntRows(2);
    const values = [
      0,
      1,
      0x7fff_fffd,
      0x7fff_fffe, // the largest stored in its cell (as value + 1)
      0x7fff_ffff,
      0x8000_0000,
      0xffff_fffc,
      0xffff_fffd,
      0xffff_fffe,
      0xffff_ffff,
      2 ** 40,
      -1,
      1.5,
      Number.MAX_SAFE_INTEGER,
    ];
    for (const [i, x] of values.entries()) {
      expect(rows.add()).toBe(i);
      rows.set(i, 1, x);
    }
    for (const [i, x] of values.entries()) {
      expect(rows.get(i, 1)).toBe(x);
      expect(Number.isNaN(rows.get(i, 0))).toBe(true);
    }
    rows.set(7, 1, 7); // a spilled field set back to a small value
    expect(rows.get(7, 1)).toBe(7);
    rows.set(7, 1, Number.NaN);
    expect(Number.isNaN(rows.get(7, 1))).toBe(true);
    rows.set(3, 1, -0); // read back as 0, as before
    expect(Object.is(rows.get(3, 1), 0)).toBe(true);
  });
});

describe("TextColumn", () => {
  test("strings read back as given: ASCII, accents, emoji, empty, long, across 1 MiB chunks", () => {
    const col = new TextColumn();
    const long = `${"é".repeat(30_000)}🚀`;
    const given: string[] = [];
    for (let i = 0; i < 40_000; i++) {
      const s =
        i === 7
          ? long
          : i % 5 === 0
            ? ""
            : `{"file_path":"src/é-${i}.ts","n":${i},"x":"🚀${"y".repeat(i % 97)}"}`;
      given.push(s);
      expect(col.add(s)).toBe(i);
    }
    expect(col.length).toBe(given.length);
    for (const [i, s] of given.entries()) expect(col.get(i)).toBe(s);
  });

  test("the first chunk starts small and grows: every string reads back between doublings", () => {
    // A first string larger than the first chunk's 4 KiB, then one larger than its next size.
    const big = new TextColumn();
    const firsts = ["é".repeat(20_000), "x", "🚀".repeat(9_000)];
    for (const s of firsts) big.add(s);
    for (const [i, s] of firsts.entries()) expect(big.get(i)).toBe(s);
    const col = new TextColumn();
    const given: string[] = [];
    for (let i = 0; i < 3_000; i++) {
      // ~500 bytes each: the 4 KiB first chunk doubles to 1 MiB, then a second chunk starts.
      const s = `${i}:${"ü".repeat(i % 300)}`;
      given.push(s);
      col.add(s);
      if ((i & (i - 1)) === 0 || i % 997 === 0)
        for (const [j, t] of given.entries()) expect(col.get(j)).toBe(t);
    }
    for (const [j, t] of given.entries()) expect(col.get(j)).toBe(t);
  });
});

describe("StringTable", () => {
  test("one number and one copy per distinct string; past the bound, still exact", () => {
    const table = new StringTable(2);
    const a = table.id("Bash");
    expect(table.id("Bash")).toBe(a);
    expect(table.get(a)).toBe("Bash");
    const parsed = JSON.parse('["Bash"]')[0] as string;
    expect(table.intern(parsed)).toBe(table.get(a));
    table.id("Edit");
    const n = table.id("Read"); // past the bound: numbered, not remembered
    expect(table.get(n)).toBe("Read");
    expect(table.get(table.id("Read"))).toBe("Read");
    const recent = new StringTable().recent(2);
    const names = ["Edit", "Bash", "Read", "Edit", "Bash", "Edit"].map((n) => JSON.parse(`"${n}"`) as string);
    const ids = names.map(recent);
    expect(ids).toEqual([0, 1, 2, 0, 1, 0]); // evicted names keep their numbers
  });
});
