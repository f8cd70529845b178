/**
 * Tool arguments (trace, replay) and outputs (replay) of a log file's events are read back from their
 * lines when asked for (the folds keep the line's place, not a copy), or held when the log was read
 * whole in one small block: they equal what the same events folded from memory give, incremental
 * reads keep them, and a log changed under a Trace or Replay is an error, never another event's
 * field.
 */
import { afterAll, expect, test } from "bun:test";
import { appendFileSync, mkdtempSync, renameSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { replaySession } from "../../src/rollout/folds/replay.ts";
import { buildTrace, createTraceFold } from "../../src/rollout/folds/trace.ts";
import { foldRollout, loadReplay, loadTrace } from "../../src/rollout/load.ts";
import { logBuilder } from "./_events.ts";

const dir = mkdtempSync(join(tmpdir(), "freecode-trace-args-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const BIG = { file_path: "src/é.ts", content: `${'line ✓ "quoted" \\ back\n'.repeat(12_000)}` };

function calls(n: number, from = 0) {
  const log = logBuilder("s");
  for (let i = from; i < from + n; i++) {
    const args =
      i % 3 === 0
        ? BIG
        : i % 3 === 1
          ? { command: `echo ${i}`, argv: ["a", i, null, { deep: [true] }] }
          : "bare";
    log.add({ type: "function.call", tool: i % 3 === 0 ? "Write" : "Bash", callId: `c${i}`, args });
    const output = i % 3 === 0 ? "ok" : i % 3 === 1 ? { stdout: `${i} ✓`, exit: 0 } : `${i} ✓`.repeat(i);
    log.add({ type: "function.output", tool: i % 3 === 0 ? "Write" : "Bash", callId: `c${i}`, output });
    if (i % 10 === 9)
      log.add({ type: "function.denied", tool: "Write", args: BIG, source: "user", reason: "no" });
  }
  return log.events;
}

function writeLog(name: string, events: object[]) {
  const path = join(dir, name);
  writeFileSync(path, events.map((e) => `${JSON.stringify(e)}\n`).join(""));
  return path;
}

test("arguments read back from the log equal the arguments folded from memory, read in any order", async () => {
  const events = calls(30);
  const file = writeLog("a.jsonl", events);
  const fromFile = await loadTrace({ file, sessionId: "s" });
  const fromMemory = buildTrace("s", events);
  expect(fromFile.toolSpans.length).toBe(30);
  expect(JSON.stringify(fromFile)).toBe(JSON.stringify(fromMemory));
  for (const i of [29, 0, 15, 3]) expect(fromFile.toolSpans[i]!.args).toEqual(fromMemory.toolSpans[i]!.args);
  // Fresh on every read: changing one read does not change the next.
  (fromFile.toolSpans[1]!.args as { argv: unknown[] }).argv.push("changed");
  expect(fromFile.toolSpans[1]!.args).toEqual(fromMemory.toolSpans[1]!.args);
  expect(fromFile.changedFiles).toEqual(["src/é.ts"]);
  // Denials' arguments are read back the same way.
  expect(fromFile.deniedSpans.length).toBe(3);
  expect(fromFile.deniedSpans[2]).toEqual(fromMemory.deniedSpans[2]!);
  expect(fromFile.deniedSpans[2]!.args).toEqual(BIG);
});

test("calls still open at the end: their arguments read back too, and their paths are not changed files", async () => {
  const log = logBuilder("s");
  log.add({ type: "function.call", tool: "Write", callId: "w1", args: BIG });
  log.add({ type: "function.output", tool: "Write", callId: "w1", output: "ok" });
  log.add({ type: "function.call", tool: "Write", callId: "w2", args: { ...BIG, file_path: "src/open.ts" } });
  log.add({ type: "function.call", tool: "Bash", callId: "b1", args: { command: "make" } });
  const file = writeLog("open.jsonl", log.events);
  const fromFile = await loadTrace({ file, sessionId: "s" });
  const fromMemory = buildTrace("s", log.events);
  expect(JSON.stringify(fromFile.pendingCalls)).toBe(JSON.stringify(fromMemory.pendingCalls));
  expect(fromFile.pendingCalls.map((p) => (p.args as { file_path?: string }).file_path)).toEqual([
    "src/open.ts",
    undefined,
  ]);
  expect(fromFile.changedFiles).toEqual(["src/é.ts"]);
  expect(fromMemory.changedFiles).toEqual(["src/é.ts"]);
});

test("a fold read in several passes (as trace --follow reads) keeps each call's place", async () => {
  const file = writeLog("follow.jsonl", calls(4));
  const fold = createTraceFold("s");
  const first = await foldRollout({ file }, fold);
  appendFileSync(
    file,
    calls(5, 4)
      .map((e, i) => `${JSON.stringify({ ...e, seq: 9 + i })}\n`)
      .join(""),
  );
  await foldRollout({ file }, fold, { fromOffset: first.offset, firstLineNo: first.nextLineNo });
  const snapshot = fold.finish();
  expect(snapshot.toolSpans.map((s) => s.callId)).toEqual([
    "c0",
    "c1",
    "c2",
    "c3",
    "c4",
    "c5",
    "c6",
    "c7",
    "c8",
  ]);
  expect(snapshot.toolSpans[6]!.args).toEqual(BIG);
  expect(snapshot.toolSpans[7]!.args).toEqual({ command: "echo 7", argv: ["a", 7, null, { deep: [true] }] });
});

test("a log replaced or rewritten under a Trace: its arguments fail with a clear error, the rest still reads", async () => {
  const events = calls(10);
  const file = writeLog("b.jsonl", events);
  const replaced = await loadTrace({ file });
  const rewritten = await loadTrace({ file });
  // An atomic replace puts another file at the path.
  writeFileSync(`${file}.tmp`, events.map((e) => `${JSON.stringify(e)}\n`).join(""));
  renameSync(`${file}.tmp`, file);
  expect(() => replaced.toolSpans[0]!.args).toThrow(/another file is at its path now/);
  expect(() => JSON.stringify(replaced.deniedSpans)).toThrow(/another file is at its path now/);
  expect(replaced.toolSpans.map((s) => s.tool).slice(0, 3)).toEqual(["Write", "Bash", "Bash"]);
  expect(replaced.deniedSpans.map((s) => s.reason)).toEqual(["no"]);
  const fresh = await loadTrace({ file });
  expect(fresh.toolSpans[0]!.args).toEqual(BIG);
  // Rewritten in place (same file, other lines): the line found is checked against the call. (A
  // Trace that read a block before keeps it: those are the lines it folded.)
  const inPlace = await loadTrace({ file });
  const moved = calls(3, 1).map((e, i) => ({ ...e, seq: 1 + ((i + 2) % 6) })); // seq 3 at the start
  writeFileSync(file, moved.map((e) => `${JSON.stringify(e)}\n`).join(""));
  expect(() => inPlace.toolSpans[0]!.args).toThrow(/the line at byte 0 is not the call of seq 1 any more/);
  expect(() => inPlace.toolSpans[1]!.args).toThrow(/is not the call of seq 3 any more/);
  expect(() => rewritten.toolSpans[0]!.args).toThrow(/another file is at its path now/);
});

test("a replay read from a log equals the replay of the same events in memory, clipped the same way", async () => {
  const events = calls(30);
  const file = writeLog("replay.jsonl", events);
  for (const options of [{}, { maxOutputChars: 5 }]) {
    const fromFile = await loadReplay({ file, sessionId: "s" }, options);
    const fromMemory = replaySession("s", events, options);
    expect(JSON.stringify(fromFile)).toBe(JSON.stringify(fromMemory));
    // Turns and calls are views: their plain forms compare (see README, "views").
    expect(fromFile.turns.map((t) => JSON.parse(JSON.stringify(t)))).toEqual(
      JSON.parse(JSON.stringify(fromMemory.turns)),
    );
    expect(fromFile.turns[0]!.calls.map((c) => c.output)).toEqual(
      fromMemory.turns[0]!.calls.map((c) => c.output),
    );
    expect(fromFile.turns[0]!.calls[27]!.args).toEqual(BIG);
    expect(fromFile.turns[0]!.denied[0]!.args).toEqual(BIG);
  }
  expect((await loadReplay({ file }, { maxOutputChars: 5 })).turns[0]!.calls[2]!.output).toBe("2 ✓2 …");
  // Replaced under the replay: its fields fail clearly, its structure still reads.
  const replay = await loadReplay({ file });
  writeFileSync(`${file}.tmp`, "{}\n");
  renameSync(`${file}.tmp`, file);
  expect(() => replay.turns[0]!.calls[1]!.output).toThrow(/another file is at its path now/);
  expect(replay.turns[0]!.calls.length).toBe(30);
});

test("a small log read whole holds its fields: read without the file, a fresh copy each time", async () => {
  const args = (seq: number) => JSON.parse(`{"n":${seq},"list":[1,{"x":"é"}],"__proto__":{"p":1}}`);
  const events = calls(4).map((e) => (e.type === "function.call" ? { ...e, args: args(e.seq) } : e));
  const file = writeLog("small.jsonl", events);
  const trace = await loadTrace({ file });
  const replay = await loadReplay({ file, sessionId: "s" });
  unlinkSync(file);
  const want = events.filter((e) => e.type === "function.call").map((e) => args(e.seq));
  expect(replay.turns[0]!.calls.map((c) => c.args)).toEqual(want);
  expect(trace.toolSpans.map((s) => s.args)).toEqual(want);
  // Each read is a copy: changing one changes neither the trace nor the next read.
  const first = trace.toolSpans[0]!.args as { list: unknown[] };
  first.list.push("changed");
  expect(trace.toolSpans[0]!.args).toEqual(want[0]);
  expect(Object.hasOwn(first, "__proto__")).toBe(true);
  expect(Object.getPrototypeOf(first)).toBe(Object.prototype);
});

test("a log grown after a small first read holds the first read's fields, and reads the rest back", async () => {
  const first = calls(2).map((e) => (e.type === "function.call" ? { ...e, args: { n: e.seq } } : e));
  const file = writeLog("grows.jsonl", first);
  const fold = createTraceFold("s");
  const pos = await foldRollout({ file }, fold);
  const more = calls(2, 2).map((e) => ({ ...e, seq: e.seq + first.length, args: { m: e.seq } }));
  appendFileSync(file, more.map((e) => `${JSON.stringify(e)}\n`).join(""));
  await foldRollout({ file }, fold, { fromOffset: pos.offset!, firstLineNo: pos.nextLineNo! });
  const trace = fold.seal();
  // A read of another log takes the line reader's block (read back, not held); then the file goes.
  const other = writeLog("other.jsonl", calls(2));
  expect((await loadTrace({ file: other })).toolSpans[1]!.args).toMatchObject({ command: "echo 1" });
  unlinkSync(file);
  expect(trace.toolSpans.slice(0, 2).map((s) => s.args)).toEqual([{ n: 1 }, { n: 3 }]);
  expect(() => trace.toolSpans[2]!.args).toThrow(/is gone now/);
});
