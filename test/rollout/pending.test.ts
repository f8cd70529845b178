/** The open-calls index both folds pair with: the rule, reused ids, and queues that turn over. */
import { expect, test } from "bun:test";
import { PendingCalls } from "../../src/rollout/folds/_pending.ts";
import { seeded } from "../_random.ts";

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

/** A fold's side of `answer`: the ids its answered and withdrawn calls were added with, when asked. */
function folding() {
  const finished: string[] = [];
  let asked = 0;
  const p = new PendingCalls<Call & { id?: string }>({
    tool: (c) => c.tool,
    turn: (c) => c.turn,
    order: (c) => c.n,
    closedIds: () => {
      asked++;
      return finished;
    },
  });
  const done = (c: (Call & { id?: string }) | undefined) => {
    if (c?.id !== undefined) finished.push(c.id);
    return c?.n;
  };
  return {
    p,
    asked: () => asked,
    add: (c: Call, id?: string) => p.add(id === undefined ? c : { ...c, id }, id),
    answer: (tool: string, turn: number, id?: string) => done(p.answer(tool, turn, id)),
    deny: (id: string) => done(p.deny(id)),
  };
}

test("answer: an id answered or denied is closed, and takes no other call; an unknown id falls back", () => {
  const f = folding();
  f.add(call(1, "Bash", 0), "a");
  f.add(call(2, "Bash", 0), "b");
  f.add(call(3, "Bash", 0));
  expect(f.deny("a")).toBe(1);
  expect(f.deny("refused-unannounced")).toBeUndefined();
  expect(f.answer("Bash", 0, "b")).toBe(2);
  expect(f.asked()).toBe(0); // every output found its call: nothing gathered
  expect(f.answer("Bash", 0, "refused-unannounced")).toBeUndefined();
  // Before the fix the denied call's output took call 3: a call that did not run.
  expect(f.answer("Bash", 0, "a")).toBeUndefined();
  expect(f.asked()).toBe(1);
  expect(f.answer("Bash", 0, "b")).toBeUndefined(); // a second output for b
  expect(f.deny("never-called")).toBeUndefined();
  expect(f.answer("Bash", 0, "never-called")).toBeUndefined();
  expect(f.p.open().map((c) => c.n)).toEqual([3]);
  expect(f.answer("Bash", 0, "x")).toBe(3); // an id no call or denial named: paired by tool
  f.add(call(4, "Bash", 0), "x"); // an id used again is answered by id, as before
  expect(f.answer("Bash", 0, "x")).toBe(4);
  expect(f.answer("Bash", 0, "x")).toBeUndefined(); // closed: an output named it
  f.add(call(5, "Bash", 0));
  expect(f.answer("Bash", 0)).toBe(5); // no id: by tool
  expect([f.p.size, f.asked()]).toEqual([0, 1]);
});

test("closed ids gathered late give what a set kept from the start gives (PENDING_SEEDS, default 200)", () => {
  const seeds = Number(process.env.PENDING_SEEDS) || 200;
  for (let seed = 1; seed <= seeds; seed++) {
    const r = seeded(seed);
    const f = folding();
    const m = model();
    const closed = new Set<string>();
    const ids = ["a", "b", "c", "d", "__proto__"];
    for (let n = 0; n < 200; n++) {
      const tool = r.pick(["Bash", "Read"]);
      const turn = r.int(3);
      const id = r.chance(0.3) ? undefined : r.pick(ids);
      const roll = r.next();
      if (roll < 0.45) {
        f.add(call(n, tool, turn), id);
        m.add(call(n, tool, turn), id);
      } else if (roll < 0.55 && id !== undefined) {
        expect([seed, n, f.deny(id)]).toEqual([seed, n, m.takeId(id)?.n]);
        closed.add(id);
      } else {
        // The rule with a set kept from the start: ids named by outputs and denials, and the ids of
        // the calls taken, are closed.
        let want = id === undefined ? undefined : m.takeId(id);
        if (!want && (id === undefined || !closed.has(id))) want = m.takeFor(tool, turn, id !== undefined);
        for (const named of [id, want?.id]) if (named !== undefined) closed.add(named);
        expect([seed, n, f.answer(tool, turn, id)]).toEqual([seed, n, want?.n]);
      }
    }
    expect([seed, f.p.open().map((c) => c.n)]).toEqual([seed, m.open()]);
  }
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

/** The rule written the obvious way: a list of open calls in call order, searched in full. */
function model() {
  const open: (Call & { id?: string })[] = [];
  const take = (i: number) => (i < 0 ? undefined : open.splice(i, 1)[0]);
  return {
    add: (c: Call, id: string | undefined) => open.push(id === undefined ? { ...c } : { ...c, id }),
    takeId: (id: string) => take(open.findIndex((c) => c.id === id)),
    /** `idless`: the output names an id of its own, and takes only a call that has none. */
    takeFor(tool: string, turn: number, idless = false) {
      const mine = (c: Call & { id?: string }, withId: boolean, sameTurn: boolean) =>
        c.tool === tool && (c.id !== undefined) === withId && (!sameTurn || c.turn === turn);
      for (const [withId, sameTurn] of [
        [false, true],
        [false, false],
        ...(idless
          ? []
          : ([
              [true, true],
              [true, false],
            ] as const)),
      ] as const) {
        const i = open.findIndex((c) => mine(c, withId, sameTurn));
        if (i >= 0) return take(i);
      }
      return undefined;
    },
    open: () => open.map((c) => c.n),
  };
}

test("random adds and takes give what the rule written the obvious way gives (PENDING_SEEDS, default 200)", () => {
  const seeds = Number(process.env.PENDING_SEEDS) || 200;
  for (let seed = 1; seed <= seeds; seed++) {
    const r = seeded(seed);
    const p = index();
    const m = model();
    const ids = ["a", "b", "c", "__proto__", "1"];
    // Few calls open at a time (all in the index's short list) or many (older ones moved out of it).
    const adds = r.pick([0.3, 0.45, 0.6]);
    for (let n = 0; n < 300; n++) {
      const tool = r.pick(["Bash", "Read", "Edit"]);
      const turn = r.int(4);
      const roll = r.next();
      let got: number | undefined;
      let want: number | undefined;
      if (roll < adds) {
        const id = r.chance(0.3) ? undefined : r.chance(0.5) ? `u${n}` : r.pick(ids);
        p.add(call(n, tool, turn), id);
        m.add(call(n, tool, turn), id);
        continue;
      }
      if (roll < adds + (1 - adds) / 2) {
        const id = r.chance(0.5) ? r.pick(ids) : `u${r.int(n + 1)}`;
        got = p.takeId(id)?.n;
        want = m.takeId(id)?.n;
      } else {
        got = p.takeFor(tool, turn)?.n;
        want = m.takeFor(tool, turn)?.n;
      }
      expect([seed, n, got]).toEqual([seed, n, want]);
      expect(p.size).toBe(m.open().length);
    }
    expect([seed, p.open().map((c) => c.n)]).toEqual([seed, m.open()]);
    expect(p.size).toBe(m.open().length);
  }
});
