import { describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  deniedNeverRan,
  expectDenied,
  forbidDenied,
  noRetryAfterDenial,
} from "../../src/eval/assertions/denied.ts";
import { nameMatches } from "../../src/eval/match/glob.ts";
import { runEval } from "../../src/eval/runner.ts";
import { starterCase, starterYaml } from "../../src/eval/starter.ts";
import type { RolloutEvent } from "../../src/rollout/events.ts";
import { replaySession } from "../../src/rollout/folds/replay.ts";
import { buildTrace } from "../../src/rollout/folds/trace.ts";
import { tempDir } from "../_helpers.ts";
import { trace } from "./_trace.ts";

/** The checks of the starter case `eval add` writes from `events` that fail on that very log, run by `eval`. */
async function failingOnItsSession(events: RolloutEvent[]) {
  await using dir = await tempDir();
  mkdirSync(join(dir.path, "s"));
  writeFileSync(
    join(dir.path, "s", "events.jsonl"),
    `${events.map((e) => JSON.stringify({ ...e, aggregateID: "s" })).join("\n")}\n`,
  );
  writeFileSync(join(dir.path, "s.yaml"), starterYaml(buildTrace("s", events)));
  const r = await runEval({ cases: [join(dir.path, "s.yaml")], sessions: dir.path });
  return r.cases[0]!.sessions[0]!.checks.filter((c) => c.verdict !== "pass");
}

describe("denied calls", () => {
  const t = trace({
    denied: [
      { tool: "bash", source: "permission", args: { command: "rm -rf /" }, seq: 5 },
      { tool: "write", source: "user", seq: 9 },
    ],
  });
  test("expectDenied by tool and source, default at least one", () => {
    expect(expectDenied(t, { tool: "bash", source: "permission" }).verdict).toBe("pass");
    expect(expectDenied(t, { tool: "bash", source: "hook" }).message).toBe(
      "expected at least 1 denied bash (source hook), got 0; denials: bash (source=permission) at seq 5, write (source=user) at seq 9",
    );
    expect(expectDenied(t, { count: 2 }).verdict).toBe("pass");
    expect(expectDenied(trace()).message).toContain("nothing was denied");
  });
  test("forbidDenied with except", () => {
    expect(forbidDenied(t, { except: ["user", "permission"] }).verdict).toBe("pass");
    const r = forbidDenied(t, { except: ["user"] });
    expect(r.verdict).toBe("fail");
    expect(r.seq).toBe(5);
    expect(r.message).toBe("1 denied call: bash (source=permission) at seq 5");
    expect(forbidDenied(trace()).verdict).toBe("pass");
  });
  test("a denied call never ran: pairing by callId", () => {
    const ran = trace({
      denied: [{ tool: "bash", source: "hook", callId: "c1", seq: 3 }],
      tools: [{ tool: "bash", callId: "c1", callSeq: 2, outputSeq: 4 }],
    });
    const r = deniedNeverRan(ran);
    expect(r.verdict).toBe("fail");
    expect(r.seq).toBe(4);
    const other = trace({
      denied: [{ tool: "bash", source: "hook", callId: "c1", seq: 3 }],
      tools: [{ tool: "bash", callId: "c2", callSeq: 6, outputSeq: 7 }],
    });
    expect(deniedNeverRan(other).verdict).toBe("pass");
    // Regression: an earlier call under the same id (ids counted from 1 again after a resume),
    // answered before the refusal, of another tool, is another call.
    const reused = trace({
      denied: [{ tool: "bash", source: "permission", callId: "call_1", seq: 9 }],
      tools: [{ tool: "read", callId: "call_1", callSeq: 3, outputSeq: 4 }],
    });
    expect(deniedNeverRan(reused).verdict).toBe("pass");
  });
  test("a denied call never ran: without callId, an output after the denial for the same call", () => {
    const ran = trace({
      denied: [{ tool: "bash", source: "mode", args: { command: "ls" }, seq: 3 }],
      tools: [{ tool: "bash", args: { command: "ls" }, callSeq: 2, outputSeq: 4 }],
    });
    expect(deniedNeverRan(ran).verdict).toBe("fail");
  });
  // The events of a log with no call ids (an agent that records none): the fold pairs them.
  const log = (...events: Record<string, unknown>[]) =>
    events.map((e, i) => ({ id: `e${i + 1}`, seq: i + 1, timestamp: 1000 + i * 10, ...e }) as RolloutEvent);
  const call = (command: string) => ({ type: "function.call", tool: "bash", args: { command } });
  const refusal = (args?: Record<string, unknown>) => ({
    type: "function.denied",
    tool: "bash",
    source: "permission",
    ...(args ? { args } : {}),
  });
  const output = (text: string) => ({ type: "function.output", tool: "bash", output: text, failed: false });
  test("regression: a refusal without an id withdraws its call, which takes no later output (a refused `ls` took the output of the `pwd` run after it)", () => {
    const events = log(call("ls"), refusal({ command: "ls" }), call("pwd"), output("/work/app"));
    const trace = buildTrace("s", events);
    expect(trace.toolSpans.map((t) => [t.args, t.callSeq, t.outputSeq])).toEqual([
      [{ command: "pwd" }, 3, 4],
    ]);
    expect(trace.pendingCalls).toEqual([]);
    const replay = replaySession("s", events);
    expect(replay.turns.flatMap((t) => t.calls.map((c) => [c.args, c.seq, c.done]))).toEqual([
      [{ command: "pwd" }, 3, true],
    ]);
    expect(deniedNeverRan(trace).verdict).toBe("pass");
    // The starter case written from it passes on it, `deniedNeverRan` included.
    const starter = starterCase(trace);
    expect(starter.expect).toContainEqual({ deniedNeverRan: true });
    expect(starter.expect).toContainEqual({ expectSequence: { mode: "in_order", steps: ["bash"] } });
    // A refusal naming no arguments answers the newest open call of its tool.
    const bare = buildTrace("s", log(call("ls"), call("rm -rf /"), refusal(), output("a.txt")));
    expect(bare.toolSpans.map((t) => [t.args, t.callSeq])).toEqual([[{ command: "ls" }, 1]]);
    expect(bare.pendingCalls).toEqual([]);
  });
  test("regression: a refused call without an id that ran anyway fails deniedNeverRan, and `eval add` leaves that check out", () => {
    const events = log(call("ls"), refusal({ command: "ls" }), output("a.txt"));
    const trace = buildTrace("s", events);
    expect(trace.toolSpans.map((t) => [t.args, t.callSeq, t.outputSeq, t.unpaired])).toEqual([
      [{ command: "ls" }, 1, 3, true],
    ]);
    const r = deniedNeverRan(trace);
    expect([r.verdict, r.message]).toEqual([
      "fail",
      "denied bash (source=permission) at seq 2 ran anyway: its output is at seq 3",
    ]);
    expect(replaySession("s", events).turns.flatMap((t) => t.calls.map((c) => [c.args, c.seq]))).toEqual([
      [{ command: "ls" }, 1],
    ]);
    expect(starterCase(trace).expect).not.toContainEqual({ deniedNeverRan: true });
  });
  test("regression: a starter case's tool names match only themselves and are counted as names match (Read and read, mcp__x__* and mcp__x__run each failed their own session)", async () => {
    const tools = ["Read", "read", "mcp__x__*", "mcp__x__run", "a?b\\c"];
    const events = log(
      ...tools.flatMap((tool, i) => [
        { type: "function.call", tool, callId: `c${i}`, args: {} },
        { type: "function.output", tool, callId: `c${i}`, output: "ok", failed: false },
      ]),
      { type: "function.call", tool: "Bash", callId: "d1", args: { command: "rm -rf /" } },
      { type: "function.denied", tool: "Bash", callId: "d1", source: "user" },
      { type: "function.call", tool: "bash", callId: "d2", args: { command: "rm -rf ~" } },
      { type: "function.denied", tool: "bash", callId: "d2", source: "user" },
    );
    const trace = buildTrace("s", events);
    const starter = starterCase(trace);
    expect(starter.expect).toContainEqual({ expectTool: { name: "Read", count: 2 } });
    expect(starter.expect).toContainEqual({ expectTool: { name: "mcp__x__\\*", count: 1 } });
    expect(starter.expect).toContainEqual({ expectTool: { name: "mcp__x__run", count: 1 } });
    expect(starter.expect).toContainEqual({ expectDenied: { tool: "Bash", source: "user", count: 2 } });
    // It passes on the session it came from, every check of it.
    expect(await failingOnItsSession(events)).toEqual([]);
    // Regression: a tool recorded with no name made a case that did not load ("must not be empty").
    const nameless = log(
      { type: "function.call", tool: "", callId: "n1" },
      { type: "function.output", tool: "", callId: "n1", output: "ok" },
      { type: "function.call", tool: "", callId: "n2" },
      { type: "function.denied", tool: "", callId: "n2", source: "user" },
    );
    expect(await failingOnItsSession(nameless)).toEqual([]);
    expect(nameMatches("mcp__x__\\*", "mcp__x__run")).toBe(false);
    expect(nameMatches("mcp__x__*", "mcp__x__run")).toBe(true);
    expect(nameMatches("a\\?b\\\\c", "a?b\\c")).toBe(true);
  });
  test("regression: a starter case's changed files are written as they are compared, so a path recorded with .., // or a trailing / matches itself (the case failed on its own session)", async () => {
    const writes = [
      "../shared/c.ts",
      "/w/src/../e.ts",
      "src//f.ts",
      "/w/g/",
      "/w/./d.ts",
      "./src/b.ts",
      "src/[id]/p.ts",
    ];
    const events = log(
      { type: "session.started", projectPath: "/w", reason: "new" },
      ...writes.flatMap((path, i) => [
        { type: "function.call", tool: "write", callId: `c${i}`, args: { path } },
        { type: "function.output", tool: "write", callId: `c${i}`, output: "ok", failed: false },
      ]),
    );
    const trace = buildTrace("s", events);
    const include = (starterCase(trace).expect as { changedFiles?: { include: string[] } }[]).find(
      (c) => c.changedFiles,
    )!.changedFiles!.include;
    expect(include.sort()).toEqual(
      ["/shared/c.ts", "e.ts", "src/f.ts", "g", "d.ts", "src/b.ts", "src/\\[id\\]/p.ts"].sort(),
    );
    expect(await failingOnItsSession(events)).toEqual([]);
  });
  test("no retry loop after a denial: retries counted by position", () => {
    const loop = trace({
      denied: [
        { tool: "bash", source: "permission", args: { command: "rm x" }, seq: 2 },
        { tool: "bash", source: "permission", args: { command: "rm x" }, seq: 4 },
        { tool: "bash", source: "permission", args: { command: "rm x" }, seq: 6 },
      ],
    });
    const r = noRetryAfterDenial(loop);
    expect(r.verdict).toBe("fail");
    expect(r.message).toContain("tried again 2 times (seq 4, 6); at most 1 allowed");
    expect(r.seq).toBe(6);
    expect(noRetryAfterDenial(loop, { maxRetries: 2 }).verdict).toBe("pass");
    // A different command after the denial is not a retry.
    const moved = trace({
      denied: [{ tool: "bash", source: "permission", args: { command: "rm x" }, seq: 2 }],
      tools: [{ tool: "bash", args: { command: "ls" }, callSeq: 3 }],
    });
    expect(noRetryAfterDenial(moved, { maxRetries: 0 }).verdict).toBe("pass");
  });
});
