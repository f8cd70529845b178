/** The replay fold's rows and views: what a turn and a call read as, snapshots, withdrawn calls. */
import { expect, test } from "bun:test";
import { createReplayFold, replaySession } from "../../src/rollout/folds/replay.ts";
import { buildTrace } from "../../src/rollout/folds/trace.ts";
import { logBuilder } from "./_events.ts";

function session() {
  const log = logBuilder("s");
  const add = (ms: number, e: Parameters<typeof log.add>[0]) => log.at(ms).add(e);
  add(0, { type: "turn.started", turnId: "turn-0" });
  add(10, { type: "model.request", turnId: "turn-0", provider: "p", model: "m" });
  add(20, { type: "function.call", turnId: "turn-0", tool: "Bash", callId: "a", args: { command: "ls" } });
  add(30, { type: "function.call", turnId: "turn-0", tool: "Write", callId: "w", args: { path: "x" } });
  const denial = {
    type: "function.denied",
    turnId: "turn-0",
    tool: "Write",
    callId: "w",
    source: "user",
  } as const;
  add(35, { ...denial, args: { path: "x" } });
  add(50, {
    type: "function.output",
    turnId: "turn-0",
    tool: "Bash",
    callId: "a",
    output: "a.txt",
    failed: false,
  });
  add(60, { type: "function.call", turnId: "turn-0", tool: "Read" }); // never answered
  add(70, { type: "turn.aborted", turnId: "turn-0", reason: "user" });
  return log.events;
}

test("a turn reads its fields, its calls (the withdrawn one left out) and refusals; lastAt follows its events", () => {
  const r = replaySession("s", session());
  expect([r.totalTurns, r.totalCalls, r.totalDenied]).toEqual([1, 2, 1]);
  const turn = r.turns[0]!;
  expect(JSON.parse(JSON.stringify(turn))).toEqual({
    turnKey: "turn-0#1",
    turnId: "turn-0",
    startedAt: 1_700_000_000_000,
    seq: 1,
    lastAt: 1_700_000_000_070,
    calls: [
      {
        tool: "Bash",
        seq: 3,
        at: 1_700_000_000_020,
        done: true,
        callId: "a",
        args: { command: "ls" },
        output: "a.txt",
        failed: false,
        duration_ms: 30,
      },
      { tool: "Read", seq: 7, at: 1_700_000_000_060, done: false },
    ],
    denied: [{ tool: "Write", seq: 5, source: "user", args: { path: "x" } }],
    modelRequests: 1,
    aborted: true,
    abortReason: "user",
  });
  // Fields read like plain ones; lists and arguments are fresh on every read.
  expect([turn.aborted, turn.implicit, turn.calls[1]!.failed, turn.calls[1]!.args]).toEqual([
    true,
    undefined,
    undefined,
    undefined,
  ]);
  expect(turn.calls).not.toBe(turn.calls);
  (turn.calls[0]!.args as { command: string }).command = "changed";
  expect(turn.calls[0]!.args).toEqual({ command: "ls" });
  expect(Bun.inspect(turn.calls[0])).toContain('command: "ls"');
});

test("finish() snapshots are plain objects, equal to the sealed views' plain form, and the fold goes on", () => {
  const events = session();
  const fold = createReplayFold("s", { maxOutputChars: 3 });
  for (const e of events.slice(0, 6)) fold.push(e);
  const early = fold.finish();
  expect(early.turns[0]!.calls.map((c) => c.done)).toEqual([true]);
  expect(early.turns[0]!.calls[0]!.output).toBe("a.t…");
  for (const e of events.slice(6)) fold.push(e);
  const snapshot = fold.finish();
  const sealed = fold.seal();
  expect(snapshot).toEqual(JSON.parse(JSON.stringify(sealed)));
  expect(() => fold.finish()).toThrow(/after seal/);
});

test("calls that reuse one id are answered in order, in the replay and the trace alike; none is lost", () => {
  const log = logBuilder("s");
  const call = (tool: string, callId: string | undefined, n: number) =>
    log.add({ type: "function.call", turnId: "turn-0", tool, ...(callId ? { callId } : {}), args: { n } });
  const output = (tool: string, callId: string | undefined, out: string) =>
    log.add({ type: "function.output", turnId: "turn-0", tool, ...(callId ? { callId } : {}), output: out });
  log.add({ type: "turn.started", turnId: "turn-0" });
  call("Bash", "x", 1);
  call("Bash", "x", 2);
  call("Bash", "x", 3);
  call("Read", undefined, 4);
  output("Bash", "x", "first");
  output("Bash", undefined, "no id"); // no known id: an id-less Bash call first (none), then the oldest with one
  output("Read", "unknown", "read"); // an unknown id: the id-less Read call
  const events = log.events;
  const r = replaySession("s", events);
  const calls = r.turns[0]!.calls.map((c) => [(c.args as { n: number }).n, c.output ?? null]);
  expect(calls).toEqual([
    [1, "first"],
    [2, "no id"],
    [3, null],
    [4, "read"],
  ]);
  const t = buildTrace("s", events);
  expect(t.toolSpans.map((s) => [(s.args as { n: number }).n, s.outputSeq])).toEqual([
    [1, events[5]!.seq],
    [2, events[6]!.seq],
    [4, events[7]!.seq],
  ]);
  // The third call with the id is still open: the trace lists it as pending rather than losing it.
  expect(t.pendingCalls.map((p) => [p.callId, (p.args as { n: number }).n])).toEqual([["x", 3]]);
});

test("call ids like __proto__, constructor and 1 pair like any other", () => {
  const log = logBuilder("s");
  const ids = ["__proto__", "constructor", "toString", "1", "hasOwnProperty"];
  log.add({ type: "turn.started", turnId: "turn-0" });
  for (const [n, callId] of ids.entries())
    log.add({ type: "function.call", turnId: "turn-0", tool: "Bash", callId, args: { n } });
  for (const callId of [...ids].reverse())
    log.add({ type: "function.output", turnId: "turn-0", tool: "Bash", callId, output: callId });
  const r = replaySession("s", log.events);
  expect(r.turns[0]!.calls.map((c) => [c.callId, c.output])).toEqual(ids.map((id) => [id, id]));
  const t = buildTrace("s", log.events);
  expect(t.toolSpans.map((s) => [s.callId, (s.args as { n: number }).n])).toEqual(
    ids.map((id, n) => [id, n]),
  );
  expect(t.pendingCalls).toEqual([]);
  expect(({} as { n?: number }).n).toBeUndefined(); // the shared prototype is untouched
});

test("--max-output clips a structured output too, as its JSON text", () => {
  const log = logBuilder("s");
  log.add({ type: "turn.started", turnId: "turn-0" });
  log.add({ type: "function.call", turnId: "turn-0", tool: "mcp", callId: "c1", args: {} });
  log.add({
    type: "function.output",
    turnId: "turn-0",
    tool: "mcp",
    callId: "c1",
    output: { rows: ["x".repeat(50)] },
  });
  log.add({ type: "function.call", turnId: "turn-0", tool: "mcp", callId: "c2", args: {} });
  log.add({ type: "function.output", turnId: "turn-0", tool: "mcp", callId: "c2", output: { ok: 1 } });
  const fold = createReplayFold("s", { maxOutputChars: 10 });
  for (const e of log.events) fold.push(e);
  const calls = fold.finish().turns[0]!.calls;
  expect(calls.map((c) => c.output)).toEqual(['{"rows":["…', { ok: 1 }]);
});

test("an output written before its call (two processes, one log) is that call's: one call, in the replay and the trace alike", () => {
  const log = logBuilder("s");
  log.at(0).add({ type: "turn.started", turnId: "turn-0" });
  log
    .at(1000)
    .add({ type: "function.output", turnId: "turn-0", tool: "Write", callId: "w", output: "wrote" });
  log.at(1100).add({
    type: "function.output",
    turnId: "turn-0",
    tool: "Edit",
    callId: "e",
    failed: true,
    duration_ms: 40,
  });
  log.at(1200).add({ type: "function.output", turnId: "turn-0", tool: "Bash", callId: "lost", output: "?" });
  log.at(1300).add({
    type: "function.call",
    turnId: "turn-0",
    tool: "Write",
    callId: "w",
    args: { file_path: "a.txt", content: "x" },
  });
  log.at(1400).add({
    type: "function.call",
    turnId: "turn-0",
    tool: "Edit",
    callId: "e",
    args: { file_path: "b.txt" },
  });
  // Another tool under the id is not that output's call: it waits for its own.
  log.at(1500).add({
    type: "function.call",
    turnId: "turn-0",
    tool: "Read",
    callId: "lost",
    args: { file_path: "c.txt" },
  });
  const events = log.events;
  const r = replaySession("s", events);
  expect(r.totalCalls).toBe(4);
  const calls = r.turns[0]!.calls.map((c) => [
    c.tool,
    c.seq,
    c.done,
    (c.args as { file_path?: string } | undefined)?.file_path ?? null,
  ]);
  // In call order, as the trace lists them (an output with no call at its own place).
  expect(calls).toEqual([
    ["Bash", events[3]!.seq, true, null],
    ["Write", events[4]!.seq, true, "a.txt"],
    ["Edit", events[5]!.seq, true, "b.txt"],
    ["Read", events[6]!.seq, false, "c.txt"],
  ]);
  expect(r.turns[0]!.calls.map((c) => c.duration_ms)).toEqual([0, 0, 40, undefined]);
  const t = buildTrace("s", events);
  expect(t.toolSpans.map((s) => [s.tool, s.callSeq, s.outputSeq, s.unpaired ?? false, s.turnKey])).toEqual([
    ["Bash", events[3]!.seq, events[3]!.seq, true, "turn-0#1"],
    ["Write", events[4]!.seq, events[1]!.seq, false, "turn-0#1"],
    ["Edit", events[5]!.seq, events[2]!.seq, false, "turn-0#1"],
  ]);
  expect((t.toolSpans[1]!.args as { file_path: string }).file_path).toBe("a.txt");
  // The write that ran counts as a changed file; the failed edit does not.
  expect(t.changedFiles).toEqual(["a.txt"]);
  expect(t.pendingCalls.map((p) => p.tool)).toEqual(["Read"]);
});

test("after a resume, an output with a reused id answers the resumed process's call, not the dead one's", () => {
  const log = logBuilder("s");
  log.at(0).add({ type: "session.started", reason: "new" });
  log.add({ type: "turn.started", turnId: "t1" });
  log.at(100).add({ type: "function.call", turnId: "t1", tool: "Bash", callId: "call_1", args: { n: 1 } });
  // The process died with call_1 open; the next one counts its ids from 1 again.
  log.at(5000).add({ type: "session.started", reason: "resume" });
  log.add({ type: "turn.started", turnId: "t1" });
  log.at(5100).add({ type: "function.call", turnId: "t1", tool: "Bash", callId: "call_1", args: { n: 2 } });
  log.at(5300).add({ type: "function.call", turnId: "t1", tool: "Bash", callId: "call_1", args: { n: 3 } });
  log.at(5400).add({ type: "function.output", turnId: "t1", tool: "Bash", callId: "call_1", output: "two" });
  const events = log.events;
  const r = replaySession("s", events);
  const calls = r.turns.flatMap((t) =>
    t.calls.map((c) => [(c.args as { n: number }).n, c.output ?? null, c.duration_ms ?? null]),
  );
  expect(calls).toEqual([
    [1, null, null],
    [2, "two", 300],
    [3, null, null],
  ]);
  const t = buildTrace("s", events);
  expect(t.toolSpans.map((s) => [(s.args as { n: number }).n, s.duration_ms, s.turnKey])).toEqual([
    [2, 300, "t1#2"],
  ]);
  expect(t.pendingCalls.map((p) => (p.args as { n: number }).n)).toEqual([1, 3]);
});

test("regression: a log of 1,000 resumes, each leaving a call open under a reused id, folds in about the time of the same log without them (it took cubic time: 65 s at 2,000)", () => {
  const make = (resumes: boolean) => {
    const log = logBuilder("s");
    for (let p = 0; p < 1000; p++) {
      if (resumes || p === 0) log.add({ type: "session.started", reason: p ? "resume" : "new" });
      log.add({ type: "turn.started", turnId: "turn-0" });
      log.add({ type: "function.call", turnId: "turn-0", tool: "Bash", callId: "c1", args: { p } });
      for (let i = 0; i < 20; i++) {
        log.add({ type: "function.call", turnId: "turn-0", tool: "Bash", callId: "c1", args: { p, i } });
        log.add({ type: "function.output", turnId: "turn-0", tool: "Bash", callId: "c1", output: "o" });
      }
    }
    return log.events;
  };
  const time = (events: ReturnType<typeof make>) => {
    const t0 = performance.now();
    const t = buildTrace("s", events);
    const r = replaySession("s", events);
    return {
      ms: performance.now() - t0,
      spans: t.toolSpans.length,
      open: t.pendingCalls.length,
      calls: r.totalCalls,
    };
  };
  const plain = make(false);
  const resumed = make(true);
  time(plain); // warm up
  const a = time(plain);
  const b = time(resumed);
  // After each resume the outputs answer the new process's calls: the dead one's stays open.
  expect([b.spans, b.open, b.calls]).toEqual([20_000, 1000, 21_000]);
  expect(b.ms).toBeLessThan(Math.max(10 * a.ms, 2000));
}, 60_000);

test("regression: an output ahead of its call takes no open call of another id, even of its tool (parallel writes: one was shown as the other's, and the other never answered)", () => {
  const log = logBuilder("s");
  log.add({ type: "turn.started", turnId: "turn-0" });
  log.add({
    type: "function.call",
    turnId: "turn-0",
    tool: "Write",
    callId: "c1",
    args: { file_path: "src/login.ts" },
  });
  log.add({
    type: "function.output",
    turnId: "turn-0",
    tool: "Write",
    callId: "c2",
    output: "wrote src/other.ts",
    duration_ms: 5,
  });
  log.add({
    type: "function.call",
    turnId: "turn-0",
    tool: "Write",
    callId: "c2",
    args: { file_path: "src/other.ts" },
  });
  log.add({
    type: "function.output",
    turnId: "turn-0",
    tool: "Write",
    callId: "c1",
    output: "wrote src/login.ts",
    duration_ms: 9,
  });
  // An id-less call is still answered by an output naming an id no call has.
  log.add({ type: "function.call", turnId: "turn-0", tool: "Bash", args: { command: "ls" } });
  log.add({ type: "function.output", turnId: "turn-0", tool: "Bash", callId: "x9", output: "a.txt" });
  const events = log.events;
  const t = buildTrace("s", events);
  expect(
    t.toolSpans.map((s) => [
      s.callId,
      (s.args as Record<string, string>)?.file_path ?? (s.args as Record<string, string>)?.command,
      s.duration_ms,
      s.unpaired ?? false,
    ]),
  ).toEqual([
    ["c1", "src/login.ts", 9, false],
    ["c2", "src/other.ts", 5, false],
    ["x9", "ls", 0, false],
  ]);
  expect(t.pendingCalls).toEqual([]);
  expect(t.changedFiles).toEqual(["src/login.ts", "src/other.ts"]);
  const r = replaySession("s", events);
  expect(r.turns[0]!.calls.map((c) => [c.callId, c.output, c.done])).toEqual([
    ["c1", "wrote src/login.ts", true],
    ["c2", "wrote src/other.ts", true],
    ["x9", "a.txt", true],
  ]);
});

test("regression: 60,000 id-less calls left open in one turn cost the next turn's 60,000 pairs about nothing in the trace and replay (each output searched past them)", () => {
  const make = (leftOpen: boolean) => {
    const log = logBuilder("s");
    log.add({ type: "turn.started", turnId: "t0" });
    if (leftOpen)
      for (let i = 0; i < 60_000; i++)
        log.add({ type: "function.call", turnId: "t0", tool: "Bash", args: { i } });
    log.add({ type: "turn.started", turnId: "t1" });
    for (let i = 0; i < 60_000; i++) {
      log.add({ type: "function.call", turnId: "t1", tool: "Bash", args: { i } });
      log.add({ type: "function.output", turnId: "t1", tool: "Bash", output: "o" });
    }
    return log.events;
  };
  const time = (events: ReturnType<typeof make>) => {
    const t0 = performance.now();
    const t = buildTrace("s", events);
    const r = replaySession("s", events);
    return {
      ms: performance.now() - t0,
      spans: t.toolSpans.length,
      open: t.pendingCalls.length,
      calls: r.totalCalls,
    };
  };
  time(make(false)); // warm up
  const base = time(make(false));
  const open = time(make(true));
  expect([open.spans, open.open, open.calls]).toEqual([60_000, 60_000, 120_000]);
  expect(open.ms).toBeLessThan(Math.max(5 * base.ms, 2000));
}, 60_000);
