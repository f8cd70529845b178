/** The open-calls index both folds pair with: the rule, reused ids, and queues that turn over. */
import { expect, test } from "bun:test";
import { PendingCalls } from "../../src/rollout/folds/_pending.ts";

interface Call {
  n: number;
  tool: string;
  turn: number;
}
const index = () => new PendingCalls<Call>({ tool: (c) => c.tool, turn: (c) => c.turn, order: (c) => c.n });
const call = (n: number, tool: string, turn: number): Call => ({ n, tool, turn });

test("an output without a known id: id-less calls first, its turn first, oldest first; then calls with ids", () => {
  const p = index();
  p.add(call(1, "Bash", 0), "a");
  p.add(call(2, "Bash", 1), undefined);
  p.add(call(3, "Bash", 0), undefined);
  p.add(call(4, "Bash", 0), "b");
  p.add(call(5, "Read", 0), undefined);
  expect(p.size).toBe(5);
  expect(p.takeFor("Bash", 0)?.n).toBe(3); // id-less, its turn, though 2 is older
  expect(p.takeFor("Bash", 0)?.n).toBe(2); // id-less, another turn
  expect(p.takeFor("Bash", 1)?.n).toBe(1); // with an id: none of turn 1, so the oldest
  expect(p.takeId("a")).toBeUndefined(); // taken already
  expect(p.open().map((c) => c.n)).toEqual([4, 5]);
  expect(p.takeFor("Write", 0)).toBeUndefined();
  expect(p.takeId("b")?.n).toBe(4);
  expect(p.size).toBe(1);
});

test("calls that reuse an id are taken oldest first, by id or by the fallback", () => {
  const p = index();
  for (const n of [1, 2, 3]) p.add(call(n, "Bash", 0), "x");
  expect(p.open().map((c) => c.n)).toEqual([1, 2, 3]);
  expect(p.takeId("x")?.n).toBe(1);
  expect(p.takeFor("Bash", 5)?.n).toBe(2);
  expect(p.takeId("x")?.n).toBe(3);
  expect(p.takeId("x")).toBeUndefined();
  expect(p.size).toBe(0);
});

test("a long queue of id-less calls taken out of order keeps every open call, oldest first", () => {
  const p = index();
  const open = new Set<number>();
  for (let n = 0; n < 1000; n++) {
    p.add(call(n, "Bash", n % 7), undefined);
    open.add(n);
    if (n % 3 === 2) {
      const taken = p.takeFor("Bash", n % 5)!;
      expect(open.delete(taken.n)).toBe(true);
    }
  }
  expect(p.size).toBe(open.size);
  expect(p.open().map((c) => c.n)).toEqual([...open].sort((a, b) => a - b));
  // Each take is the oldest open call of the asked turn when there is one.
  const oldestOfTurn = [...open].filter((n) => n % 7 === 3).sort((a, b) => a - b)[0];
  expect(p.takeFor("Bash", 3)?.n).toBe(oldestOfTurn);
});
