/**
 * Deriving a rollout-only thread: each call the rollout alone holds lands in the turn it happened in
 * (the last turn that started at or before it, in order), whether the turns are in time order (a
 * binary search) or not; and a long log derives in time (a scan per call once took minutes).
 */
import { expect, test } from "bun:test";
import { buildTrace } from "../../src/rollout/folds/trace.ts";
import type { EventRecord, StoredMessage } from "../../src/storage/records.ts";
import { deriveThread, ROLLOUT_OUTPUT_CHARS } from "../../src/threads/derive.ts";
import { OUTPUT_CHARS } from "../../src/threads/output-text.ts";
import { seeded } from "../_random.ts";

function log(entries: { type: string; at: number; fields?: Record<string, unknown> }[]): EventRecord[] {
  return entries.map((e, i) => ({
    type: e.type,
    id: `e${i}`,
    seq: i + 1,
    aggregateID: "s",
    timestamp: e.at,
    ...e.fields,
  })) as EventRecord[];
}

/** The rule written the obvious way: the last turn in order that started at or before `at`. */
function expectedTurn(starts: number[], at: number): number {
  let found = -1;
  starts.forEach((s, i) => {
    if (s <= at) found = i;
  });
  return found === -1 ? 0 : found;
}

test("calls land in the turn they happened in, with turns in time order or not (THREAD_SEEDS)", () => {
  const seeds = Number(process.env.THREAD_SEEDS) || 60;
  for (let seed = 1; seed <= seeds; seed++) {
    const r = seeded(seed);
    const sorted = r.chance(0.5);
    const starts: number[] = [];
    const entries: { type: string; at: number; fields?: Record<string, unknown> }[] = [];
    let t = 1000;
    for (let i = 0; i < 1 + r.int(30); i++) {
      t += r.int(50);
      const at = sorted ? t : 1000 + r.int(2000);
      starts.push(at);
      entries.push({ type: "turn.started", at, fields: { turnId: `turn-${i}` } });
      for (let c = r.int(4); c > 0; c--)
        entries.push({
          type: "function.call",
          at: 900 + r.int(2500),
          fields: { tool: "Bash", callId: `c${entries.length}`, args: { n: entries.length } },
        });
    }
    const { turns } = deriveThread("s", undefined, [], log(entries));
    expect(turns).toHaveLength(starts.length);
    const landed = new Map<number, number>();
    turns.forEach((turn, i) => {
      for (const c of turn.toolCalls) landed.set((c.args as { n: number }).n, i);
    });
    for (const [i, e] of entries.entries()) {
      if (e.type !== "function.call") continue;
      expect([seed, i, landed.get(i)]).toEqual([seed, i, expectedTurn(starts, e.at)]);
    }
  }
});

// A scan of every turn per call took minutes here (150,000 calls × 50,000 turns): the test's
// generous timeout catches that without timing anything finer (it takes ~0.4 s).
test("a rollout-only session of 200,000 events derives, each call in its turn", () => {
  const entries: { type: string; at: number; fields?: Record<string, unknown> }[] = [];
  for (let i = 0; i < 50_000; i++) {
    entries.push({ type: "turn.started", at: i * 10, fields: { turnId: `turn-${i}` } });
    for (let c = 0; c < 3; c++)
      entries.push({ type: "function.call", at: i * 10 + c, fields: { tool: "Read", callId: `c${i}-${c}` } });
  }
  const { turns } = deriveThread("s", undefined, [], log(entries));
  expect(turns).toHaveLength(50_000);
  expect(turns.every((t, i) => t.toolCalls.length === 3 && t.toolCalls[0]!.callId === `c${i}-0`)).toBe(true);
}, 30_000);

test("a rollout-only call and its refusal are one denied call; a refusal written before its call is one alone, and the call another attempt, as in the trace", () => {
  for (const order of ["call first", "denial first"]) {
    const call = {
      type: "function.call",
      at: 1010,
      fields: { tool: "bash", callId: "c1", args: { command: "rm -rf build/" } },
    };
    const denial = {
      type: "function.denied",
      at: 1011,
      fields: { tool: "bash", callId: "c1", source: "permission" },
    };
    const entries = [
      { type: "turn.started", at: 1000, fields: { turnId: "t" } },
      ...(order === "call first" ? [call, denial] : [denial, call]),
      {
        type: "function.call",
        at: 1020,
        fields: { tool: "bash", callId: "c2", args: { command: "npm run clean" } },
      },
      { type: "function.output", at: 1030, fields: { tool: "bash", callId: "c2", duration_ms: 10 } },
    ];
    const events = log(entries);
    const { turns } = deriveThread("s", undefined, [], events);
    const calls = turns[0]!.toolCalls.map((c) => [
      c.callId,
      c.deniedBy ?? null,
      (c.args as { command?: string } | undefined)?.command ?? null,
    ]);
    expect([order, calls]).toEqual([
      order,
      order === "call first"
        ? [
            ["c1", "permission", "rm -rf build/"],
            ["c2", null, "npm run clean"],
          ]
        : // Regression: search made the two one denied call; the trace keeps the call open.
          [
            ["c1", "permission", null],
            ["c1", null, "rm -rf build/"],
            ["c2", null, "npm run clean"],
          ],
    ]);
    const trace = buildTrace("s", events as never);
    expect([order, trace.deniedSpans.length, trace.pendingCalls.length]).toEqual([
      order,
      1,
      order === "call first" ? 0 : 1,
    ]);
  }
});

test("regression: a resumed session numbering its turns from turn-0 again has its calls paired within each turn, as the trace pairs them", () => {
  // Search keyed turns by their id alone: the output answered the first process's call.
  for (const resume of [false, true]) {
    const entries = [
      { type: "session.started", at: 1000, fields: { reason: "new" } },
      { type: "turn.started", at: 1001, fields: { turnId: "turn-0" } },
      { type: "function.call", at: 1002, fields: { tool: "Bash", args: { command: "first" } } },
      ...(resume ? [{ type: "session.started", at: 1003, fields: { reason: "resume" } }] : []),
      { type: "turn.started", at: 1004, fields: { turnId: "turn-0" } },
      { type: "function.call", at: 1005, fields: { tool: "Bash", args: { command: "second" } } },
      { type: "function.output", at: 1006, fields: { tool: "Bash", turnId: "turn-0", output: "ok" } },
    ];
    const events = log(entries);
    const answered = deriveThread("s", undefined, [], events)
      .turns.flatMap((t) => t.toolCalls)
      .filter((c) => c.result !== undefined)
      .map((c) => (c.args as { command: string }).command);
    expect([resume, answered]).toEqual([resume, ["second"]]);
    const trace = buildTrace("s", events as never);
    expect(trace.toolSpans.map((s) => s.callSeq)).toEqual([resume ? 6 : 5]);
  }
});

test("regression: in a session the rollout alone holds, an output with no id that no call waits for is a call of its own, as the trace shows it", () => {
  const events = log([
    { type: "turn.started", at: 1000, fields: { turnId: "t" } },
    { type: "function.output", at: 1010, fields: { tool: "Bash", turnId: "t", output: "stray" } },
  ]);
  const calls = deriveThread("s", undefined, [], events).turns.flatMap((t) => t.toolCalls);
  expect(calls.map((c) => [c.name, c.result])).toEqual([["Bash", "stray"]]);
  expect(buildTrace("s", events as never).toolSpans).toHaveLength(1);
});

test("a rollout-only output written before its call is that call's: one call, with its arguments and output", () => {
  const entries = [
    { type: "turn.started", at: 1000, fields: { turnId: "t" } },
    { type: "function.output", at: 1010, fields: { tool: "bash", callId: "c1", output: "built" } },
    { type: "function.call", at: 1011, fields: { tool: "bash", callId: "c1", args: { command: "make" } } },
    { type: "function.output", at: 1020, fields: { tool: "bash", callId: "c2", output: "?" } },
    // Another tool under the id is a call of its own.
    { type: "function.call", at: 1021, fields: { tool: "read", callId: "c2", args: { file_path: "x" } } },
  ];
  const { turns } = deriveThread("s", undefined, [], log(entries));
  expect(turns[0]!.toolCalls.map((c) => [c.name, c.callId, c.args ?? null, c.result ?? null])).toEqual([
    ["bash", "c1", { command: "make" }, "built"],
    ["bash", "c2", null, "?"],
    ["read", "c2", { file_path: "x" }, null],
  ]);
});

test("regression: search pairs rollout-only outputs as the trace does — a second output of an answered id is its own, an id-less call takes a new id's output, a call whose output came first is listed in call order", () => {
  const entries = [
    { type: "turn.started", at: 1000, fields: { turnId: "t" } },
    {
      type: "function.call",
      at: 1001,
      fields: { tool: "bash", callId: "c1", args: { command: "npm test" } },
    },
    {
      type: "function.output",
      at: 1002,
      fields: { tool: "bash", callId: "c1", output: "first", duration_ms: 11 },
    },
    {
      type: "function.output",
      at: 1003,
      fields: { tool: "bash", callId: "c1", output: "dup", duration_ms: 22 },
    },
    {
      type: "function.call",
      at: 1004,
      fields: { tool: "bash", callId: "c1", args: { command: "rm -rf build" } },
    },
    {
      type: "function.output",
      at: 1005,
      fields: { tool: "bash", callId: "c1", output: "removed", duration_ms: 33, failed: true },
    },
    { type: "function.call", at: 1006, fields: { tool: "bash", args: { command: "ls" } } },
    { type: "function.output", at: 1007, fields: { tool: "bash", callId: "x9", output: "a.txt" } },
    { type: "function.output", at: 1008, fields: { tool: "read", callId: "r1", output: "READ" } },
    { type: "function.call", at: 1009, fields: { tool: "grep", callId: "g1", args: { pattern: "x" } } },
    { type: "function.output", at: 1010, fields: { tool: "grep", callId: "g1", output: "G" } },
    { type: "function.call", at: 1011, fields: { tool: "read", callId: "r1", args: { file_path: "a.ts" } } },
  ];
  const { turns } = deriveThread("s", undefined, [], log(entries));
  expect(
    turns[0]!.toolCalls.map((c) => [
      c.name,
      c.callId ?? null,
      c.args ?? null,
      c.result ?? null,
      c.failed ?? false,
    ]),
  ).toEqual([
    ["bash", "c1", { command: "npm test" }, "first", false],
    ["bash", "c1", null, "dup", false],
    ["bash", "c1", { command: "rm -rf build" }, "removed", true],
    ["bash", "x9", { command: "ls" }, "a.txt", false],
    ["grep", "g1", { pattern: "x" }, "G", false],
    ["read", "r1", { file_path: "a.ts" }, "READ", false],
  ]);
});

test("regression: an output without a known id answers an id-less call of its own turn first, as the trace does (it took the oldest of any turn)", () => {
  const entries = [
    { type: "turn.started", at: 1000, fields: { turnId: "t1" } },
    { type: "function.call", at: 1001, fields: { tool: "bash", turnId: "t1", args: { command: "ls one" } } },
    { type: "turn.started", at: 2000, fields: { turnId: "t2" } },
    { type: "function.call", at: 2001, fields: { tool: "bash", turnId: "t2", args: { command: "ls two" } } },
    {
      type: "function.output",
      at: 2002,
      fields: { tool: "bash", turnId: "t2", callId: "x9", output: "TWO" },
    },
    {
      type: "function.call",
      at: 2003,
      fields: { tool: "bash", turnId: "t2", args: { command: "ls three" } },
    },
    { type: "function.output", at: 2004, fields: { tool: "bash", turnId: "t2", output: "THREE" } },
  ];
  const { turns } = deriveThread("s", undefined, [], log(entries));
  expect(
    turns.map((t) => t.toolCalls.map((c) => [(c.args as { command: string }).command, c.result ?? null])),
  ).toEqual([
    [["ls one", null]],
    [
      ["ls two", "TWO"],
      ["ls three", "THREE"],
    ],
  ]);
});

test("a log of 100,000 outputs ahead of their calls derives in about the time of one in order (a scan per call made it quadratic)", () => {
  const n = 100_000;
  const make = (outputsFirst: boolean) => {
    const entries = [{ type: "turn.started", at: 1000, fields: { turnId: "t" } as Record<string, unknown> }];
    const outputs = Array.from({ length: n }, (_, i) => ({
      type: "function.output",
      at: 0,
      fields: { tool: "read", callId: `o${i}`, output: "x" },
    }));
    const calls = Array.from({ length: n }, (_, i) => ({
      type: "function.call",
      at: 0,
      fields: { tool: "read", callId: `o${i}`, args: { n: i } },
    }));
    const body = outputsFirst ? [...outputs, ...calls] : calls.flatMap((c, i) => [c, outputs[i]!]);
    for (const [i, e] of body.entries()) e.at = 1001 + i;
    return log([...entries, ...body]);
  };
  const time = (events: ReturnType<typeof make>) => {
    const t0 = performance.now();
    const { turns } = deriveThread("s", undefined, [], events);
    return { ms: performance.now() - t0, order: turns[0]!.toolCalls.map((c) => (c.args as { n: number }).n) };
  };
  const inOrder = make(false);
  time(inOrder); // warm up
  const base = time(inOrder);
  const ahead = time(make(true));
  expect(ahead.order).toEqual(base.order);
  expect(ahead.ms).toBeLessThan(Math.max(5 * base.ms, 1000));
});

test("regression: in a rollout-only session an output with no id answers the oldest open call of its tool that has one, of its turn first, as the trace does (it was left out, the call never answered)", () => {
  const entries = [
    { type: "turn.started", at: 1000, fields: { turnId: "t1" } },
    {
      type: "function.call",
      at: 1001,
      fields: { tool: "bash", turnId: "t1", callId: "a", args: { command: "one" } },
    },
    { type: "turn.started", at: 2000, fields: { turnId: "t2" } },
    {
      type: "function.call",
      at: 2001,
      fields: { tool: "bash", turnId: "t2", callId: "b", args: { command: "two" } },
    },
    { type: "function.output", at: 2002, fields: { tool: "bash", turnId: "t2", output: "TWO" } },
    { type: "function.output", at: 2003, fields: { tool: "bash", turnId: "t2", output: "ONE" } },
  ];
  const { turns } = deriveThread("s", undefined, [], log(entries));
  expect(turns.map((t) => t.toolCalls.map((c) => [c.callId, c.result ?? null]))).toEqual([
    [["a", "ONE"]],
    [["b", "TWO"]],
  ]);
});

test("regression: an event naming no turn belongs to the turn last started, as in the trace — an output with none answers that turn's id-less call", () => {
  const entries = [
    { type: "turn.started", at: 1000, fields: { turnId: "t0" } },
    { type: "function.call", at: 1001, fields: { tool: "bash", args: { command: "first-never-answered" } } },
    { type: "turn.started", at: 2000, fields: { turnId: "t1" } },
    { type: "function.call", at: 2001, fields: { tool: "bash", args: { command: "second-answered" } } },
    { type: "function.output", at: 2002, fields: { tool: "bash", failed: true, duration_ms: 4000 } },
  ];
  const { turns } = deriveThread("s", undefined, [], log(entries));
  expect(
    turns.map((t) => t.toolCalls.map((c) => [(c.args as { command: string }).command, c.failed ?? false])),
  ).toEqual([[["first-never-answered", false]], [["second-answered", true]]]);
});

test("60,000 id-less calls left open in one turn cost the next turn's 60,000 pairs about nothing (a search per output made it quadratic)", () => {
  const n = 60_000;
  const make = (leftOpen: boolean) => {
    const entries: { type: string; at: number; fields: Record<string, unknown> }[] = [
      { type: "turn.started", at: 0, fields: { turnId: "t0" } },
    ];
    if (leftOpen)
      for (let i = 0; i < n; i++)
        entries.push({ type: "function.call", at: 0, fields: { tool: "bash", turnId: "t0", args: { i } } });
    entries.push({ type: "turn.started", at: 0, fields: { turnId: "t1" } });
    for (let i = 0; i < n; i++) {
      entries.push({ type: "function.call", at: 0, fields: { tool: "bash", turnId: "t1", args: { i } } });
      entries.push({ type: "function.output", at: 0, fields: { tool: "bash", turnId: "t1", output: "o" } });
    }
    for (const [i, e] of entries.entries()) e.at = 1000 + i;
    return log(entries);
  };
  const time = (events: ReturnType<typeof make>) => {
    const t0 = performance.now();
    const { turns } = deriveThread("s", undefined, [], events);
    return {
      ms: performance.now() - t0,
      answered: turns.at(-1)!.toolCalls.filter((c) => c.result === "o").length,
    };
  };
  time(make(false)); // warm up
  const base = time(make(false));
  const open = time(make(true));
  expect(open.answered).toBe(n);
  expect(open.ms).toBeLessThan(Math.max(5 * base.ms, 1500));
});

test("after a resume, a rollout-only output with a reused id answers the resumed process's call", () => {
  const entries = [
    { type: "session.started", at: 900, fields: { reason: "new" } },
    { type: "turn.started", at: 1000, fields: { turnId: "t" } },
    { type: "function.call", at: 1010, fields: { tool: "bash", callId: "call_1", args: { n: 1 } } },
    { type: "session.started", at: 2000, fields: { reason: "resume" } },
    { type: "function.call", at: 2010, fields: { tool: "bash", callId: "call_1", args: { n: 2 } } },
    { type: "function.call", at: 2020, fields: { tool: "bash", callId: "call_1", args: { n: 3 } } },
    { type: "function.output", at: 2030, fields: { tool: "bash", callId: "call_1", output: "two" } },
  ];
  const { turns } = deriveThread("s", undefined, [], log(entries));
  expect(turns[0]!.toolCalls.map((c) => [(c.args as { n: number }).n, c.result ?? null])).toEqual([
    [1, null],
    [2, "two"],
    [3, null],
  ]);
});

test("regression: a turn lasts until its last response or output ended; an abort of a turn with no prompt of its own is not the next turn's", () => {
  const messages = [
    { id: "u1", role: "user", parts: [{ type: "text", content: "list the files" }], timestamp: 1000 },
    {
      id: "a1",
      role: "assistant",
      parts: [{ type: "tool", tool: { name: "bash", args: { command: "ls" } }, callId: "c1" }],
      timestamp: 1010,
    },
    { id: "u2", role: "user", parts: [{ type: "text", content: "and now?" }], timestamp: 8000 },
    { id: "a2", role: "assistant", parts: [{ type: "text", content: "Done." }], timestamp: 8100 },
  ] as StoredMessage[];
  const events = (abortAt: number) =>
    log([
      { type: "turn.started", at: 1000, fields: { turnId: "t1" } },
      { type: "function.call", at: 1010, fields: { tool: "bash", callId: "c1" } },
      { type: "function.output", at: 5000, fields: { tool: "bash", callId: "c1", duration_ms: 3990 } },
      { type: "model.response", at: 6000, fields: { turnId: "t1" } },
      // A turn the user started with a shell command alone (Codex's `!`): no prompt message.
      { type: "turn.started", at: 7000, fields: { turnId: "t-bang" } },
      { type: "turn.aborted", at: abortAt, fields: { turnId: "t-bang" } },
      { type: "turn.started", at: 8000, fields: { turnId: "t2" } },
      { type: "model.response", at: 9000, fields: { turnId: "t2" } },
    ]);
  const { turns } = deriveThread("s", undefined, messages, events(7001));
  expect(turns.map((t) => [t.endedAt - t.startedAt, t.outcome])).toEqual([
    [5000, "no_response"],
    [1000, "answered"],
  ]);
  // An abort inside the second turn is that turn's.
  const inside = deriveThread("s", undefined, messages, events(8500)).turns;
  expect(inside.map((t) => t.outcome)).toEqual(["no_response", "interrupted"]);
});

test("what rollout-only calls printed is kept up to the thread's budget (ROLLOUT_OUTPUT_CHARS), and the rest still finished", () => {
  const calls = Math.ceil(ROLLOUT_OUTPUT_CHARS / OUTPUT_CHARS) + 20;
  const output = `${"z".repeat(OUTPUT_CHARS)}-tail`;
  const entries: { type: string; at: number; fields?: Record<string, unknown> }[] = [
    { type: "turn.started", at: 1, fields: { turnId: "t" } },
  ];
  for (let i = 0; i < calls; i++) {
    entries.push({ type: "function.call", at: 10 + i, fields: { tool: "bash", callId: `c${i}` } });
    entries.push({ type: "function.output", at: 10 + i, fields: { tool: "bash", callId: `c${i}`, output } });
  }
  const { turns } = deriveThread("s", undefined, [], log(entries));
  const kept = turns[0]!.toolCalls.map((c) => c.result as string);
  expect(kept.every((r) => r !== undefined)).toBe(true);
  expect(kept[0]!.endsWith("-tail")).toBe(true);
  expect(kept.at(-1)).toBe("");
  const total = kept.reduce((n, r) => n + r.length, 0);
  expect(total).toBeLessThanOrEqual(ROLLOUT_OUTPUT_CHARS);
  expect(total).toBeGreaterThan(ROLLOUT_OUTPUT_CHARS - OUTPUT_CHARS - 16);
});

test("regression: rollout-only calls that reuse an id are answered in order, as the trace pairs them; a stray output is a call of its own", () => {
  const call = (at: number, command: string) => ({
    type: "function.call",
    at,
    fields: { tool: "Bash", callId: "c1", args: { command } },
  });
  const output = (at: number, text: string, failed = false) => ({
    type: "function.output",
    at,
    fields: { tool: "Bash", callId: "c1", output: text, ...(failed ? { failed } : {}) },
  });
  const calls = (entries: { type: string; at: number; fields?: Record<string, unknown> }[]) =>
    deriveThread(
      "s",
      undefined,
      [],
      log([{ type: "turn.started", at: 1, fields: { turnId: "t" } }, ...entries]),
    ).turns[0]!.toolCalls.map((c) => [
      (c.args as { command?: string } | undefined)?.command ?? null,
      c.result,
      c.failed ?? false,
    ]);
  // Two calls under one id, each answered: two calls, each with its own output (the second failed).
  expect(
    calls([
      call(10, "grep alpha"),
      output(11, "alphaout"),
      call(12, "grep beta"),
      output(13, "betaout", true),
    ]),
  ).toEqual([
    ["grep alpha", "alphaout", false],
    ["grep beta", "betaout", true],
  ]);
  // Both called before either answered: the oldest is answered first.
  expect(calls([call(10, "one"), call(11, "two"), output(12, "first"), output(13, "second")])).toEqual([
    ["one", "first", false],
    ["two", "second", false],
  ]);
  // A second output for a closed call: the call keeps its own, the stray one is a call of its own.
  expect(calls([call(10, "ls"), output(11, "first needle"), output(12, "second haystack")])).toEqual([
    ["ls", "first needle", false],
    [null, "second haystack", false],
  ]);
});

test("regression: a rollout-only session's project is the one its session.started named (the last one)", () => {
  const { thread } = deriveThread(
    "s",
    undefined,
    [],
    log([
      { type: "session.started", at: 1, fields: { projectPath: "/srv/old" } },
      { type: "session.started", at: 2, fields: { projectPath: "/srv/app", reason: "resume" } },
      { type: "turn.started", at: 3, fields: { turnId: "t" } },
    ]),
  );
  expect(thread.projectPath).toBe("/srv/app");
});

test("regression: a refused call that ran anyway is searched as the trace shows it — the refusal with what it refused, the run with its call's arguments from its call's time (the refusal carried the call's arguments and the run none, so search passwd missed it)", () => {
  for (const callArgs of [{ file_path: "/tmp/ok" }, undefined]) {
    const events = log([
      { type: "turn.started", at: 1000, fields: { turnId: "t" } },
      { type: "function.call", at: 1010, fields: { tool: "Write", callId: "c1", args: callArgs } },
      {
        type: "function.denied",
        at: 1020,
        fields: { tool: "Write", callId: "c1", source: "user", args: { file_path: "/etc/passwd" } },
      },
      { type: "function.output", at: 1050, fields: { tool: "Write", callId: "c1", output: "written" } },
    ]);
    const calls = deriveThread("s", undefined, [], events).turns.flatMap((t) => t.toolCalls);
    const ran = callArgs ?? { file_path: "/etc/passwd" };
    expect(calls.map((c) => [c.deniedBy ?? null, c.args, c.timestamp])).toEqual([
      ["user", { file_path: "/etc/passwd" }, 1010],
      [null, ran, 1010],
    ]);
    const trace = buildTrace("s", events as never);
    expect(trace.deniedSpans.map((d) => d.args)).toEqual([{ file_path: "/etc/passwd" }]);
    expect(trace.toolSpans.map((s) => [s.args, s.startedAt])).toEqual([[ran, 1010]]);
  }
});

test("regression: a rollout-only call whose event names its turn lands in that turn, as the trace keys it, though a batch stamped every event with one millisecond (all went to the last turn)", () => {
  const at = 1_700_000_000_000;
  const entries = [
    { type: "turn.started", at, fields: { turnId: "a" } },
    {
      type: "function.call",
      at,
      fields: { turnId: "a", tool: "bash", args: { command: "ls" }, callId: "z1" },
    },
    {
      type: "function.output",
      at,
      fields: { turnId: "a", tool: "bash", output: "ok", duration_ms: 3, callId: "z1" },
    },
    { type: "turn.started", at, fields: { turnId: "b" } },
    {
      type: "function.call",
      at,
      fields: { turnId: "b", tool: "grep", args: { pattern: "x" }, callId: "z2" },
    },
  ];
  const { turns } = deriveThread("s", undefined, [], log(entries));
  expect(turns.map((t) => t.toolCalls.map((c) => c.name))).toEqual([["bash"], ["grep"]]);
  const trace = buildTrace("s", log(entries) as never);
  expect(trace.toolSpans.map((t) => t.turnKey)).toEqual(["a#1"]);
});

test("regression: a long output is cut between words, so no piece of a cut word is searched as a word (batqrs of wombatqrs was found, kangarooxyz cut to kang was not)", async () => {
  const { outputText, OUTPUT_CHARS } = await import("../../src/threads/output-text.ts");
  const { foldedWords } = await import("../../src/threads/words.ts");
  const half = OUTPUT_CHARS / 2;
  const head = `${"a ".repeat((half - 4) / 2)}kangarooxyz `;
  const tail = ` wombatqrs${" b".repeat((half - 6) / 2)}`;
  const text = outputText(`${head}${"middle ".repeat(2000)}${tail}`);
  const words = new Set(foldedWords(text));
  for (const piece of ["kang", "kangar", "batqrs", "qrs"])
    expect([piece, words.has(piece)]).toEqual([piece, false]);
  expect(text.length).toBeLessThanOrEqual(OUTPUT_CHARS + 3);
});

test("regression: calls in the messages that reuse one id across turns keep their own outcomes (all showed the last one's)", () => {
  // An agent numbering its calls anew each turn: `call_1` in three turns; the second was refused,
  // the third failed. The first turn's call was erased from the messages by a compaction in one case.
  for (const erased of [false, true]) {
    const tool = (id: string, ts: number, cmd: string): StoredMessage => ({
      id,
      role: "assistant",
      parts: [{ type: "tool", tool: { name: "Bash", args: { command: cmd } }, callId: "call_1" }],
      timestamp: ts,
    });
    const prompt = (id: string, ts: number): StoredMessage => ({
      id,
      role: "user",
      parts: [{ type: "text", content: `prompt ${id}` }],
      timestamp: ts,
    });
    const messages = [
      ...(erased ? [] : [prompt("p1", 1000), tool("a1", 1001, "ls")]),
      prompt("p2", 2000),
      tool("a2", 2001, "rm -rf /"),
      prompt("p3", 3000),
      tool("a3", 3001, "make"),
    ];
    const events = log([
      { type: "turn.started", at: 1000, fields: { turnId: "t1" } },
      { type: "function.call", at: 1001, fields: { tool: "Bash", callId: "call_1", turnId: "t1" } },
      { type: "function.output", at: 1002, fields: { tool: "Bash", callId: "call_1", duration_ms: 5 } },
      { type: "turn.started", at: 2000, fields: { turnId: "t2" } },
      { type: "function.call", at: 2001, fields: { tool: "Bash", callId: "call_1", turnId: "t2" } },
      { type: "function.denied", at: 2002, fields: { tool: "Bash", callId: "call_1", source: "user" } },
      { type: "turn.started", at: 3000, fields: { turnId: "t3" } },
      { type: "function.call", at: 3001, fields: { tool: "Bash", callId: "call_1", turnId: "t3" } },
      {
        type: "function.output",
        at: 3050,
        fields: { tool: "Bash", callId: "call_1", duration_ms: 49, failed: true },
      },
    ]);
    const { turns } = deriveThread("s", undefined, messages, events);
    const calls = turns
      .filter((t) => t.toolCalls.some((c) => c.timestamp > 1500))
      .flatMap((t) => t.toolCalls.map((c) => [c.durationMs ?? null, c.deniedBy ?? null, c.failed === true]));
    expect([erased, calls]).toEqual([
      erased,
      [
        [null, "user", false],
        [49, null, true],
      ],
    ]);
    if (!erased)
      expect(turns[0]!.toolCalls.map((c) => [c.durationMs, c.failed === true])).toEqual([[5, false]]);
  }
});
