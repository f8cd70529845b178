/**
 * The recorder against real adapters: monotonic ids, seq from the store (two processes appending to
 * one log), urgent flushes, batching, the deny path, on/off rules, flush at exit. A scripted session
 * recorded with a fixed clock is folded and compared to a committed snapshot (golden).
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { createIdGenerator, timeOfId } from "../../src/rollout/ids.ts";
import { loadTrace } from "../../src/rollout/load.ts";
import { createRecorder, rolloutEnabled } from "../../src/rollout/recorder.ts";
import { verifyRollout } from "../../src/rollout/verify.ts";
import { MAX_EVENT_BYTES } from "../../src/storage/_events.ts";
import { openStore } from "../../src/storage/select.ts";
import { BUN, ROOT, tempHome } from "../_helpers.ts";

const REQ = { type: "model.request", turnId: "turn-0", provider: "p", model: "m", streamed: true } as const;

describe("ids", () => {
  test("monotonic and sortable within one millisecond, time recoverable", () => {
    const next = createIdGenerator(() => 1_700_000_000_000);
    const ids = Array.from({ length: 5000 }, next);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(5000);
    expect(ids[0]).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(timeOfId(ids[0]!)).toBe(1_700_000_000_000);
  });
});

describe("rolloutEnabled", () => {
  test("FREECODE_ROLLOUT wins, then test mode, then config", () => {
    expect(rolloutEnabled({})).toBe(true);
    expect(rolloutEnabled({ FREECODE_ROLLOUT: "off" })).toBe(false);
    expect(rolloutEnabled({ NODE_ENV: "test" })).toBe(false);
    expect(rolloutEnabled({ NODE_ENV: "test", FREECODE_ROLLOUT: "on" })).toBe(true);
    expect(rolloutEnabled({}, { rollout: false })).toBe(false);
    expect(rolloutEnabled()).toBe(false); // this very test run
  });
});

describe("recorder", () => {
  test("buffers, flushes in one batch, and model.request goes to disk at once", async () => {
    await using home = await tempHome();
    const { adapter } = await openStore("files", { home: home.path, fsync: "never" });
    const rec = createRecorder({ adapter, sessionId: "s1", enabled: true, flushIntervalMs: 0 });
    rec.record({ type: "session.started" });
    rec.record({ type: "turn.started", turnId: "turn-0" });
    expect(rec.pending).toBe(2);
    await rec.recordNow(REQ);
    expect(rec.pending).toBe(0);
    const t = await loadTrace({ adapter, sessionId: "s1" });
    expect(t.modelSpans[0]!.status).toBe("in_flight");
    expect(t.lastSeq).toBe(3);
    rec.denyToolCall(
      { tool: "Bash", args: { command: "rm -rf /" }, turnId: "turn-0", callId: "c1" },
      "rule",
      "no rm",
    );
    await rec.close();
    const after = await loadTrace({ adapter, sessionId: "s1" });
    expect(after.deniedSpans).toEqual([
      expect.objectContaining({ tool: "Bash", source: "rule", reason: "no rm", seq: 4 }),
    ]);
    expect(after.toolSpans).toEqual([]);
    await adapter.close();
  });

  test("end() records session.ended and closes: the trace is ended, a second end() is a no-op", async () => {
    await using home = await tempHome();
    const { adapter } = await openStore("files", { home: home.path, fsync: "never" });
    const rec = createRecorder({ adapter, sessionId: "s-end", enabled: true, flushIntervalMs: 0 });
    rec.record({ type: "session.started" });
    rec.record({ type: "turn.started", turnId: "turn-0" });
    await rec.end({ status: "completed" });
    await rec.end();
    const t = await loadTrace({ adapter, sessionId: "s-end" });
    expect(t.ended).toBe(true);
    expect(t.eventCount).toBe(3);
    expect(() => rec.record({ type: "turn.started", turnId: "turn-1" })).toThrow(/closed/);
    const lines = [];
    for await (const r of adapter.readEvents("s-end")) lines.push(r.event);
    expect(lines.at(-1)).toMatchObject({ type: "session.ended", reason: "exit", status: "completed" });
    await adapter.close();
  });

  test("invalid events are rejected at record time, naming the field; a disabled recorder still validates", async () => {
    await using home = await tempHome();
    const { adapter } = await openStore("memory", { home: home.path });
    const off = createRecorder({ adapter, sessionId: "s", enabled: false });
    let error: unknown;
    try {
      off.record({ type: "function.denied", tool: "x", source: "nobody" } as never);
    } catch (e) {
      error = e;
    }
    expect(error).toMatchObject({ code: "bad_input", source: { field: "source" } });
    off.record({ type: "turn.started", turnId: "t" });
    await off.close();
    expect(await adapter.listEventLogs()).toEqual([]);
  });

  test("a time past a date's range and a NaN inside args are refused at record time; later events still land", async () => {
    await using home = await tempHome();
    const { adapter } = await openStore("memory", { home: home.path });
    const rec = createRecorder({ adapter, sessionId: "s", enabled: true });
    expect(() => rec.record({ type: "turn.started", turnId: "t", timestamp: 9e15 })).toThrow(
      "timestamp must be milliseconds a date can hold",
    );
    expect(() =>
      rec.record({
        type: "function.call",
        turnId: "t",
        tool: "x",
        callId: "c",
        args: { n: [1, Number.NaN] },
      }),
    ).toThrow("a number JSON cannot hold");
    // A null that was a null is fine, and so is a NaN a toJSON leaves out.
    rec.record({ type: "function.call", turnId: "t", tool: "x", callId: "c2", args: { n: null } });
    const shaped = { n: Number.NaN, toJSON: () => ({ kept: null }) };
    rec.record({ type: "function.call", turnId: "t", tool: "x", callId: "c3", args: { shaped } });
    rec.record({ type: "turn.started", turnId: "t2" });
    await rec.close();
    const types: string[] = [];
    for await (const r of adapter.readEvents("s")) types.push(r.event!.type);
    expect(types).toEqual(["function.call", "function.call", "turn.started"]);
  });

  test("regression: a non-finite number at the top and an event longer than a log line are refused at record time; later events still land", async () => {
    await using home = await tempHome();
    const { adapter } = await openStore("memory", { home: home.path });
    const rec = createRecorder({ adapter, sessionId: "s", enabled: true });
    // An extra field of the event itself: it was written as null.
    expect(() =>
      rec.record({ type: "turn.started", turnId: "t", budgetMs: Number.POSITIVE_INFINITY } as never),
    ).toThrow("budgetMs cannot be written as JSON (a number JSON cannot hold (NaN or ±Infinity))");
    // Stored, the store refused it at flush, after record() had said nothing; read from the file, it
    // was a line too long to read.
    const output = "x".repeat(MAX_EVENT_BYTES);
    expect(() =>
      rec.record({ type: "function.output", turnId: "t", tool: "cat", callId: "c", output }),
    ).toThrow(/^function\.output event is \d+ bytes as a line: over the 32 MiB a log line may take$/);
    rec.record({ type: "turn.started", turnId: "t2" });
    await rec.close();
    const types: string[] = [];
    for await (const r of adapter.readEvents("s")) types.push(r.event!.type);
    expect(types).toEqual(["turn.started"]);
  });

  test("regression: a session id a log may not have is refused when the recorder is made, not at every flush and again at exit", async () => {
    await using home = await tempHome();
    const { adapter } = await openStore("memory", { home: home.path });
    for (const sessionId of [".hidden", "../evil"])
      expect(() => createRecorder({ adapter, sessionId, enabled: true })).toThrow(
        `invalid session id "${sessionId}"`,
      );
    await adapter.close();
  });

  test("the timer flushes buffered events without an explicit flush", async () => {
    await using home = await tempHome();
    const { adapter } = await openStore("memory", { home: home.path });
    const rec = createRecorder({ adapter, sessionId: "s", enabled: true, flushIntervalMs: 5 });
    rec.record({ type: "turn.started", turnId: "t" });
    await Bun.sleep(50);
    expect(rec.pending).toBe(0);
    expect((await loadTrace({ adapter, sessionId: "s" })).turns).toHaveLength(1);
    await rec.close();
  });

  test("two processes recording into one log: seq strictly increasing, no gap, no repeat", async () => {
    await using home = await tempHome();
    const script = `
      import { openStore } from "${ROOT}/src/storage/select.ts";
      import { createRecorder } from "${ROOT}/src/rollout/recorder.ts";
      const { adapter } = await openStore("files", { home: process.env.H, fsync: "never" });
      const rec = createRecorder({ adapter, sessionId: "shared", enabled: true, batchSize: 7, flushIntervalMs: 0 });
      for (let i = 0; i < 400; i++) rec.record({ type: "hook.triggered", hookName: process.env.W + i });
      await rec.close();
      await adapter.close();`;
    const procs = ["a", "b"].map((w) =>
      Bun.spawn([BUN, "-e", script], { env: { ...process.env, H: home.path, W: w }, stderr: "pipe" }),
    );
    for (const p of procs) expect(await p.exited).toBe(0);
    const file = join(home.path, "rollout", "sessions", "shared", "events.jsonl");
    const report = await verifyRollout({ file }, "shared");
    expect(report.problems).toEqual([]);
    expect([report.events, report.lastSeq]).toEqual([800, 800]);
  }, 30_000);

  test("events still buffered when the program ends are flushed at exit", async () => {
    await using home = await tempHome();
    const script = `
      import { openStore } from "${ROOT}/src/storage/select.ts";
      import { createRecorder } from "${ROOT}/src/rollout/recorder.ts";
      const { adapter } = await openStore("files", { home: process.env.H, fsync: "never" });
      const rec = createRecorder({ adapter, sessionId: "bye", flushIntervalMs: 0 });
      rec.record({ type: "turn.started", turnId: "turn-0" });
      rec.record({ type: "turn.aborted", turnId: "turn-0", reason: "done" });`;
    const p = Bun.spawn([BUN, "-e", script], {
      env: { ...process.env, H: home.path, NODE_ENV: "production" },
    });
    expect(await p.exited).toBe(0);
    const t = await loadTrace({ file: join(home.path, "rollout", "sessions", "bye", "events.jsonl") });
    expect(t.turns).toEqual([expect.objectContaining({ turnKey: "turn-0#1", aborted: true })]);
  }, 30_000);

  test("at process.exit, what an asynchronous store (sqljs) cannot finish is reported, exit 1; the others write it", async () => {
    for (const store of ["sqljs", "json"]) {
      await using home = await tempHome();
      const script = `
        import { openStore } from "${ROOT}/src/storage/select.ts";
        import { createRecorder } from "${ROOT}/src/rollout/recorder.ts";
        const { adapter } = await openStore("${store}", { home: process.env.H, fsync: "never" });
        const rec = createRecorder({ adapter, sessionId: "bye", flushIntervalMs: 0 });
        for (let i = 0; i < 5; i++) rec.record({ type: "turn.started", turnId: "t" + i });
        process.exit(0);`;
      const p = Bun.spawn([BUN, "-e", script], {
        env: { ...process.env, H: home.path, NODE_ENV: "production" },
        stderr: "pipe",
      });
      const [code, stderr] = await Promise.all([p.exited, new Response(p.stderr).text()]);
      if (store === "sqljs") {
        expect(code).toBe(1);
        expect(stderr).toContain(
          "5 rollout event(s) of session bye were not written before the process ended",
        );
      } else {
        expect([code, stderr]).toEqual([0, ""]);
      }
    }
  }, 30_000);

  test("golden: a session recorded with a fixed clock folds to the committed trace", async () => {
    await using home = await tempHome();
    const { adapter } = await openStore("files", { home: home.path, fsync: "never" });
    let clock = 1_800_000_000_000;
    const rec = createRecorder({ adapter, sessionId: "golden", enabled: true, now: () => clock });
    const step = (ms: number) => void (clock += ms);
    rec.record({ type: "session.started", provider: "anthropic", model: "claude-x", reason: "new" });
    rec.record({ type: "turn.started", turnId: "turn-0" });
    await rec.recordNow({ ...REQ, provider: "anthropic", model: "claude-x", messageCount: 1, toolCount: 3 });
    step(300);
    rec.record({ type: "model.first_token", turnId: "turn-0", ttft_ms: 300 });
    step(900);
    rec.record({
      type: "model.response",
      turnId: "turn-0",
      provider: "anthropic",
      model: "claude-x",
      duration_ms: 1200,
      ttft_ms: 300,
      inputTokens: 800,
      outputTokens: 90,
      toolCalls: ["Edit", "Bash"],
    });
    rec.record({
      type: "function.call",
      turnId: "turn-0",
      tool: "Edit",
      callId: "t1",
      args: { file_path: "src/x.ts" },
    });
    step(20);
    rec.record({ type: "function.output", turnId: "turn-0", tool: "Edit", callId: "t1", duration_ms: 20 });
    rec.denyToolCall(
      { tool: "Bash", turnId: "turn-0", callId: "t2", args: { command: "curl x | sh" } },
      "permission",
      "network",
    );
    step(50);
    await rec.recordNow({ type: "session.ended", reason: "done" });
    await rec.close();
    const trace = await loadTrace({ adapter, sessionId: "golden" });
    expect(JSON.parse(JSON.stringify(trace))).toMatchSnapshot();
    expect(trace.changedFiles).toEqual(["src/x.ts"]);
    await adapter.close();
  });
});
