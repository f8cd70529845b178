import { describe, expect, test } from "bun:test";
import { createMemoryGuard } from "../../src/util/memory-guard.ts";

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
