import { describe, expect, test } from "bun:test";
import { createCollectionPace, createMemoryGuard } from "../../src/util/memory-guard.ts";

describe("memory guard", () => {
  test("no collection before afterBytes, then one per everyBytes read", () => {
    const guard = createMemoryGuard({ afterBytes: 10, everyBytes: 5 });
    guard.advance(4);
    expect(guard.collections).toBe(0);
    guard.advance(6); // 10 read
    expect(guard.collections).toBe(1);
    guard.advance(4); // 14
    expect(guard.collections).toBe(1);
    guard.advance(1); // 15
    expect(guard.collections).toBe(2);
    guard.advance(100); // one big step is one collection, not twenty
    expect(guard.collections).toBe(3);
  });

  test("a read shorter than the default 16 MiB never collects; then one per MiB", () => {
    const guard = createMemoryGuard();
    for (let i = 0; i < 31; i++) guard.advance(512 * 1024);
    expect(guard.collections).toBe(0);
    guard.advance(512 * 1024);
    expect(guard.collections).toBe(1);
    for (let i = 0; i < 4; i++) guard.advance(512 * 1024);
    expect(guard.collections).toBe(3);
  });
});

describe("collection pace", () => {
  const MiB = 1024 * 1024;

  test("due once everyBytes were read since the last collection, however they came", () => {
    // A budget no collection can exceed: the spacing stays everyBytes.
    const pace = createCollectionPace({ everyBytes: 4 * MiB, maxMsPerMiB: 1e9 });
    expect(pace.due(1)).toBe(false);
    expect(pace.due(4 * MiB - 2)).toBe(false);
    expect(pace.due(1)).toBe(true);
    pace.collect();
    expect(pace.stats).toEqual({ collections: 1, spacing: 4 * MiB });
    expect(pace.due(MiB)).toBe(false);
    expect(pace.due(100 * MiB)).toBe(true); // one big step: one collection due
    pace.collect();
    expect(pace.due(1)).toBe(false);
  });

  test("a collection that costs more than the budget spaces the next one further", () => {
    const held: unknown[] = [];
    for (let i = 0; i < 200_000; i++) held.push({ i, s: `x${i}` });
    const pace = createCollectionPace({ everyBytes: 1024, maxMsPerMiB: 0.001 });
    expect(pace.due(1024)).toBe(true);
    pace.collect(); // a heap of 200,000 objects: well over a microsecond
    const { spacing } = pace.stats;
    expect(spacing).toBeGreaterThan(1024 * 1000);
    expect(pace.due(spacing - 1)).toBe(false);
    expect(pace.due(1)).toBe(true);
    expect(held.length).toBe(200_000);
  });
});
