/** The trace fold, given events → expected spans: threshold edges, turn keys, pairing, changed files. */
import { describe, expect, test } from "bun:test";
import {
  changedPaths,
  DEFAULT_CHANGED_FILE_TOOLS,
  pathsFromPatch,
} from "../../src/rollout/folds/changed-files.ts";
import { buildTrace, createTraceFold, DEFAULT_HANG_MS } from "../../src/rollout/folds/trace.ts";
import { FIXTURE_SOURCE, logBuilder, readRollout } from "./_events.ts";

const req = { type: "model.request", turnId: "turn-0", provider: "p", model: "m", streamed: true } as const;

function openRequestAged(
  ageMs: number,
  options: { hangMs?: number; stallMs?: number; useNow?: boolean } = {},
) {
  const log = logBuilder().at(0).add({ type: "turn.started", turnId: "turn-0" }).add(req);
  if (!options.useNow) log.at(ageMs).add({ type: "hook.triggered", hookName: "tick" });
  const now = options.useNow ? 1_700_000_000_000 + ageMs : undefined;
  return buildTrace("s", log.events, { hangMs: options.hangMs, stallMs: options.stallMs, now });
}

describe("open requests at the hang threshold", () => {
  test("default threshold is 300 000 ms", () => expect(DEFAULT_HANG_MS).toBe(300_000));
  test("one millisecond under the threshold: in_flight", () => {
    const t = openRequestAged(DEFAULT_HANG_MS - 1);
    expect(t.modelSpans[0]).toMatchObject({ status: "in_flight", duration_ms: 299_999 });
    expect([t.inFlight, t.hung]).toEqual([true, false]);
  });
  test("exactly at the threshold: hung", () => {
    const t = openRequestAged(DEFAULT_HANG_MS);
    expect(t.modelSpans[0]).toMatchObject({ status: "hung", duration_ms: 300_000 });
    expect([t.inFlight, t.hung]).toEqual([false, true]);
  });
  test("a custom threshold, aged against now instead of the last event", () => {
    expect(openRequestAged(999, { hangMs: 1000, useNow: true }).modelSpans[0]!.status).toBe("in_flight");
    expect(openRequestAged(1000, { hangMs: 1000, useNow: true }).modelSpans[0]!.status).toBe("hung");
  });
  test("a finished log is aged against its own last event, whatever the clock says", () => {
    const t = openRequestAged(10);
    expect(t.modelSpans[0]!.status).toBe("in_flight");
    expect(t.asOf).toBe(1_700_000_000_010);
  });
  test("finish(now) re-ages a live fold without losing its state (--follow)", () => {
    const fold = createTraceFold("s", { hangMs: 5000 });
    for (const e of logBuilder().add(req).events) fold.push(e);
    expect(fold.finish(1_700_000_004_999).modelSpans[0]!.status).toBe("in_flight");
    expect(fold.finish(1_700_000_005_000).modelSpans[0]!.status).toBe("hung");
    expect(fold.finish().modelSpans[0]!.status).toBe("in_flight");
  });
  test("a session that ended is aged against its end even when finish() is given the clock", () => {
    const fold = createTraceFold("s", { hangMs: 5000 });
    for (const e of logBuilder().add(req).at(2_000).add({ type: "session.ended", reason: "exit" }).events)
      fold.push(e);
    const t = fold.finish(1_700_009_000_000); // --follow passes Date.now()
    expect(t.wall_ms).toBe(2_000);
    expect(t.modelSpans[0]).toMatchObject({ status: "in_flight", duration_ms: 2_000 });
  });
  test("a response closes the span: never hung however long it took", () => {
    const log = logBuilder()
      .add(req)
      .at(400_000)
      .add({ ...req, type: "model.response", duration_ms: 400_000 });
    const t = buildTrace("s", log.events);
    expect(t.modelSpans[0]).toMatchObject({ status: "ok", duration_ms: 400_000 });
    expect(t.hung).toBe(false);
  });
});

describe("stall before the first token", () => {
  test("an open streamed request with no first token: flagged at the stall threshold, not before", () => {
    expect(openRequestAged(59_999).modelSpans[0]!.stalledBeforeFirstToken).toBeUndefined();
    expect(openRequestAged(60_000).modelSpans[0]!.stalledBeforeFirstToken).toBe(true);
    expect(openRequestAged(60_000).stalls).toBe(1);
  });
  test("a first token clears it; a slow first token is flagged", () => {
    const fast = logBuilder()
      .add(req)
      .at(100)
      .add({ type: "model.first_token", turnId: "turn-0", ttft_ms: 100 });
    fast.at(90_000).add({ type: "hook.triggered", hookName: "tick" });
    expect(buildTrace("s", fast.events).modelSpans[0]!.stalledBeforeFirstToken).toBeUndefined();
    const slow = logBuilder()
      .add(req)
      .at(70_000)
      .add({ type: "model.first_token", turnId: "turn-0", ttft_ms: 70_000 });
    expect(buildTrace("s", slow.events).modelSpans[0]!.stalledBeforeFirstToken).toBe(true);
  });
  test("a non-streamed request is never a stall", () => {
    const log = logBuilder()
      .add({ ...req, streamed: false })
      .at(120_000)
      .add({ type: "hook.triggered", hookName: "x" });
    expect(buildTrace("s", log.events).modelSpans[0]!.stalledBeforeFirstToken).toBeUndefined();
  });
});

describe("turn keys", () => {
  test("resumed turn-0 is a new turn, and its response closes its own request", () => {
    const log = logBuilder()
      .add({ type: "session.started" })
      .add({ type: "turn.started", turnId: "turn-0" })
      .add({ type: "turn.started", turnId: "turn-1" })
      .add({ type: "session.started", reason: "resume" })
      .add({ type: "turn.started", turnId: "turn-0" })
      .add(req)
      .add({ ...req, type: "model.response", duration_ms: 5 });
    const t = buildTrace("s", log.events);
    expect(t.turns.map((x) => x.turnKey)).toEqual(["turn-0#1", "turn-1#1", "turn-0#2"]);
    expect(t.modelSpans[0]).toMatchObject({ turnKey: "turn-0#2", status: "ok" });
  });
  test("a repeated turn.started without session.started also opens a new key", () => {
    const log = logBuilder()
      .add({ type: "turn.started", turnId: "turn-0" })
      .add({ type: "turn.started", turnId: "turn-0" });
    expect(buildTrace("s", log.events).turns.map((x) => x.turnKey)).toEqual(["turn-0#1", "turn-0#2"]);
  });
  test("a response for another turn id falls back to the oldest open request", () => {
    const log = logBuilder()
      .add(req)
      .add({ ...req, type: "model.response", turnId: "turn-9", duration_ms: 1 });
    const t = buildTrace("s", log.events);
    expect(t.modelSpans).toHaveLength(1);
    expect(t.modelSpans[0]!.status).toBe("ok");
  });
});

describe("tool pairing", () => {
  test("without callIds: FIFO per tool name", () => {
    const log = logBuilder()
      .add({ type: "function.call", tool: "Bash", args: { command: "a" } })
      .add({ type: "function.call", tool: "Read", args: { file_path: "x" } })
      .add({ type: "function.call", tool: "Bash", args: { command: "b" } })
      .add({ type: "function.output", tool: "Bash", duration_ms: 1 })
      .add({ type: "function.output", tool: "Bash", duration_ms: 2, failed: true });
    const t = buildTrace("s", log.events);
    expect(t.toolSpans.map((s) => [s.tool, (s.args as { command: string }).command, s.failed])).toEqual([
      ["Bash", "a", undefined],
      ["Bash", "b", true],
    ]);
    expect(t.pendingCalls.map((p) => p.tool)).toEqual(["Read"]);
  });
  test("callIds win over order; an output with no call is an unpaired span", () => {
    const log = logBuilder()
      .add({ type: "function.call", tool: "Bash", callId: "a" })
      .add({ type: "function.call", tool: "Bash", callId: "b" })
      .add({ type: "function.output", tool: "Bash", callId: "b", duration_ms: 1 })
      .add({ type: "function.output", tool: "Grep", duration_ms: 3 });
    const t = buildTrace("s", log.events);
    expect(t.toolSpans.map((s) => [s.callId, s.callSeq, s.unpaired ?? false])).toEqual([
      ["b", 2, false],
      [undefined, 4, true],
    ]);
    expect(t.pendingCalls.map((p) => p.callId)).toEqual(["a"]);
  });
  test("a denial withdraws the announced call: it never ran and changes no file", () => {
    const log = logBuilder()
      .add({ type: "function.call", tool: "Write", callId: "w", args: { file_path: "x.ts" } })
      .add({
        type: "function.denied",
        tool: "Write",
        callId: "w",
        source: "user",
        args: { file_path: "x.ts" },
      });
    const t = buildTrace("s", log.events);
    expect([t.toolSpans.length, t.pendingCalls.length, t.deniedSpans.length, t.changedFiles.length]).toEqual([
      0, 0, 1, 0,
    ]);
  });
  test("10 000 calls paired by callId keep the pending queue small", () => {
    const log = logBuilder();
    for (let i = 0; i < 10_000; i++) {
      log.add({ type: "function.call", tool: "Bash", callId: `c${i}` });
      log.add({ type: "function.output", tool: "Bash", callId: `c${i}`, duration_ms: 1 });
    }
    const t = buildTrace("s", log.events);
    expect([t.toolSpans.length, t.pendingCalls.length, t.tool_ms]).toEqual([10_000, 0, 10_000]);
  });
});

describe("changed files", () => {
  const map = DEFAULT_CHANGED_FILE_TOOLS;
  test.each([
    ["Write", { file_path: "/a/w.ts" }, ["/a/w.ts"]],
    ["Edit", { file_path: "e.ts" }, ["e.ts"]],
    ["MultiEdit", { file_path: "m.ts", edits: [] }, ["m.ts"]],
    ["NotebookEdit", { notebook_path: "n.ipynb" }, ["n.ipynb"]],
    ["write", { filePath: "o.ts" }, ["o.ts"]],
    ["edit", { path: "f.ts" }, ["f.ts"]],
    ["write_file", { file_path: "g.ts" }, ["g.ts"]],
    ["replace", { file_path: "r.ts" }, ["r.ts"]],
    ["apply_patch", "*** Begin Patch\n*** Delete File: old.ts\n*** End Patch", ["old.ts"]],
    ["apply_patch", { input: "*** Update File: u.ts\n*** Move to: v.ts\n" }, ["u.ts", "v.ts"]],
    ["shell", { command: ["apply_patch", "*** Add File: n.md\n+x\n"] }, ["n.md"]],
    ["shell", { command: ["bash", "-lc", "sed -i s/a/b/ f.ts"] }, []],
    ["shell_command", { command: "apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: s.ts\n" }, ["s.ts"]],
    ["Read", { file_path: "r.ts" }, []],
  ] as const)("%s %j → %j", (tool, args, expected) => {
    expect(changedPaths(tool, args, map)).toEqual([...expected]);
  });
  test("config overrides an entry and adds tools", () => {
    const log = logBuilder()
      .add({ type: "function.call", tool: "save", callId: "1", args: { target: "t.txt" } })
      .add({ type: "function.output", tool: "save", callId: "1" });
    expect(buildTrace("s", log.events, { changedFileTools: { save: ["target"] } }).changedFiles).toEqual([
      "t.txt",
    ]);
    expect(buildTrace("s", log.events).changedFiles).toEqual([]);
  });
  test("patch paths with trailing spaces are trimmed", () => {
    expect(pathsFromPatch("*** Update File: a b.ts  \n")).toEqual(["a b.ts"]);
  });
});

describe("snapshots and sealing (spans are rows until handed out)", () => {
  test("each finish() hands out fresh objects: changing one snapshot leaves the next alone", () => {
    const fold = createTraceFold("s");
    const log = logBuilder()
      .add({ type: "turn.started", turnId: "turn-0" })
      .add(req)
      .add({ ...req, type: "model.response", toolCalls: ["Edit"] })
      .add({
        type: "function.call",
        turnId: "turn-0",
        tool: "Edit",
        callId: "c1",
        args: { file_path: "a.ts" },
      })
      .add({ type: "function.output", turnId: "turn-0", tool: "Edit", callId: "c1" });
    for (const e of log.events) fold.push(e);
    const first = fold.finish();
    first.modelSpans[0]!.toolCalls.push("mutated");
    first.toolSpans[0]!.turnKey = "mutated";
    const second = fold.seal();
    expect(second.modelSpans[0]!.toolCalls).toEqual(["Edit"]);
    expect(second.toolSpans[0]).toMatchObject({ turnKey: "turn-0#1", args: { file_path: "a.ts" } });
    expect(second.changedFiles).toEqual(["a.ts"]);
    expect(() => fold.finish()).toThrow("after seal");
  });

  test("the sealed Trace's views read exactly like the snapshot's plain objects, field by field", async () => {
    const events = [];
    for await (const e of readRollout(FIXTURE_SOURCE)) events.push(e);
    const fold = createTraceFold("fixture-session");
    for (const e of events) fold.push(e);
    const snapshot = fold.finish();
    const sealed = fold.seal();
    expect(JSON.stringify(sealed)).toBe(JSON.stringify(snapshot));
    expect(sealed.toolSpans.length).toBeGreaterThan(0);
    for (const key of ["turns", "modelSpans", "toolSpans"] as const) {
      const plain = snapshot[key] as unknown as Record<string, unknown>[];
      const views = sealed[key] as unknown as Record<string, unknown>[];
      expect(views).toHaveLength(plain.length);
      plain.forEach((p, i) => {
        for (const [field, value] of Object.entries(p)) expect(views[i]![field]).toEqual(value);
      });
    }
  });

  test("views are read-only; arguments are parsed afresh on each read", () => {
    const log = logBuilder()
      .add({ type: "turn.started", turnId: "turn-0" })
      .add({
        type: "function.call",
        turnId: "turn-0",
        tool: "Bash",
        callId: "c1",
        args: { command: "ls é 🚀" },
      })
      .add({ type: "function.output", turnId: "turn-0", tool: "Bash", callId: "c1", failed: false });
    const span = buildTrace("s", log.events).toolSpans[0]!;
    expect(() => {
      (span as { tool: string }).tool = "Write";
    }).toThrow();
    expect(span.tool).toBe("Bash");
    expect(span.args).toEqual({ command: "ls é 🚀" });
    expect(span.args).not.toBe(span.args);
    expect(span.failed).toBe(false);
    expect(Bun.inspect(span)).toContain("ls é 🚀");
  });

  test("outputs out of call order: spans sorted by call, index is the position, rows untouched", () => {
    const log = logBuilder().add({ type: "turn.started", turnId: "turn-0" });
    for (const id of ["a", "b", "c"])
      log.add({ type: "function.call", turnId: "turn-0", tool: `T${id}`, callId: id });
    for (const id of ["c", "a", "b"])
      log.add({ type: "function.output", turnId: "turn-0", tool: `T${id}`, callId: id });
    const t = buildTrace("s", log.events);
    expect(t.toolSpans.map((s) => [s.index, s.tool, s.callSeq, s.outputSeq])).toEqual([
      [0, "Ta", 2, 6],
      [1, "Tb", 3, 7],
      [2, "Tc", 4, 5],
    ]);
  });

  test("the sealed Trace's lists are made on first read, and can be replaced (as `trace --slow` does)", () => {
    const log = logBuilder()
      .add({ type: "turn.started", turnId: "turn-0" })
      .add({ type: "function.call", turnId: "turn-0", tool: "Bash", callId: "c1" })
      .add({ type: "function.output", turnId: "turn-0", tool: "Bash", callId: "c1" });
    const t = buildTrace("s", log.events);
    expect(Object.keys(t)).toContain("toolSpans");
    const first = t.toolSpans;
    expect(t.toolSpans).toBe(first);
    const copy = { ...t };
    expect(copy.toolSpans).toBe(first);
    t.toolSpans = [];
    expect(t.toolSpans).toEqual([]);
  });
});

describe("events without spans of their own", () => {
  test("subagents, hooks, context overflows and checkpoints are counted by type; none: no field", () => {
    const log = logBuilder()
      .add({ type: "session.started", projectPath: "/p" })
      .add({ type: "hook.triggered", hookName: "lint", hookEvent: "PostToolUse" })
      .add({ type: "hook.triggered", hookName: "lint", hookEvent: "PostToolUse" })
      .add({ type: "hook.blocked", hookName: "guard", reason: "secret in diff" })
      .add({ type: "subagent.start", subagentId: "a1", task: "search" })
      .add({ type: "context.overflow", beforeTokens: 210_000 });
    const t = buildTrace("s", log.events);
    expect(t.otherEvents).toEqual({
      "hook.triggered": 2,
      "hook.blocked": 1,
      "subagent.start": 1,
      "context.overflow": 1,
    });
    expect(t.projectPath).toBe("/p");
    expect(buildTrace("s", logBuilder().add({ type: "session.started" }).events).otherEvents).toBeUndefined();
  });
});

describe("a response closes the request of its model", () => {
  test("only a date or a version number after the name makes a dated id: gpt-4o-mini's is not gpt-4o's, claude-sonnet-4-5's not claude-sonnet-4's; gemini-2.0-flash-001 is gemini-2.0-flash's", () => {
    const log = logBuilder().at(0).add({ type: "turn.started", turnId: "t" });
    const ask = (model: string, at: number) =>
      log.at(at).add({ type: "model.request", turnId: "t", provider: "openai", model });
    const answer = (model: string, at: number, inputTokens: number) =>
      log.at(at).add({
        type: "model.response",
        turnId: "t",
        provider: "openai",
        model,
        inputTokens,
        outputTokens: 1,
      });
    ask("gpt-4o", 100);
    ask("gpt-4o-mini", 200);
    ask("claude-sonnet-4", 300);
    ask("claude-sonnet-4-5", 400);
    ask("gemini-2.5-pro", 450);
    ask("gemini-2.0-flash", 460);
    answer("gpt-4o-mini-2024-07-18", 500, 1_000_000);
    answer("claude-sonnet-4-5@20250929", 600, 5);
    answer("gemini-2.0-flash-001", 700, 3);
    answer("gpt-4o-2024-08-06", 9000, 10);
    answer("claude-sonnet-4-20250514-v1:0", 9500, 7);
    answer("gemini-2.5-pro", 9600, 4);
    const t = buildTrace("s", log.events);
    expect(t.modelSpans.map((m) => [m.model, m.inputTokens, m.duration_ms])).toEqual([
      ["gpt-4o", 10, 8900],
      ["gpt-4o-mini", 1_000_000, 300],
      ["claude-sonnet-4", 7, 9200],
      ["claude-sonnet-4-5", 5, 200],
      ["gemini-2.5-pro", 4, 9150],
      ["gemini-2.0-flash", 3, 240],
    ]);
  });
});
