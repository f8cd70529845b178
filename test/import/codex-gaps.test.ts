/**
 * Two gaps the Codex importer had, each checked on synthetic rollouts shaped like real ones (the
 * corpus files and the 0.77 sample in corpus/codex/SOURCES.md):
 * - failures with no exit code read as successes: an MCP result flagged `isError` inside `Ok`,
 *   and the messages Codex answers with when it refuses to run a call (a patch that does not
 *   apply, arguments it cannot parse);
 * - a rollout from a build that wrote no `task_started` collapsed into one turn: there, each typed
 *   prompt starts a turn. Rollouts that do mark their turns keep them as they are.
 */
import { describe, expect, test } from "bun:test";
import { appendFileSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadTrace } from "../../src/rollout/load.ts";
import type { StorageAdapter } from "../../src/storage/contract.ts";
import { tempDir, tempHome } from "../_helpers.ts";
import { importOne } from "./_corpus.ts";
import { imported } from "./_store.ts";

const THREAD = "019b64e5-57fa-7463-b644-fba7e456f905";
const SESSION = `codex-${THREAD}`;
const FILE = `rollout-2025-12-28T12-18-30-${THREAD}.jsonl`;
const T0 = Date.parse("2025-12-28T12:18:30.533Z");

/** One rollout line, `ms` after the session began. */
const line = (ms: number, type: string, payload: object) =>
  JSON.stringify({ timestamp: new Date(T0 + ms).toISOString(), type, payload });

const meta = (cliVersion: string) =>
  line(0, "session_meta", {
    id: THREAD,
    timestamp: new Date(T0).toISOString(),
    cwd: "/Users/dev/app",
    originator: "codex_cli_rs",
    cli_version: cliVersion,
    source: "cli",
    model_provider: "openai",
  });

const event = (ms: number, payload: object) => line(ms, "event_msg", payload);
const item = (ms: number, payload: object) => line(ms, "response_item", payload);

const prompt = (ms: number, message: string, kind?: string) =>
  event(ms, { type: "user_message", message, images: [], ...(kind ? { kind } : {}) });

/** Old builds repeat this block several times per turn, with no `turn_id`. */
const oldTurnContext = (ms: number) =>
  line(ms, "turn_context", {
    cwd: "/Users/dev/app",
    approval_policy: "on-request",
    sandbox_policy: { type: "workspace-write", network_access: false },
    model: "gpt-5.2-codex",
    summary: "auto",
  });

let cumulative = 0;
/** A `token_count` closing one provider response (totals are cumulative, as Codex writes them). */
function tokens(ms: number, input: number, output: number) {
  const last = {
    input_tokens: input,
    cached_input_tokens: 0,
    output_tokens: output,
    reasoning_output_tokens: 0,
    total_tokens: input + output,
  };
  cumulative += input + output;
  const total = { ...last, total_tokens: cumulative };
  return event(ms, {
    type: "token_count",
    info: { total_token_usage: total, last_token_usage: last, model_context_window: 272000 },
    rate_limits: null,
  });
}

const call = (ms: number, callId: string, name: string, args: object) =>
  item(ms, { type: "function_call", name, arguments: JSON.stringify(args), call_id: callId });
const output = (ms: number, callId: string, text: string, type = "function_call_output") =>
  item(ms, { type, call_id: callId, output: text });
/** A `shell_command` output, in the `Exit code: N` header format of newer builds. */
const shellOutput = (code: number, text: string) =>
  `Exit code: ${code}\nWall time: 0.1 seconds\nOutput:\n${text}\n`;

/** A `shell_command` call, its output, and the response's usage: one tool round. */
const shellRound = (ms: number, callId: string, command: string, code: number, text: string) => [
  call(ms, callId, "shell_command", { command, workdir: "/Users/dev/app" }),
  output(ms + 400, callId, shellOutput(code, text)),
  tokens(ms + 500, 1000, 40),
];

/** An assistant answer and the response's usage. */
function answer(ms: number, text: string) {
  return [
    item(ms, { type: "message", role: "assistant", content: [{ type: "output_text", text }] }),
    event(ms, { type: "agent_message", message: text }),
    tokens(ms + 100, 1200, 30),
  ];
}

async function importLines(lines: string[]) {
  await using dir = await tempDir();
  const path = join(dir.path, FILE);
  writeFileSync(path, `${lines.join("\n")}\n`);
  await using home = await tempHome();
  const { adapter, report } = await importOne(home.path, "codex", path);
  try {
    expect(report.sources[0]!.warnings).toEqual([]);
    return await eventsOf(adapter);
  } finally {
    await adapter.close();
  }
}

type Ev = Record<string, unknown> & { type: string };

async function eventsOf(adapter: StorageAdapter): Promise<Ev[]> {
  const out: Ev[] = [];
  for await (const r of adapter.readEvents(SESSION)) if (r.event) out.push(r.event as Ev);
  return out;
}

/** `function.output` failed flags by call id. */
const failedByCall = (events: Ev[]) =>
  Object.fromEntries(events.filter((e) => e.type === "function.output").map((e) => [e.callId, e.failed]));

/** Each turn (by its id) with the calls answered in it and how many provider responses it had. */
function turns(events: Ev[]) {
  const out: { turnId: unknown; tools: unknown[]; responses: number }[] = [];
  for (const e of events) {
    if (e.type === "turn.started") out.push({ turnId: e.turnId, tools: [], responses: 0 });
    const turn = out.find((t) => t.turnId === e.turnId);
    if (e.type === "function.output") turn?.tools.push(e.callId);
    if (e.type === "model.response" && turn) turn.responses++;
  }
  return out;
}

describe("codex failures without an exit code", () => {
  test("regression: an MCP result flagged isError inside Ok is a failed call", async () => {
    const mcpEnd = (ms: number, callId: string, text: string, isError: boolean) =>
      event(ms, {
        type: "mcp_tool_call_end",
        call_id: callId,
        invocation: { server: "github", tool: "get_issue", arguments: { number: 7 } },
        duration: { secs: 0, nanos: 412_000_000 },
        result: { Ok: { content: [{ type: "text", text }], isError } },
      });
    const events = await importLines([
      meta("0.121.0"),
      event(10, { type: "task_started", turn_id: "turn-a", model_context_window: 258400 }),
      prompt(20, "look at issue 7 and 8"),
      call(1000, "call_mcp_bad", "github__get_issue", { number: 7 }),
      call(1010, "call_mcp_good", "github__get_issue", { number: 8 }),
      tokens(1100, 900, 50),
      mcpEnd(1500, "call_mcp_bad", "Not Found: issue 7 does not exist", true),
      output(1501, "call_mcp_bad", "Not Found: issue 7 does not exist"),
      // An ordinary result that talks about errors is still a success.
      mcpEnd(1600, "call_mcp_good", "Issue 8: error handling in the parser", false),
      output(1601, "call_mcp_good", "Issue 8: error handling in the parser"),
      ...answer(2000, "Issue 7 is missing; issue 8 is about error handling."),
      event(2200, { type: "task_complete", turn_id: "turn-a", last_agent_message: "done" }),
    ]);
    expect(failedByCall(events)).toEqual({ call_mcp_bad: true, call_mcp_good: false });
  });

  test("regression: a call an interrupt cut off, answered `aborted`, is a failed call (it was a success)", async () => {
    const events = await importLines([
      meta("0.121.0"),
      event(10, { type: "task_started", turn_id: "turn-a", model_context_window: 258400 }),
      prompt(20, "wait a while"),
      call(1000, "call_R", "shell", { command: ["sleep", "100"] }),
      tokens(1100, 900, 50),
      event(1500, { type: "turn_aborted", turn_id: "turn-a", reason: "interrupted" }),
      output(1501, "call_R", "aborted"),
    ]);
    expect(failedByCall(events)).toEqual({ call_R: true });
  });

  test("regression: Codex's own refusals (patch verification, unreadable arguments) are failed calls", async () => {
    const events = await importLines([
      meta("0.121.0"),
      event(10, { type: "task_started", turn_id: "turn-a", model_context_window: 258400 }),
      prompt(20, "rename greet to hello"),
      item(1000, {
        type: "custom_tool_call",
        status: "completed",
        call_id: "call_patch",
        name: "apply_patch",
        input:
          "*** Begin Patch\n*** Update File: src/app.py\n@@\n-def greet():\n+def hello():\n*** End Patch",
      }),
      tokens(1100, 900, 50),
      output(
        1200,
        "call_patch",
        "apply_patch verification failed: Failed to find expected lines in src/app.py:\ndef greet():",
        "custom_tool_call_output",
      ),
      call(2000, "call_args", "shell_command", { workdir: "/Users/dev/app" }),
      tokens(2100, 950, 20),
      output(2200, "call_args", "failed to parse function arguments: missing field `command`"),
      // Outputs that only mention those words (a grep hit, a help text) are not failures.
      ...shellRound(
        3000,
        "call_grep",
        "grep -rn failed logs/",
        0,
        "logs/ci.txt:3: apply_patch verification failed",
      ),
      call(4000, "call_docs", "docs__search", { q: "parse errors" }),
      tokens(4100, 990, 20),
      output(4200, "call_docs", "Help: 'failed to parse function arguments' means the JSON was bad."),
      ...answer(5000, "The patch did not apply; retrying."),
      event(5200, { type: "task_complete", turn_id: "turn-a", last_agent_message: "done" }),
    ]);
    expect(failedByCall(events)).toEqual({
      call_patch: true,
      call_args: true,
      call_grep: false,
      call_docs: false,
    });
  });
});

describe("codex turns", () => {
  test("regression: an earlier turn's unanswered call, written late, does not open a `!`-only turn (last review 2)", async () => {
    const all = [
      meta("0.120.0"),
      event(1000, { type: "task_started", turn_id: "tA" }),
      prompt(2000, "run the tests", "plain"),
      item(3000, {
        type: "function_call",
        name: "shell",
        arguments: '{"command":["npm","test"]}',
        call_id: "call_X",
      }),
      event(5000, { type: "turn_aborted", turn_id: "tA", reason: "interrupted" }),
      event(6000, { type: "task_started", turn_id: "tB" }),
      item(7000, {
        type: "message",
        role: "user",
        content: [
          {
            type: "input_text",
            text: "<user_shell_command>\n<command>\nls\n</command>\n</user_shell_command>",
          },
        ],
      }),
      event(8000, {
        type: "exec_command_end",
        call_id: "u1",
        source: "user_shell",
        exit_code: 0,
        turn_id: "tB",
      }),
      event(9000, { type: "turn_aborted", turn_id: "tB", reason: "interrupted" }),
    ];
    const once = await importLines(all);
    expect(once.filter((e) => e.type.startsWith("turn.")).map((e) => [e.type, e.turnId])).toEqual([
      ["turn.started", "tA"],
      ["turn.aborted", "tA"],
    ]);
    // Read in two imports, cut inside tB (the first one writes tA's unanswered call at its end).
    await using dir = await tempDir();
    await using home = await tempHome();
    const path = join(dir.path, FILE);
    writeFileSync(path, `${all.slice(0, 6).join("\n")}\n`);
    await imported(home.path, "codex", path);
    appendFileSync(path, `${all.slice(6).join("\n")}\n`);
    const grown = (await imported(home.path, "codex", path)).sessions[0]!.events as Ev[];
    expect(grown.map((e) => [e.type, e.turnId])).toEqual(once.map((e) => [e.type, e.turnId]));
  });
  test("regression: a turn of only a user's `!` command and its abort is no turn: trace, replay and the store agree", async () => {
    await using home = await tempHome();
    const path = join(
      import.meta.dir,
      "..",
      "corpus",
      "codex",
      "rollout-2026-04-19T22-10-31-019da915-31a8-74d0-ad7f-640110fae046.jsonl",
    );
    const { adapter } = await importOne(home.path, "codex", path);
    const id = "codex-019da915-31a8-74d0-ad7f-640110fae046";
    const trace = await loadTrace({ adapter, sessionId: id });
    expect([trace.turns.length, trace.turns.some((t) => t.aborted)]).toEqual([1, false]);
    expect((await adapter.getMeta(id))!.turnCount).toBe(1);
    await adapter.close();
  });

  test("regression: a rollout with no task_started (0.77) starts a turn at each typed prompt", async () => {
    const events = await importLines([
      meta("0.77.0"),
      item(1, {
        type: "message",
        role: "user",
        content: [
          {
            type: "input_text",
            text: "<environment_context>\n  <cwd>/Users/dev/app</cwd>\n</environment_context>",
          },
        ],
      }),
      prompt(10_000, "what does the build script do?"),
      oldTurnContext(10_001),
      oldTurnContext(10_400),
      ...shellRound(11_000, "call_1", "cat build.sh", 0, "make all"),
      ...answer(12_000, "It runs make."),
      prompt(60_000, "run it"),
      oldTurnContext(60_001),
      ...shellRound(61_000, "call_2", "./build.sh", 2, "make: *** [all] Error 2"),
      ...answer(64_000, "The build fails."),
      prompt(90_000, "thanks"),
      oldTurnContext(90_001),
      ...answer(91_000, "You're welcome."),
    ]);
    expect(turns(events)).toEqual([
      { turnId: "L3", tools: ["call_1"], responses: 2 },
      { turnId: "L12", tools: ["call_2"], responses: 2 },
      { turnId: "L20", tools: [], responses: 1 },
    ]);
  });

  test("in a rollout with no task_started, a context block (kind environment_context) starts no turn", async () => {
    const events = await importLines([
      meta("0.40.0"),
      prompt(
        1,
        "<environment_context>\n  <cwd>/Users/dev/app</cwd>\n</environment_context>",
        "environment_context",
      ),
      prompt(10_000, "list the files", "plain"),
      ...shellRound(11_000, "call_1", "ls", 0, "a.txt"),
      ...answer(12_000, "One file: a.txt."),
      prompt(60_000, "and hidden ones?", "plain"),
      ...shellRound(61_000, "call_2", "ls -a", 0, ".env\na.txt"),
      ...answer(62_000, "Also .env."),
    ]);
    expect(turns(events)).toEqual([
      { turnId: "L3", tools: ["call_1"], responses: 2 },
      { turnId: "L10", tools: ["call_2"], responses: 2 },
    ]);
  });

  /** A marked turn with a prompt typed while it ran (it steers that turn), then a second turn. */
  const markedTurns = () => [
    meta("0.121.0"),
    event(10, { type: "task_started", turn_id: "turn-a", model_context_window: 258400 }),
    prompt(20, "fix the failing test"),
    ...shellRound(1000, "call_1", "bun test", 1, "1 fail"),
    prompt(2500, "only the parser test, please"),
    ...shellRound(3000, "call_2", "bun test parser", 0, "1 pass"),
    ...answer(4000, "Fixed."),
    event(4200, { type: "task_complete", turn_id: "turn-a", last_agent_message: "Fixed." }),
    event(9000, { type: "task_started", turn_id: "turn-b", model_context_window: 258400 }),
    prompt(9010, "commit it"),
    ...answer(9500, "Committed."),
    event(9600, { type: "task_complete", turn_id: "turn-b", last_agent_message: "Committed." }),
  ];

  test("a rollout with task_started keeps its turns: a prompt typed mid-turn starts none", async () => {
    expect(turns(await importLines(markedTurns()))).toEqual([
      { turnId: "turn-a", tools: ["call_1", "call_2"], responses: 3 },
      { turnId: "turn-b", tools: [], responses: 1 },
    ]);
  });

  test("read in two passes, cut between a task_started and a mid-turn prompt, it keeps the same turns", async () => {
    const lines = markedTurns();
    const cut = lines.findIndex((l) => l.includes("only the parser test"));
    await using dir = await tempDir();
    const path = join(dir.path, FILE);
    writeFileSync(path, `${lines.slice(0, cut).join("\n")}\n`);
    await using grown = await tempHome();
    await imported(grown.path, "codex", path);
    appendFileSync(path, `${lines.slice(cut).join("\n")}\n`);
    const inTwo = await imported(grown.path, "codex", path);
    await using once = await tempHome();
    const atOnce = await imported(once.path, "codex", path);
    expect(inTwo.sessions[0]!.events).toEqual(atOnce.sessions[0]!.events);
    expect(turns(atOnce.sessions[0]!.events as Ev[]).map((t) => t.turnId)).toEqual(["turn-a", "turn-b"]);
  });
});

describe("codex call order", () => {
  /** A turn with three parallel `cat` calls (ids `calls`, made in that order), answered in `finish` order. */
  const parallel = (calls: string[], finish: string[]) =>
    importLines([
      meta("0.121.0"),
      event(10, { type: "task_started", turn_id: "turn-a", model_context_window: 258400 }),
      prompt(20, "read the three files"),
      ...calls.map((id, i) =>
        call(1000 + 10 * i, id, "shell_command", { command: `cat ${i}.txt`, workdir: "/Users/dev/app" }),
      ),
      tokens(1100, 900, 50),
      ...finish.map((id, i) => output(1200 + 100 * i, id, shellOutput(0, id))),
      ...answer(2000, "Read them."),
      event(2200, { type: "task_complete", turn_id: "turn-a", last_agent_message: "done" }),
    ]);
  const of = (events: Ev[], type: string) => events.filter((e) => e.type === type).map((e) => e.callId);

  test("regression: parallel calls answered out of order are logged in the order the model made them", async () => {
    // They finish c, a, b.
    const events = await parallel(["call_a", "call_b", "call_c"], ["call_c", "call_a", "call_b"]);
    expect(of(events, "function.call")).toEqual(["call_a", "call_b", "call_c"]);
    expect(of(events, "function.output")).toEqual(["call_c", "call_a", "call_b"]);
    // Ids that look like integers keep their place too (a dictionary lists such keys first).
    const numbered = await parallel(["call_a", "7", "call_c"], ["call_c", "7", "call_a"]);
    expect(of(numbered, "function.call")).toEqual(["call_a", "7", "call_c"]);
    // And when none is answered (the session ended there), the calls written at the end too.
    expect(of(await parallel(["call_a", "7", "call_c"], []), "function.call")).toEqual([
      "call_a",
      "7",
      "call_c",
    ]);
    // Each call comes before its output.
    const seqOf = (type: string, id: string) => events.find((e) => e.type === type && e.callId === id)!.seq;
    for (const id of ["call_a", "call_b", "call_c"])
      expect(seqOf("function.call", id) as number).toBeLessThan(seqOf("function.output", id) as number);
  });

  test("regression: a call made while another ran is logged before that one's output, not after it (its time went back up to minutes)", async () => {
    // Answered in the order they were made: a's output came after b was made, and b was written
    // with its own output, after a's, 200 ms earlier than it. Now each goes in between its
    // response's request and end, and the log's times never go back.
    const events = await parallel(["call_a", "call_b", "call_c"], ["call_a", "call_b", "call_c"]);
    expect(events.filter((e) => e.type.startsWith("function.")).map((e) => `${e.type} ${e.callId}`)).toEqual([
      "function.call call_a",
      "function.call call_b",
      "function.call call_c",
      "function.output call_a",
      "function.output call_b",
      "function.output call_c",
    ]);
    const times = events.map((e) => e.timestamp as number);
    expect(times).toEqual(times.toSorted((a, b) => a - b));
  });

  test("a call refused after a later one finished keeps its call and its denial: the trace reads it as refused", async () => {
    await using dir = await tempDir();
    const path = join(dir.path, FILE);
    writeFileSync(
      path,
      `${[
        meta("0.121.0"),
        event(10, { type: "task_started", turn_id: "turn-a", model_context_window: 258400 }),
        prompt(20, "clean up and list"),
        call(1000, "call_rm", "shell_command", { command: "rm -rf build", workdir: "/Users/dev/app" }),
        call(1010, "call_ls", "shell_command", { command: "ls", workdir: "/Users/dev/app" }),
        tokens(1100, 900, 50),
        output(1200, "call_ls", shellOutput(0, "src")),
        output(1300, "call_rm", "exec command rejected by user"),
        ...answer(2000, "Left build alone."),
        event(2200, { type: "task_complete", turn_id: "turn-a", last_agent_message: "done" }),
      ].join("\n")}\n`,
    );
    await using home = await tempHome();
    const { adapter } = await importOne(home.path, "codex", path);
    try {
      const trace = await loadTrace({ adapter, sessionId: SESSION });
      expect(trace.toolSpans.map((s) => s.callId)).toEqual(["call_ls"]);
      expect(trace.deniedSpans.map((s) => s.callId)).toEqual(["call_rm"]);
    } finally {
      await adapter.close();
    }
  });
});

test("a line whose payload is not an object is reported as unreadable with its line, and the rest imports", async () => {
  await using dir = await tempDir();
  const path = join(dir.path, FILE);
  const lines = [meta("0.80.0"), prompt(100, "hi"), ...answer(200, "hello")];
  writeFileSync(
    path,
    `${[...lines.slice(0, 2), line(150, "response_item", "oops" as never), ...lines.slice(2)].join("\n")}\n`,
  );
  await using home = await tempHome();
  const { adapter, report } = await importOne(home.path, "codex", path);
  try {
    const source = report.sources[0]!;
    expect(source.entries.skipped["(unreadable entry)"]).toBe(1);
    expect(source.warnings).toEqual([
      {
        file: path,
        line: 3,
        message: "entry not imported: response_item entry: its payload is not an object",
      },
    ]);
    expect((await eventsOf(adapter)).filter((e) => e.type === "model.response").length).toBe(1);
  } finally {
    await adapter.close();
  }
});

test("a payload without a type is counted under (no type), not `undefined`", async () => {
  await using dir = await tempDir();
  const path = join(dir.path, FILE);
  const lines = [
    meta("0.80.0"),
    prompt(100, "hi"),
    line(150, "response_item", { role: "user" }),
    ...answer(200, "hello"),
  ];
  writeFileSync(path, `${lines.join("\n")}\n`);
  await using home = await tempHome();
  const { adapter, report } = await importOne(home.path, "codex", path);
  try {
    expect(report.sources[0]!.entries.skipped).toMatchObject({ "response_item/(no type)": 1 });
    expect(Object.keys(report.sources[0]!.entries.skipped)).not.toContain("response_item/undefined");
  } finally {
    await adapter.close();
  }
});

test("regression: a call id used again (a server numbering ids per response) logs both calls, in one read and in two", async () => {
  const lines = [
    meta("0.80.0"),
    prompt(100, "look around"),
    ...shellRound(200, "call_0", "ls", 0, "a.txt"),
    ...shellRound(1200, "call_0", "pwd", 0, "/work"),
    ...answer(2200, "Done."),
  ];
  const once = await importLines(lines);
  const calls = (events: Ev[]) =>
    events.filter((e) => e.type === "function.call").map((e) => [String(e.id).split(":").at(-1), e.callId]);
  expect(calls(once)).toEqual([
    ["call_0", "call_0"],
    ["call_0#2", "call_0"],
  ]);
  // Read in two goes, cut between the calls: the second read numbered from nothing, gave the second
  // call the first one's ids, and the writer dropped its call and output as already stored.
  await using dir = await tempDir();
  await using home = await tempHome();
  const path = join(dir.path, FILE);
  writeFileSync(path, `${lines.slice(0, 5).join("\n")}\n`);
  utimesSync(path, new Date(T0), new Date(T0));
  await imported(home.path, "codex", path);
  writeFileSync(path, `${lines.join("\n")}\n`);
  utimesSync(path, new Date(T0), new Date(T0));
  const grown = (await imported(home.path, "codex", path)).sessions[0]!.events as Ev[];
  expect(calls(grown)).toEqual(calls(once));
  expect(grown.map((e) => e.id)).toEqual(once.map((e) => e.id));
});

test("regression: a last line read without its newline, then the file grows: later lines keep their numbers (Codex keys by line)", async () => {
  const lines = [
    meta("0.80.0"),
    prompt(100, "look around"),
    ...shellRound(200, "call_a", "ls", 0, "a.txt"),
    ...shellRound(1200, "call_b", "pwd", 0, "/work"),
    ...answer(2200, "Done."),
  ];
  await using dir = await tempDir();
  const path = join(dir.path, FILE);
  // A file no longer written whose last line has no newline yet: that line is read as it is.
  writeFileSync(path, lines.slice(0, 5).join("\n"));
  utimesSync(path, new Date(T0), new Date(T0));
  await using home = await tempHome();
  await imported(home.path, "codex", path);
  writeFileSync(path, `${lines.join("\n")}\n`);
  utimesSync(path, new Date(T0), new Date(T0));
  const grown = (await imported(home.path, "codex", path)).sessions[0]!;
  await using onceHome = await tempHome();
  const once = (await imported(onceHome.path, "codex", path)).sessions[0]!;
  // The newline after the line read first counted as a blank line: every later key moved by one.
  expect(grown.events.map((e) => (e as Ev).id)).toEqual(once.events.map((e) => (e as Ev).id));
  expect(grown.messages.map((m) => m.id)).toEqual(once.messages.map((m) => m.id));
});
