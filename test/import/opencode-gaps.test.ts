/**
 * Regressions of the OpenCode importer, on `opencode export` documents written here in the shape of
 * corpus/opencode: (1) a denial OpenCode stored as `error.toString()` — its class name in front,
 * `Error: The user rejected permission…` — was a failed call, not a denial; (2) a call a dead
 * process left `running` or `pending` was a call without an output, and nothing said its turn was
 * cut off.
 */
import { describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { loadTrace } from "../../src/rollout/load.ts";
import type { EventRecord } from "../../src/storage/records.ts";
import { CORPUS, tempDir, tempHome } from "../_helpers.ts";
import { importOne, type Raw, sessionsFrom } from "./_corpus.ts";
import { imported } from "./_store.ts";

const SES = "ses_1a2b3c4d5ffeQwErTyUiOpAsDf";
/** Long over: no process is running this session any more. */
const OLD = Date.parse("2026-05-01T10:00:00.000Z");
const MINUTE = 60_000;

const user = (id: string, at: number, text: string) => ({
  info: {
    id,
    sessionID: SES,
    role: "user",
    time: { created: at },
    agent: "build",
    model: { providerID: "opencode", modelID: "moonshotai/kimi-k2.6" },
  },
  parts: [{ id: `prt_${id}t`, sessionID: SES, messageID: id, type: "text", text }],
});

/** An assistant message with one tool part per state; `completed` false: it never finished. */
function assistant(id: string, parentID: string, at: number, states: Raw[], completed = true) {
  const part = (suffix: string, data: Raw) => ({
    id: `prt_${id}${suffix}`,
    sessionID: SES,
    messageID: id,
    ...data,
  });
  const tokens = { total: 150, input: 100, output: 50, reasoning: 0, cache: { read: 0, write: 0 } };
  return {
    info: {
      id,
      sessionID: SES,
      parentID,
      role: "assistant",
      mode: "build",
      agent: "build",
      path: { cwd: "/work/p", root: "/work/p" },
      cost: 0,
      tokens,
      modelID: "moonshotai/kimi-k2.6",
      providerID: "opencode",
      time: completed ? { created: at, completed: at + 2000 } : { created: at },
      ...(completed ? { finish: "tool-calls" } : {}),
    },
    parts: [
      part("a", { type: "step-start" }),
      ...states.map((state, i) =>
        part(`b${i}`, { type: "tool", tool: "bash", callID: `call_${id}_${i}`, state }),
      ),
      ...(completed ? [part("z", { type: "step-finish", reason: "tool-calls", cost: 0, tokens })] : []),
    ],
  };
}

const input = { command: "git push", description: "Push" };
const done = (at: number) => ({
  status: "completed",
  input,
  output: "ok",
  title: "Push",
  metadata: {},
  time: { start: at, end: at + 100 },
});
const failed = (at: number, error: string) => ({
  status: "error",
  input,
  error,
  time: { start: at, end: at + 100 },
});
const running = (at: number) => ({ status: "running", input, metadata: {}, time: { start: at } });
const pending = { status: "pending", input, raw: JSON.stringify(input) };

/** An OpenCode export (`opencode export`) of the session with `messages`. */
function exportOf(messages: Raw[]) {
  const times = messages.map((m) => m.info.time.completed ?? m.info.time.created);
  return {
    info: {
      id: SES,
      slug: "quiet-harbor",
      version: "1.17.3",
      projectID: "global",
      directory: "/work/p",
      title: "Push the branch",
      time: { created: times[0], updated: Math.max(...times) },
    },
    messages,
    todos: [],
  };
}

/** Import an export of `messages` and read back its events, messages and trace. */
async function importExport(messages: Raw[]) {
  await using dir = await tempDir();
  await using home = await tempHome();
  const path = join(dir.path, `${SES}.json`);
  writeFileSync(path, JSON.stringify(exportOf(messages), null, 2));
  const { adapter, report } = await importOne(home.path, "opencode", path);
  try {
    expect(report.sources[0]!.warnings).toEqual([]);
    const [id] = await sessionsFrom(adapter, path);
    const events: EventRecord[] = [];
    for await (const r of adapter.readEvents(id!)) events.push(r.event!);
    const { messages: stored } = await adapter.readMessages(id!);
    const trace = await loadTrace({ adapter, sessionId: id! });
    const aborts = events.filter((e) => e.type === "turn.aborted");
    return {
      events,
      stored,
      trace,
      aborts,
      interrupted: stored.filter((m) => m.interrupted).map((m) => m.id),
    };
  } finally {
    await adapter.close();
  }
}

describe("opencode importer gaps", () => {
  test("a denial stored as error.toString() (`Error: The user …`) is a denial, not a failed call", async () => {
    const errors = {
      "Error: The user rejected permission to use this specific tool call. You may try again with different parameters.":
        "user",
      "PermissionRejectedError: The user rejected permission to use this specific tool call.": "user",
      "PermissionCorrectedError: The user rejected permission to use this specific tool call with the following feedback: use sed":
        "user",
      "Error: The user dismissed this question": "user",
      'Error: The user has specified a rule which prevents you from using this specific tool call. Here are some of the relevant rules [{"permission":"bash","pattern":"*","action":"deny"}]':
        "rule",
      "PermissionDeniedError: The user has specified a rule which prevents you from using this specific tool call. Here are some of the relevant rules []":
        "rule",
      // Unprefixed, as older releases and `opencode run` output have it.
      "The user rejected permission to use this specific tool call.": "user",
      // Failures, whatever they quote.
      "Error: Could not find oldString in the file.": undefined,
      "Error: exit 1: The user rejected permission to use this specific tool call.": undefined,
    } as Record<string, string | undefined>;
    const { events } = await importExport([
      user("msg_001", OLD, "push it"),
      assistant(
        "msg_002",
        "msg_001",
        OLD + 1000,
        Object.keys(errors).map((e) => failed(OLD + 1500, e)),
      ),
    ]);
    const denied = events.filter((e) => e.type === "function.denied");
    expect(denied.map((e) => e.source)).toEqual(Object.values(errors).filter((s) => s !== undefined));
    // The reason is OpenCode's message, without the class name.
    for (const e of denied) expect(String(e.reason)).toStartWith("The user ");
    // A denied call never ran: no function.call, no output; the two failures are failed outputs.
    const deniedIds = new Set(denied.map((e) => e.callId));
    expect(events.filter((e) => e.type === "function.call" && deniedIds.has(e.callId))).toEqual([]);
    const outputs = events.filter((e) => e.type === "function.output");
    expect(outputs.map((e) => [e.failed, String(e.output).slice(0, 10)])).toEqual([
      [true, "Error: Cou"],
      [true, "Error: exi"],
    ]);
  });

  test("regression: a step's calls run side by side: each goes in before the outputs that came after it was made, and the outputs by when they came", async () => {
    // Three calls of one step: the first runs 3 s, the second (made 0.2 s after it) 0.1 s, the
    // third (refused) is made 0.3 s after the first. Written part by part, the second call came
    // after the first's output, 2.8 s earlier than it, and the outputs in part order.
    const slow = { ...done(OLD + 1500), time: { start: OLD + 1500, end: OLD + 4500 } };
    const refused = failed(OLD + 1800, "Error: The user rejected permission to use this specific tool call.");
    const { events, trace } = await importExport([
      user("msg_001", OLD, "push it"),
      assistant("msg_002", "msg_001", OLD + 1000, [slow, done(OLD + 1700), refused]),
    ]);
    const tools = events.filter((e) => e.type.startsWith("function."));
    // The refused call was waiting for permission when the second one's output came: written then,
    // its denial after it withdraws it, as the trace reads it.
    expect(tools.map((e) => `${e.type} ${e.callId}`)).toEqual([
      "function.call call_msg_002_0",
      "function.call call_msg_002_1",
      "function.call call_msg_002_2",
      "function.output call_msg_002_1",
      "function.denied call_msg_002_2",
      "function.output call_msg_002_0",
    ]);
    expect(trace.toolSpans.map((t) => t.callId)).toEqual(["call_msg_002_0", "call_msg_002_1"]);
    expect(trace.deniedSpans.map((t) => t.callId)).toEqual(["call_msg_002_2"]);
    // (A step's request is written with its response, at its step-finish: see the README.)
    const times = tools.map((e) => e.timestamp);
    expect(times).toEqual(times.toSorted((a, b) => a - b));
  });

  test("a call a crash left running or pending ends its turn as interrupted, without an output", async () => {
    const { events, trace, aborts, interrupted } = await importExport([
      user("msg_001", OLD, "push it"),
      assistant("msg_002", "msg_001", OLD + 1000, [done(OLD + 1500)]),
      // The process died here: no `time.completed`, no step-finish, the calls never finished.
      assistant("msg_003", "msg_001", OLD + 4000, [running(OLD + 4500), pending], false),
    ]);
    expect(trace.pendingCalls.map((p) => p.callId)).toEqual(["call_msg_003_0", "call_msg_003_1"]);
    expect(events.filter((e) => e.type === "function.output").map((e) => e.callId)).toEqual([
      "call_msg_002_0",
    ]);
    expect(aborts.map((e) => [e.turnId, e.reason])).toEqual([["msg_001", "interrupted"]]);
    // At the last thing the session recorded: the running call's start.
    expect(aborts[0]!.timestamp).toBe(OLD + 4500);
    expect(trace.turns.map((t) => t.aborted ?? false)).toEqual([true]);
    expect(interrupted).toEqual(["msg_003"]);
  });

  test("an aborted message's open call is the one abort OpenCode recorded", async () => {
    const aborted = assistant("msg_002", "msg_001", OLD + 1000, [running(OLD + 1500)], false);
    Object.assign(aborted.info, { error: { name: "MessageAbortedError", data: { message: "Aborted" } } });
    const { aborts, trace } = await importExport([user("msg_001", OLD, "push it"), aborted]);
    expect(aborts.map((e) => e.reason)).toEqual(["aborted"]);
    expect(trace.pendingCalls).toHaveLength(1);
  });

  test("in a live session, a running call is left open and its turn is not aborted", async () => {
    const now = Date.now();
    const { trace, aborts, interrupted } = await importExport([
      user("msg_001", now - 5 * MINUTE, "push it"),
      assistant("msg_002", "msg_001", now - 4 * MINUTE, [running(now - 4 * MINUTE)], false),
      // A prompt typed meanwhile is stored at once; it waits for the running response.
      user("msg_003", now - 2 * MINUTE, "and tag it"),
    ]);
    expect(trace.pendingCalls).toHaveLength(1);
    expect(aborts).toEqual([]);
    expect(interrupted).toEqual([]);
  });

  test("idle for over an hour, the session's running call was cut off", async () => {
    const now = Date.now();
    const session = (idle: number) => [
      user("msg_001", now - idle - MINUTE, "push it"),
      assistant("msg_002", "msg_001", now - idle, [running(now - idle)], false),
    ];
    expect((await importExport(session(61 * MINUTE))).aborts).toHaveLength(1);
    expect((await importExport(session(50 * MINUTE))).aborts).toHaveLength(0);
  });

  test("a call left open is cut off once a later response began, even in a live session", async () => {
    const now = Date.now();
    const { aborts, interrupted } = await importExport([
      user("msg_001", now - 10 * MINUTE, "push it"),
      assistant("msg_002", "msg_001", now - 9 * MINUTE, [running(now - 9 * MINUTE)], false),
      // OpenCode restarted and the user went on: a response runs only after the one before it ended.
      user("msg_003", now - 3 * MINUTE, "try again"),
      assistant("msg_004", "msg_003", now - 2 * MINUTE, [done(now - 2 * MINUTE)]),
    ]);
    expect(aborts.map((e) => e.turnId)).toEqual(["msg_001"]);
    expect(interrupted).toEqual(["msg_002"]);
  });

  test("a capture of stderr and stdout (the progress line first) imports as the document alone", async () => {
    const corpus = join(CORPUS, "opencode", "richardaiand_aiand-portfolio-web", "reconstructed_export");
    const name = [...new Bun.Glob("*.json").scanSync(corpus)].sort()[0]!;
    const text = readFileSync(join(corpus, name), "utf8");
    await using dir = await tempDir();
    const plain = join(dir.path, "plain", name);
    const captured = join(dir.path, "captured", name);
    mkdirSync(dirname(plain), { recursive: true });
    mkdirSync(dirname(captured), { recursive: true });
    writeFileSync(plain, text);
    writeFileSync(captured, `Exporting session: ${name.replace(/\.json$/, "")}\n${text}`);
    const shape = async (path: string) => {
      await using home = await tempHome();
      const { sessions, summary } = await imported(home.path, "opencode", path);
      expect(summary.warnings).toEqual([]);
      return sessions.map((x) => ({
        meta: { ...x.meta, source: { ...x.meta.source, path: "" } },
        events: x.events,
      }));
    };
    const want = await shape(plain);
    expect(want.length).toBe(1);
    expect(await shape(captured)).toEqual(want);
    // Anything else that is not JSON stays an error.
    writeFileSync(captured, `Exporting session: x\nnot json\n`);
    await using home = await tempHome();
    const bad = await imported(home.path, "opencode", captured);
    expect(bad.sessions).toEqual([]);
    expect(bad.summary.warnings.length).toBe(1);
  });
});

test("regression: a user message whose parts are not written yet is not taken for a prompt for good (a `!` command's note counted as a turn)", async () => {
  await using dir = await tempDir();
  const rows = join(CORPUS, "opencode", "richardaiand_aiand-portfolio-web", "rows");
  const read = (name: string) =>
    readFileSync(join(rows, name), "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  // The row dump as the database held it just before the part of the user's `!` command's note.
  const parts = read("part.jsonl");
  const note = parts.find((p) => JSON.stringify(p).includes("The following tool was executed by the user"));
  expect(note).toBeDefined();
  const cut = Number(note!.time_created) - 1;
  const write = (into: string, keep: (name: string, row: Record<string, unknown>) => boolean) => {
    mkdirSync(join(into, "rows"), { recursive: true });
    for (const name of ["session.jsonl", "message.jsonl", "part.jsonl", "project.jsonl"]) {
      const kept = read(name).filter((r) => keep(name, r));
      writeFileSync(join(into, "rows", name), kept.map((r) => `${JSON.stringify(r)}\n`).join(""));
    }
  };
  const live = join(dir.path, "live");
  write(
    live,
    (name, r) => !(name === "message.jsonl" || name === "part.jsonl") || Number(r.time_created) <= cut,
  );
  await using home = await tempHome();
  await imported(home.path, "opencode", live);
  write(live, () => true);
  const grown = await imported(home.path, "opencode", live);
  await using once = await tempHome();
  const whole = await imported(once.path, "opencode", live);
  const turns = (r: Awaited<ReturnType<typeof imported>>) =>
    r.sessions.map((s) => [s.meta.id, s.meta.turnCount]);
  expect(turns(grown)).toEqual(turns(whole));
});

test("a call cut off comes before its turn's abort (import audit 6)", async () => {
  // The corpus's last turn of ses_1279…: a step with two bash calls, a step cut off with a bash call
  // and a `question` still running. The running call was written after the turn's abort.
  await using home = await tempHome();
  const dir = join(CORPUS, "opencode", "richardaiand_aiand-portfolio-web", "reconstructed_export");
  const { sessions } = await imported(home.path, "opencode", dir);
  const s = sessions.find((x) => x.meta.id === "opencode-ses_1279fce82ffeZOJhNwml1w1Fu4")!;
  const events = s.events as EventRecord[];
  const lastTurn = events.filter((e) => e.type === "turn.started").at(-1)!;
  const shape = events
    .filter((e) => e.seq >= lastTurn.seq)
    .map((e) => (e.type === "function.call" ? `call ${(e as { tool?: string }).tool}` : e.type));
  // The second bash call was made 112 ms before the first one's output: it goes in before it.
  expect(shape).toEqual([
    "turn.started",
    "model.request",
    "call bash",
    "call bash",
    "function.output",
    "function.output",
    "model.response",
    "call bash",
    "function.output",
    "call question",
    "turn.aborted",
  ]);
  // Every response's request comes first, in every session.
  for (const x of sessions) {
    const requested = new Set<string>();
    for (const e of x.events as EventRecord[]) {
      const key = String(e.id).split(":").slice(2).join(":");
      if (e.type === "model.request") requested.add(key);
      if (e.type === "model.response")
        expect([x.meta.id, key, requested.has(key)]).toEqual([x.meta.id, key, true]);
    }
  }
});

test("regression: a step's model.request comes before the calls it makes, never earlier than what is logged before it", async () => {
  // Written with its response at the step's end, a request came after the step's calls and
  // outputs, earlier than them: 58 of the corpus's requests went back in time.
  await using home = await tempHome();
  const dir = join(CORPUS, "opencode", "richardaiand_aiand-portfolio-web", "reconstructed_export");
  const { sessions } = await imported(home.path, "opencode", dir);
  let requests = 0;
  for (const x of sessions) {
    let latest = 0;
    for (const e of x.events as EventRecord[]) {
      if (e.type === "model.request") {
        requests++;
        expect([x.meta.id, e.id, e.timestamp >= latest]).toEqual([x.meta.id, e.id, true]);
      }
      latest = Math.max(latest, e.timestamp);
    }
  }
  expect(requests).toBeGreaterThan(60);
});

test("a step imported while it runs and again once finished logs the events one import of the finished session does; its request after the calls logged as they ran", async () => {
  await using dir = await tempDir();
  const now = Date.now() - 60_000;
  const prompt = user("msg_001", now, "push it");
  const working = [
    prompt,
    assistant("msg_002", "msg_001", now + 1_000, [done(now + 1_100), running(now + 1_200)], false),
  ];
  const finished = [
    prompt,
    assistant("msg_002", "msg_001", now + 1_000, [done(now + 1_100), done(now + 1_200)]),
  ];
  const path = join(dir.path, `${SES}.json`);
  const shape = (r: Awaited<ReturnType<typeof imported>>) =>
    (r.sessions[0]!.events as EventRecord[]).map(
      (e) => `${e.type} ${String(e.id).split(":").slice(2).join(":")}`,
    );
  writeFileSync(path, JSON.stringify(exportOf(working)));
  await using home = await tempHome();
  const live = shape(await imported(home.path, "opencode", path));
  // The running step's calls are logged as they run (a trace of the session at work shows them);
  // its request is not: the step's end names it.
  expect(live.slice(1)).toEqual([
    "turn.started msg_001",
    "function.call call_msg_002_0",
    "function.call call_msg_002_1",
    "function.output call_msg_002_0",
  ]);
  writeFileSync(path, JSON.stringify(exportOf(finished)));
  const grown = shape(await imported(home.path, "opencode", path));
  await using once = await tempHome();
  const whole = shape(await imported(once.path, "opencode", path));
  expect(grown.toSorted()).toEqual(whole.toSorted());
  // What the first import logged stays; the rest comes in the finished session's order.
  expect(grown.slice(1)).toEqual([
    ...live.slice(1),
    "model.request prt_msg_002z",
    "function.output call_msg_002_1",
    "model.response prt_msg_002z",
  ]);
  expect(whole.slice(1)).toEqual([
    "turn.started msg_001",
    "model.request prt_msg_002z",
    "function.call call_msg_002_0",
    "function.call call_msg_002_1",
    "function.output call_msg_002_0",
    "function.output call_msg_002_1",
    "model.response prt_msg_002z",
  ]);
});

test("regression: a user message of a compaction alone opens no turn, one of an image alone does (the rollout said 1 turn, the meta 3)", async () => {
  const only = (id: string, at: number, part: Raw) => {
    const m = user(id, at, "");
    return { ...m, parts: [{ id: `prt_${id}x`, sessionID: SES, messageID: id, ...part }] };
  };
  const summary = assistant("msg_s", "msg_c", OLD + 3 * MINUTE, []);
  summary.info = { ...summary.info, summary: true } as typeof summary.info;
  const { events, stored, trace } = await importExport([
    user("msg_u", OLD, "hello"),
    assistant("msg_a", "msg_u", OLD + MINUTE, [done(OLD + MINUTE)]),
    only("msg_c", OLD + 2 * MINUTE, { type: "compaction", auto: false }),
    summary,
    only("msg_i", OLD + 4 * MINUTE, {
      type: "file",
      mime: "image/png",
      filename: "shot.png",
      url: "data:image/png;base64,AAAA",
    }),
    assistant("msg_b", "msg_i", OLD + 5 * MINUTE, [done(OLD + 5 * MINUTE)]),
  ]);
  expect(stored.filter((m) => m.role === "user").map((m) => [m.id, m.synthetic])).toEqual([
    ["msg_u", undefined],
    ["msg_c", "compaction"],
    ["msg_i", undefined],
  ]);
  expect(events.filter((e) => e.type === "turn.started").map((e) => e.turnId)).toEqual(["msg_u", "msg_i"]);
  expect(trace.turns).toHaveLength(2);
});
