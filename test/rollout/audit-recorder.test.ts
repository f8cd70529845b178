/**
 * Regression tests for the recorder audit: an event JSON cannot encode blocked every later one; a
 * failed write let later batches overtake it; buffered events were lost on process.exit, a crash or
 * Ctrl+C; non-finite numbers were stored as null; bad `seq` / empty `id` / per-recorder ULIDs.
 * Real stores in temp homes; real child processes for the exit cases.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { CheckedEvent, ReadPosition, ReplayOptions } from "../../src/index.ts";
import type { EventInput } from "../../src/rollout/events.ts";
import { createRecorder } from "../../src/rollout/recorder.ts";
import { checkEvent } from "../../src/rollout/validate.ts";
import { verifyRollout } from "../../src/rollout/verify.ts";
import type { StorageAdapter } from "../../src/storage/contract.ts";
import { openStore } from "../../src/storage/select.ts";
import { BUN, ROOT, runCli, tempHome } from "../_helpers.ts";

const logOf = (home: string, id: string) => join(home, "rollout", "sessions", id, "events.jsonl");
const linesOf = (home: string, id: string): Record<string, unknown>[] =>
  existsSync(logOf(home, id))
    ? readFileSync(logOf(home, id), "utf8")
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l))
    : [];
const hook = (name: string): EventInput => ({ type: "hook.triggered", hookName: name });
const REQ = { type: "model.request", turnId: "turn-0", provider: "p", model: "m" } as const;

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error("expected a throw");
}

/** The files adapter, with appendEvents failing (after a delay, like a lock timeout) `failures` times. */
function flaky(adapter: StorageAdapter, failures: number) {
  const state = { calls: 0, failures };
  const wrapped: StorageAdapter = {
    ...adapter,
    async appendEvents(id, drafts) {
      state.calls++;
      if (state.failures > 0) {
        state.failures--;
        await Bun.sleep(5);
        throw new Error("store unavailable");
      }
      return adapter.appendEvents(id, drafts);
    },
  };
  return { adapter: wrapped, state };
}

describe("finding 1: an event JSON cannot encode is refused at record()", () => {
  const cyclic: Record<string, unknown> = { a: 1 };
  cyclic.self = cyclic;
  test.each([
    ["a BigInt in args", { type: "function.call", tool: "Bash", args: { n: 10n } }, "args"],
    ["a cycle in args", { type: "function.call", tool: "Bash", args: cyclic }, "args"],
    ["a cycle in output", { type: "function.output", tool: "Bash", output: [cyclic] }, "output"],
    ["a BigInt in an extra field", { type: "turn.started", turnId: "t", extra: 1n }, "extra"],
    ["a toJSON of its own", { type: "turn.started", turnId: "t", toJSON: () => ({}) }, "toJSON"],
  ])("%s: bad_input naming the field, and later events still land", async (_, event, field) => {
    await using home = await tempHome();
    const { adapter } = await openStore("files", { home: home.path, fsync: "never" });
    const rec = createRecorder({ adapter, sessionId: "s", enabled: true, flushIntervalMs: 0 });
    rec.record(hook("before"));
    expect(thrown(() => rec.record(event as EventInput))).toMatchObject({
      code: "bad_input",
      source: { field },
    });
    rec.record(hook("after"));
    await rec.close();
    expect(linesOf(home.path, "s").map((e) => e.hookName)).toEqual(["before", "after"]);
    await adapter.close();
  });

  test("a function-valued extra field is left out, as JSON does (structuredClone threw on it)", async () => {
    await using home = await tempHome();
    const { adapter } = await openStore("memory", { home: home.path });
    const rec = createRecorder({ adapter, sessionId: "s", enabled: true, flushIntervalMs: 0 });
    rec.record({ type: "turn.started", turnId: "t", callback: () => 1 } as EventInput);
    rec.record(hook("after"));
    await rec.close();
    const events: Record<string, unknown>[] = [];
    for await (const r of adapter.readEvents("s")) events.push(r.event!);
    expect(events.map((e) => [e.type, "callback" in e])).toEqual([
      ["turn.started", false],
      ["hook.triggered", false],
    ]);
  });

  test("args mutated after record() do not change (or break) what is written", async () => {
    await using home = await tempHome();
    const { adapter } = await openStore("files", { home: home.path, fsync: "never" });
    const rec = createRecorder({ adapter, sessionId: "s", enabled: true, flushIntervalMs: 0 });
    const args: Record<string, unknown> = { command: "ls" };
    rec.record({ type: "function.call", tool: "Bash", args });
    args.command = "rm -rf /";
    args.self = args;
    await rec.close();
    expect(linesOf(home.path, "s")[0]!.args).toEqual({ command: "ls" });
    await adapter.close();
  });
});

describe("finding 2: one writer, in order; a failure holds later batches back", () => {
  test("a failed batch is written before the batches recorded after it; the retry clears the error", async () => {
    await using home = await tempHome();
    const store = await openStore("files", { home: home.path, fsync: "never" });
    const { adapter, state } = flaky(store.adapter, 1);
    const errors: unknown[] = [];
    const rec = createRecorder({
      adapter,
      sessionId: "s",
      enabled: true,
      flushIntervalMs: 0,
      onError: (e) => errors.push(e),
    });
    rec.record(hook("1"));
    rec.record({ ...REQ }); // urgent: the first write starts (and will fail)
    rec.record(hook("3"));
    rec.record({ ...REQ, turnId: "turn-1" }); // urgent again, while the first write is out
    await Bun.sleep(30);
    expect(errors).toHaveLength(1);
    expect(existsSync(logOf(home.path, "s"))).toBe(false); // nothing overtook the failed batch
    await rec.flush(); // the retry succeeds: no stale error
    await rec.close();
    const lines = linesOf(home.path, "s");
    expect(lines.map((e) => e.seq)).toEqual([1, 2, 3, 4]);
    expect(lines.map((e) => e.hookName ?? e.turnId)).toEqual(["1", "turn-0", "3", "turn-1"]);
    expect(state.calls).toBe(2);
    await store.adapter.close();
  });

  test("while the store keeps failing flush and close throw, nothing is lost, and a later close succeeds", async () => {
    await using home = await tempHome();
    const store = await openStore("files", { home: home.path, fsync: "never" });
    const { adapter } = flaky(store.adapter, 2);
    const rec = createRecorder({ adapter, sessionId: "s", enabled: true, flushIntervalMs: 0 });
    rec.record(hook("a"));
    rec.record(hook("b"));
    await expect(rec.flush()).rejects.toThrow("store unavailable");
    expect(rec.pending).toBe(2);
    await expect(rec.close()).rejects.toThrow("store unavailable");
    await rec.close(); // third attempt: the store is back
    expect(linesOf(home.path, "s").map((e) => e.hookName)).toEqual(["a", "b"]);
    await store.adapter.close();
  });
});

describe("finding 3: buffered events survive process.exit, crashes and Ctrl+C", () => {
  const script = (tail: string, store: string) => `
    import { openStore } from "${ROOT}/src/storage/select.ts";
    import { createRecorder } from "${ROOT}/src/rollout/recorder.ts";
    const { adapter } = await openStore("${store}", { home: process.env.H, fsync: "batch" });
    const rec = createRecorder({ adapter, sessionId: "crash", flushIntervalMs: 0 });
    rec.record({ type: "session.started" });
    rec.record({ type: "turn.started", turnId: "turn-0" });
    rec.record({ type: "model.request", turnId: "turn-0", provider: "p", model: "m" });
    rec.record({ type: "model.response", turnId: "turn-0", provider: "p", model: "m" });
    rec.record({ type: "hook.triggered", hookName: "pre-tool" });
    ${tail}`;
  const spawn = (tail: string, home: string, store = "files") =>
    Bun.spawn([BUN, "-e", script(tail, store)], {
      env: { ...process.env, H: home, NODE_ENV: "production" },
      stdout: "pipe",
      stderr: "pipe",
    });

  test.each([
    ["process.exit(0)", "process.exit(0);", 0],
    ["process.exit(3)", "process.exit(3);", 3],
    ["an uncaught exception", "throw new Error('crash');", 1],
    ["an unhandled rejection", "Promise.reject(new Error('crash'));", 1],
  ])(
    "%s: all 5 events are on disk, the exit code is kept",
    async (_, tail, code) => {
      await using home = await tempHome();
      const p = spawn(tail, home.path);
      expect(await p.exited).toBe(code);
      const lines = linesOf(home.path, "crash");
      expect(lines.map((e) => e.type)).toEqual([
        "session.started",
        "turn.started",
        "model.request",
        "model.response",
        "hook.triggered",
      ]);
      expect(lines.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5]);
      // The exit flush ran before the store gave its locks back: none is left behind.
      expect(readdirSync(join(home.path, "state", "locks")).filter((f) => f.endsWith(".lock"))).toEqual([]);
    },
    30_000,
  );

  test.each(["json", "sqlite"])(
    "the %s store (a synchronous write behind an async function) is flushed on process.exit too",
    async (store) => {
      await using home = await tempHome();
      const p = spawn("process.exit(0);", home.path, store);
      expect(await p.exited).toBe(0);
      expect(await new Response(p.stderr).text()).toBe("");
      const { adapter } = await openStore(store, { home: home.path });
      const types: unknown[] = [];
      for await (const r of adapter.readEvents("crash")) types.push(r.event?.type);
      await adapter.close();
      expect(types).toEqual([
        "session.started",
        "turn.started",
        "model.request",
        "model.response",
        "hook.triggered",
      ]);
    },
    30_000,
  );

  test.each(["SIGINT", "SIGTERM"] as const)(
    "%s with no handler of the program's own: flushed, then the signal still ends the process",
    async (signal) => {
      await using home = await tempHome();
      const p = spawn("console.log('ready'); setInterval(() => {}, 1000);", home.path);
      await p.stdout.getReader().read(); // "ready"
      p.kill(signal);
      await p.exited;
      expect(p.signalCode).toBe(signal);
      expect(linesOf(home.path, "crash")).toHaveLength(5);
    },
    30_000,
  );

  test("a program's own SIGINT handler keeps control; its process.exit still flushes", async () => {
    await using home = await tempHome();
    const p = spawn(
      `process.on("SIGINT", () => setTimeout(() => {
         rec.record({ type: "turn.aborted", turnId: "turn-0", reason: "user" });
         process.exit(130);
       }, 50));
       console.log("ready"); setInterval(() => {}, 1000);`,
      home.path,
    );
    await p.stdout.getReader().read();
    p.kill("SIGINT");
    expect(await p.exited).toBe(130);
    expect(
      linesOf(home.path, "crash")
        .map((e) => e.type)
        .at(-1),
    ).toBe("turn.aborted");
    expect(linesOf(home.path, "crash")).toHaveLength(6);
  }, 30_000);

  test("regression: a program's own handler added with process.once before the recorder keeps control (the recorder killed the process mid-shutdown)", async () => {
    await using home = await tempHome();
    const p = Bun.spawn(
      [
        BUN,
        "-e",
        `process.once("SIGTERM", async () => {
           await Bun.sleep(100);
           console.log("shut down");
           process.exit(0);
         });
         const { openStore } = await import("${ROOT}/src/storage/select.ts");
         const { createRecorder } = await import("${ROOT}/src/rollout/recorder.ts");
         const { adapter } = await openStore("files", { home: process.env.H });
         const rec = createRecorder({ adapter, sessionId: "once", flushIntervalMs: 0 });
         rec.record({ type: "turn.started", turnId: "turn-0" });
         console.log("ready"); setInterval(() => {}, 1000);`,
      ],
      { env: { ...process.env, H: home.path, NODE_ENV: "production" }, stdout: "pipe", stderr: "pipe" },
    );
    const reader = p.stdout.getReader();
    await reader.read();
    p.kill("SIGTERM");
    expect(await p.exited).toBe(0);
    expect(linesOf(home.path, "once").map((e) => e.type)).toEqual(["turn.started"]);
  }, 30_000);

  test.each(["files", "memory", "sqlite", "json", "sqljs"])(
    "regression: events recorded into a %s store closed before the process exits are reported lost, exit 1 (sqlite and json lost them unsaid)",
    async (store) => {
      await using home = await tempHome();
      const p = spawn("await adapter.close(); process.exit(0);", home.path, store);
      expect(await p.exited).toBe(1);
      // The urgent ones were written as they came; the rest is said, with how many.
      expect(await new Response(p.stderr).text()).toMatch(
        /[1-5] rollout event\(s\) of session crash were not written before the process ended/,
      );
    },
    30_000,
  );

  test("a function.call is on disk before the tool runs: a SIGKILL right after keeps it", async () => {
    await using home = await tempHome();
    const p = spawn(
      `rec.record({ type: "function.call", turnId: "turn-0", tool: "Bash", callId: "c1" });
       console.log("ready"); setInterval(() => {}, 1000);`,
      home.path,
    );
    await p.stdout.getReader().read();
    p.kill("SIGKILL");
    await p.exited;
    expect(linesOf(home.path, "crash").map((e) => e.type)).toEqual([
      "session.started",
      "turn.started",
      "model.request",
      "model.response",
      "hook.triggered",
      "function.call",
    ]);
  }, 30_000);

  test("events that cannot be written at exit are not lost silently", async () => {
    await using home = await tempHome();
    const failing = `const store = adapter;
      const broken = { ...store, appendEvents: async () => { throw new Error("disk full"); } };`;
    const run = (onError: string) =>
      Bun.spawn(
        [
          BUN,
          "-e",
          `import { openStore } from "${ROOT}/src/storage/select.ts";
           import { createRecorder } from "${ROOT}/src/rollout/recorder.ts";
           const { adapter } = await openStore("files", { home: process.env.H, fsync: "never" });
           ${failing}
           const rec = createRecorder({ adapter: broken, sessionId: "lost", flushIntervalMs: 0${onError} });
           rec.record({ type: "turn.started", turnId: "turn-0" });
           rec.record({ type: "hook.triggered", hookName: "h" });
           process.exit(0);`,
        ],
        { env: { ...process.env, H: home.path, NODE_ENV: "production" }, stderr: "pipe", stdout: "pipe" },
      );
    const quiet = run("");
    expect(await quiet.exited).toBe(1);
    expect(await new Response(quiet.stderr).text()).toContain(
      "2 rollout event(s) of session lost were not written before the process ended: disk full",
    );
    const told = run(", onError: (e) => console.log(String(e.message))");
    expect(await told.exited).toBe(0);
    expect(await new Response(told.stdout).text()).toContain("2 rollout event(s) of session lost");
  }, 30_000);

  test("closing the last recorder removes its exit and signal listeners", async () => {
    await using home = await tempHome();
    const { adapter } = await openStore("memory", { home: home.path });
    const count = () => ["exit", "beforeExit", "SIGINT", "SIGTERM"].map((e) => process.listenerCount(e));
    const before = count();
    const a = createRecorder({ adapter, sessionId: "a", enabled: true });
    const b = createRecorder({ adapter, sessionId: "b", enabled: true });
    expect(count()).not.toEqual(before);
    await a.close();
    expect(count()).not.toEqual(before);
    await b.close();
    expect(count()).toEqual(before);
  });
});

describe("finding 4: numbers are finite", () => {
  test.each([
    [
      "ttft_ms: Infinity",
      { type: "model.first_token", turnId: "t", ttft_ms: Number.POSITIVE_INFINITY },
      "ttft_ms",
    ],
    [
      "timestamp: -Infinity",
      { type: "turn.started", turnId: "t", timestamp: Number.NEGATIVE_INFINITY },
      "timestamp",
    ],
    [
      "duration_ms: 1e309",
      { type: "function.output", tool: "x", duration_ms: JSON.parse("1e309") },
      "duration_ms",
    ],
    [
      "afterTokens: NaN",
      { type: "compact.occurred", beforeTokens: 1, afterTokens: Number.NaN },
      "afterTokens",
    ],
  ])("record() with %s is refused, naming the field", async (_, event, field) => {
    await using home = await tempHome();
    const { adapter } = await openStore("memory", { home: home.path });
    const rec = createRecorder({ adapter, sessionId: "s", enabled: true });
    expect(thrown(() => rec.record(event as EventInput))).toMatchObject({
      code: "bad_input",
      source: { field },
    });
    await rec.close();
  });

  test("a stored line with a non-finite number is invalid", () => {
    const base = { id: "i", seq: 1, aggregateID: "s", timestamp: 1 };
    expect(
      checkEvent({ ...base, type: "model.first_token", turnId: "t", ttft_ms: JSON.parse("1e400") }),
    ).toMatchObject({
      kind: "invalid",
      field: "ttft_ms",
    });
    expect(checkEvent({ ...base, type: "poke.x", timestamp: Number.POSITIVE_INFINITY })).toMatchObject({
      kind: "invalid",
      field: "timestamp",
    });
  });

  test("rollout append of {ttft_ms: 1e400} exits 2 and writes nothing", async () => {
    await using home = await tempHome();
    const r = runCli(["rollout", "append", "s"], {
      home: home.path,
      stdin: '{"type":"model.first_token","turnId":"t","ttft_ms":1e400}\n',
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/<stdin>:1: .*\(field ttft_ms\)/);
    expect(existsSync(logOf(home.path, "s"))).toBe(false);
  });
});

describe("finding 5: seq and id refusals, ids monotonic per process", () => {
  test("a bad seq from JS is refused for what it is, not as an unknown type", async () => {
    await using home = await tempHome();
    const { adapter } = await openStore("memory", { home: home.path });
    const rec = createRecorder({ adapter, sessionId: "s", enabled: true });
    const error = thrown(() => rec.record({ type: "turn.started", turnId: "t", seq: 0 } as EventInput));
    expect(error).toMatchObject({ code: "bad_input", source: { field: "seq" } });
    expect((error as Error).message).not.toContain("unknown event type");
    expect(thrown(() => rec.record({ type: "poke.x" } as never))).toMatchObject({
      message: 'unknown event type "poke.x"',
      source: { field: "type" },
    });
    await rec.close();
  });

  test("an empty id is refused (record and the catalogue)", async () => {
    await using home = await tempHome();
    const { adapter } = await openStore("memory", { home: home.path });
    const rec = createRecorder({ adapter, sessionId: "s", enabled: true });
    expect(thrown(() => rec.record({ type: "turn.started", turnId: "t", id: "" }))).toMatchObject({
      code: "bad_input",
      source: { field: "id" },
    });
    await rec.close();
    expect(
      checkEvent({ type: "turn.started", turnId: "t", id: "", seq: 1, aggregateID: "s", timestamp: 1 }),
    ).toMatchObject({ kind: "invalid", field: "id" });
  });

  test("ids of two recorders in one process sort in the order they were recorded", async () => {
    await using home = await tempHome();
    const { adapter } = await openStore("memory", { home: home.path });
    const a = createRecorder({ adapter, sessionId: "a", enabled: true });
    const b = createRecorder({ adapter, sessionId: "b", enabled: true });
    for (let i = 0; i < 400; i++) (i % 2 ? b : a).record(hook(String(i).padStart(3, "0")));
    await a.close();
    await b.close();
    const all: { id: string; hookName: string }[] = [];
    for (const id of ["a", "b"]) for await (const r of adapter.readEvents(id)) all.push(r.event as never);
    const byName = [...all].sort((x, y) => x.hookName.localeCompare(y.hookName)).map((e) => e.id);
    expect([...byName].sort()).toEqual(byName);
  });

  test("types in exported signatures are exported (compile-time: tsc fails without them)", () => {
    const position: ReadPosition = { lastSeq: 1 };
    const options: ReplayOptions = {};
    const checked: CheckedEvent = { kind: "unknown", type: "x" };
    expect([position, options, checked]).toHaveLength(3);
  });
});

test("the exit flush leaves a log verify finds clean", async () => {
  await using home = await tempHome();
  const p = Bun.spawn(
    [
      BUN,
      "-e",
      `import { openStore } from "${ROOT}/src/storage/select.ts";
       import { createRecorder } from "${ROOT}/src/rollout/recorder.ts";
       const { adapter } = await openStore("files", { home: process.env.H, fsync: "never" });
       const rec = createRecorder({ adapter, sessionId: "v", batchSize: 3, flushIntervalMs: 0 });
       for (let i = 0; i < 10; i++) rec.record({ type: "hook.triggered", hookName: "h" + i });
       process.exit(0);`,
    ],
    { env: { ...process.env, H: home.path, NODE_ENV: "production" } },
  );
  expect(await p.exited).toBe(0);
  const report = await verifyRollout({ file: logOf(home.path, "v") }, "v");
  expect(report.problems).toEqual([]);
  expect(report.events).toBe(10);
}, 30_000);
