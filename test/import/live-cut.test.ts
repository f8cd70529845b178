/**
 * An import without `--watch` that runs while the agent is still writing (`live.ts`): while the file
 * and its last line were written in the last 5 minutes, an open response stays open unless it says it is
 * complete, an unanswered call stays unwritten, and the next import completes them. Closed at the
 * cut, Claude Code's next block (a tool call) was taken for a replay and lost, its result left
 * without a call; Codex's next item became a second response; a call refused after an import had a
 * call and a denial. A file older than that is closed, and a Claude response it cut still takes
 * its next lines when they come.
 */
import { describe, expect, test } from "bun:test";
import { appendFileSync, copyFileSync, mkdirSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { idleSince } from "../../src/import/builder.ts";
import { mayStillStream, QUIET_MS, STREAM_WAIT_MS, stillWritten } from "../../src/import/live.ts";
import type { Agent } from "../../src/import/types.ts";
import { CORPUS, parseJson, runCli, tempDir, tempHome } from "../_helpers.ts";
import { imported } from "./_store.ts";

type Imported = Awaited<ReturnType<typeof imported>>;

/** What a test checks of the one session imported: its messages' parts, its events, the summary. */
function view(r: Imported) {
  const [s] = r.sessions;
  const events = (s?.events ?? []) as { type: string; [k: string]: unknown }[];
  const of = (type: string) => events.filter((e) => e.type === type).map((e) => e.callId);
  return {
    parts: (s?.messages ?? []).map((m) => [m.role, ...m.parts.map((p) => p.type)]),
    calls: of("function.call"),
    outputs: of("function.output"),
    denied: of("function.denied"),
    responses: events
      .filter((e) => e.type === "model.response")
      .map((e) => [e.inputTokens ?? null, e.outputTokens ?? null, e.toolCalls]),
    skipped: r.summary.entries.skipped,
    warnings: r.summary.warnings.map((w) => w.message),
    read: r.summary.files.read,
    open: r.summary.files.open,
  };
}

/** Make `path` look last written `ms` ago. */
function age(path: string, ms = STREAM_WAIT_MS + 60_000): void {
  const then = (Date.now() - ms) / 1000;
  utimesSync(path, then, then);
}

const SID = "5b0c7d1e-0f00-4aaa-9bbb-000000000001";
/** The lines are a minute old: a session still at work (a test that wants it aged ages the file). */
const T0 = Date.now() - 60_000;
const CLAUDE_BASE = {
  sessionId: SID,
  cwd: "/w/app",
  version: "2.1.87",
  userType: "external",
  isSidechain: false,
};
const claudeAt = (s: number) => new Date(T0 + s * 1000).toISOString();

/** One line of a streamed Claude Code response (`stop`: its `stop_reason`, on the last line). */
function block(
  uuid: string,
  parent: string,
  s: number,
  content: object,
  output: number,
  stop: string | null = null,
  id = "msg_1",
) {
  return {
    ...CLAUDE_BASE,
    type: "assistant",
    uuid,
    parentUuid: parent,
    timestamp: claudeAt(s),
    requestId: `req_${id}`,
    message: {
      id,
      role: "assistant",
      model: "claude-x",
      content: [content],
      stop_reason: stop,
      usage: { input_tokens: 10, output_tokens: output },
    },
  };
}

const toolResult = (uuid: string, parent: string, s: number, content: string, isError = false) => ({
  ...CLAUDE_BASE,
  type: "user",
  uuid,
  parentUuid: parent,
  timestamp: claudeAt(s),
  message: {
    role: "user",
    content: [{ type: "tool_result", tool_use_id: "toolu_1", content, is_error: isError }],
  },
});

const lines = (entries: object[]) => entries.map((e) => `${JSON.stringify(e)}\n`);

/** The prompt `u1` that opens the Claude Code sessions here. */
const claudePrompt = {
  ...CLAUDE_BASE,
  type: "user",
  uuid: "u1",
  parentUuid: null,
  timestamp: claudeAt(0),
  message: { role: "user", content: "list the files" },
};

/** A Claude Code session: a prompt, a response in two lines (text, then a tool call), its result. */
const claudeLines = () =>
  lines([
    claudePrompt,
    block("a1", "u1", 1, { type: "text", text: "Let me look." }, 5),
    block("a2", "a1", 2, { type: "tool_use", id: "toolu_1", name: "Bash", input: { command: "ls" } }, 20),
    toolResult("u2", "a2", 3, "a.ts b.ts"),
  ]);

const THREAD = "019b64e5-57fa-7463-b644-0000000000c1";

/** A Codex rollout: a prompt, a response in two items (text, then a call), its output, its usage. */
function codexLines(): string[] {
  const line = (s: number, type: string, payload: object) =>
    `${JSON.stringify({ timestamp: new Date(T0 + s * 1000).toISOString(), type, payload })}\n`;
  return [
    line(0, "session_meta", {
      id: THREAD,
      timestamp: new Date(T0).toISOString(),
      cwd: "/w/app",
      cli_version: "0.80.0",
      model_provider: "openai",
    }),
    line(0, "event_msg", { type: "task_started", turn_id: "t1" }),
    line(0, "event_msg", { type: "user_message", message: "list the files", kind: "plain" }),
    line(1, "response_item", {
      type: "message",
      role: "assistant",
      content: [{ type: "output_text", text: "Let me look." }],
    }),
    line(2, "response_item", {
      type: "function_call",
      name: "shell",
      arguments: '{"command":["ls"]}',
      call_id: "call_1",
    }),
    line(3, "response_item", { type: "function_call_output", call_id: "call_1", output: "a.ts b.ts" }),
    line(3, "event_msg", {
      type: "token_count",
      info: {
        total_token_usage: { total_tokens: 30 },
        last_token_usage: { input_tokens: 10, cached_input_tokens: 0, output_tokens: 20, total_tokens: 30 },
      },
    }),
  ];
}

const cases: { agent: Agent; file: string; lines: () => string[]; cut: number }[] = [
  { agent: "claude", file: `${SID}.jsonl`, lines: claudeLines, cut: 2 },
  { agent: "codex", file: `rollout-2026-03-01T10-00-00-${THREAD}.jsonl`, lines: codexLines, cut: 4 },
];

test("a time may still be written to while it is under the wait, behind or (a clock ahead) in front", () => {
  const now = Date.now();
  expect(mayStillStream(now - 1000, now)).toBe(true);
  expect(mayStillStream(now - STREAM_WAIT_MS, now)).toBe(false);
  expect(mayStillStream(now + 60_000, now)).toBe(true);
  // A date far ahead (a mangled one) must not keep a file open for ever.
  expect(mayStillStream(now + STREAM_WAIT_MS + 1, now)).toBe(false);
  expect(mayStillStream(Number.NaN, now)).toBe(false);
  // A file is still written when it and its last line are recent: a fresh copy of an old
  // transcript is not (nor is an untouched file whose lines say now).
  expect(stillWritten(now - 1000, now - 2000)).toBe(true);
  expect(stillWritten(now - 1000, now - STREAM_WAIT_MS * 2)).toBe(false);
  expect(stillWritten(now - STREAM_WAIT_MS * 2, now - 1000)).toBe(false);
  expect(stillWritten(undefined, now)).toBe(false);
  // Whole documents idle after an hour, behind or ahead (a clock ahead must not keep them at work).
  expect(idleSince(now - 30 * 60_000, now)).toBe(false);
  expect(idleSince(now - 61 * 60_000, now)).toBe(true);
  expect(idleSince(now + 61 * 60_000, now)).toBe(true);
  expect(idleSince(Number.NaN, now)).toBe(true);
});

test("a transcript gone while it was still being written is forgotten with a warning", async () => {
  await using dir = await tempDir();
  await using home = await tempHome();
  const path = join(dir.path, `${SID}.jsonl`);
  writeFileSync(path, claudeLines().slice(0, 2).join(""));
  expect(view(await imported(home.path, "claude", dir.path)).open).toBe(1);
  rmSync(path);
  const after = view(await imported(home.path, "claude", dir.path));
  expect(after.warnings).toEqual([expect.stringContaining("gone while it was still being written")]);
  expect(view(await imported(home.path, "claude", dir.path)).warnings).toEqual([]);
});

test("regression: a transcript moved while it was still being written, and read at its new path in the same pass, gets no warning that something was lost", async () => {
  await using dir = await tempDir();
  await using home = await tempHome();
  mkdirSync(join(dir.path, "live"));
  const path = join(dir.path, "live", `${SID}.jsonl`);
  writeFileSync(path, claudeLines().slice(0, 2).join(""));
  expect(view(await imported(home.path, "claude", dir.path)).open).toBe(1);
  mkdirSync(join(dir.path, "archived"));
  rmSync(path);
  writeFileSync(join(dir.path, "archived", `${SID}.jsonl`), claudeLines().join(""));
  const after = view(await imported(home.path, "claude", dir.path));
  expect(after.warnings).toEqual([]);
});

test("a fresh copy of an old transcript cut inside a response is closed at once (nobody writes it)", async () => {
  await using dir = await tempDir();
  await using home = await tempHome();
  const path = join(dir.path, `${SID}.jsonl`);
  const old = claudeLines().map((l) =>
    l.replace(/"timestamp":"[^"]*"/, '"timestamp":"2025-06-01T10:00:00.000Z"'),
  );
  writeFileSync(path, old.slice(0, 3).join(""));
  const r = view(await imported(home.path, "claude", path));
  expect([r.responses, r.calls, r.open]).toEqual([[[10, 20, ["Bash"]]], ["toolu_1"], 0]);
});

describe("an import that cuts a response the agent is still writing", () => {
  for (const { agent, file, lines, cut } of cases) {
    test(`${agent}: the response stays open and the next import completes it`, async () => {
      await using dir = await tempDir();
      await using home = await tempHome();
      const path = join(dir.path, file);
      const all = lines();
      writeFileSync(path, all.slice(0, cut).join(""));
      const first = view(await imported(home.path, agent, path));
      expect([first.responses, first.open]).toEqual([[], 1]); // open: not written yet
      appendFileSync(path, all.slice(cut).join(""));
      const grown = view(await imported(home.path, agent, path));
      // One response, one message with both of its parts, the call paired with its output.
      expect(grown.parts).toEqual([
        ["user", "text"],
        ["assistant", "text", "tool"],
      ]);
      expect(grown.skipped).toEqual({});
      if (agent === "claude") {
        // Claude Code's response may go on (no stop_reason yet): still open, read again. The
        // result after its last line waits with it (written now, it would go in before the
        // response's end; see claude-held.ts).
        expect([grown.calls, grown.outputs]).toEqual([[], []]);
        expect([grown.responses, grown.open]).toEqual([[], 1]);
        expect(view(await imported(home.path, agent, path)).read).toBe(1);
      } else {
        expect(grown.calls).toHaveLength(1);
        expect(grown.outputs).toEqual(grown.calls);
        // Codex's usage closed it: settled, the next import finds the file unchanged.
        expect([grown.responses, grown.open]).toEqual([[[10, 20, ["shell"]]], 0]);
        expect(view(await imported(home.path, agent, path)).read).toBe(0);
      }
      // Once the file has not been written for the wait, the response is closed.
      age(path);
      const closed = view(await imported(home.path, agent, path));
      expect([closed.responses, closed.open]).toEqual([
        [[10, 20, [agent === "claude" ? "Bash" : "shell"]]],
        0,
      ]);
      expect(closed.calls).toHaveLength(1);
      expect(closed.outputs).toEqual(closed.calls);
    });

    test(`${agent}: a file not written for the wait is closed at once, even unchanged since`, async () => {
      await using dir = await tempDir();
      await using home = await tempHome();
      const path = join(dir.path, file);
      writeFileSync(
        path,
        lines()
          .slice(0, cut + 1)
          .join(""),
      );
      expect(view(await imported(home.path, agent, path)).open).toBe(1);
      age(path);
      const closed = view(await imported(home.path, agent, path));
      expect(closed.read).toBe(1);
      expect(closed.open).toBe(0);
      expect(closed.responses).toEqual(agent === "claude" ? [[10, 20, ["Bash"]]] : [[null, null, ["shell"]]]);
      // The call never answered (a crashed session) is written as a call.
      expect(closed.calls).toHaveLength(1);
      expect(view(await imported(home.path, agent, path)).read).toBe(0);
    });
  }

  test("claude: a finished session's last response, which says it is complete, is closed at once", async () => {
    await using dir = await tempDir();
    await using home = await tempHome();
    const path = join(dir.path, `${SID}.jsonl`);
    const done = (stop: string | null) =>
      block("a3", "u2", 4, { type: "text", text: "Two files." }, 7, stop, "msg_2");
    // The file was just written: a CI run imports it the moment the agent exits.
    writeFileSync(path, [...claudeLines(), ...lines([done("end_turn")])].join(""));
    const ci = view(await imported(home.path, "claude", path));
    expect(ci.responses).toEqual([
      [10, 20, ["Bash"]],
      [10, 7, []],
    ]);
    expect(ci.open).toBe(0);
    expect(view(await imported(home.path, "claude", path)).read).toBe(0);
    // Claude Code before 2.1.8x wrote no stop_reason: that last response waits for the file to age.
    await using home2 = await tempHome();
    writeFileSync(path, [...claudeLines(), ...lines([done(null)])].join(""));
    const old = view(await imported(home2.path, "claude", path));
    expect([old.responses.length, old.open]).toEqual([1, 1]);
    age(path);
    expect(view(await imported(home2.path, "claude", path)).responses).toEqual(ci.responses);
  });

  test("claude: a watch pass closes a response that says it is complete once the file is quiet (journey review 1)", async () => {
    await using dir = await tempDir();
    await using home = await tempHome();
    const path = join(dir.path, `${SID}.jsonl`);
    const done = block("a3", "u2", 4, { type: "text", text: "Two files." }, 7, "end_turn", "msg_2");
    writeFileSync(path, [...claudeLines(), ...lines([done])].join(""));
    // Just written: a watch pass leaves it (Claude Code 2.1.1xx writes a response's lines together,
    // each with the stop_reason: more of it may be on its way).
    const fresh = view(await imported(home.path, "claude", path, undefined, false));
    expect(fresh.responses).toHaveLength(1);
    // The file does not change again: a later pass reads it anyway once it is quiet, and closes the
    // answer (it showed in flight, then hung, until a final import; passes skip unchanged files).
    await Bun.sleep(QUIET_MS + 300);
    const quiet = view(await imported(home.path, "claude", path, undefined, false));
    expect(quiet.responses).toEqual([
      [10, 20, ["Bash"]],
      [10, 7, []],
    ]);
    // Then it is unchanged for the passes after.
    expect(view(await imported(home.path, "claude", path, undefined, false)).read).toBe(0);
  }, 30_000);

  test("claude: a response an import closed (the file had aged) takes its next lines when they come", async () => {
    await using dir = await tempDir();
    await using home = await tempHome();
    const path = join(dir.path, `${SID}.jsonl`);
    const all = claudeLines();
    writeFileSync(path, all.slice(0, 2).join(""));
    age(path); // a copy arriving late, a clock behind, a long pause: the cut is closed
    expect(view(await imported(home.path, "claude", path)).responses).toEqual([[10, 5, []]]);
    appendFileSync(path, all.slice(2).join(""));
    const live = view(await imported(home.path, "claude", path));
    // Just written, the response goes on and may go on further: its result waits with it.
    expect([live.calls, live.outputs, live.open]).toEqual([[], [], 1]);
    expect(live.warnings).toEqual([
      expect.stringContaining("response msg_1 continued after an import closed it"),
    ]);
    age(path);
    const grown = view(await imported(home.path, "claude", path));
    // Not a replay: the tool call is kept, paired with its result, in a message of its own.
    expect(grown.skipped).toEqual({});
    expect(grown.parts).toEqual([
      ["user", "text"],
      ["assistant", "text"],
      ["assistant", "tool"],
    ]);
    expect(grown.calls).toEqual(["toolu_1"]);
    expect(grown.outputs).toEqual(["toolu_1"]);
    // One model call, with the usage its lines gave when it was written; the warning said so.
    expect(grown.responses).toEqual([[10, 5, []]]);
  });

  test("claude: a call waiting for permission is not written as a call before the user refuses it", async () => {
    await using dir = await tempDir();
    await using home = await tempHome();
    const path = join(dir.path, `${SID}.jsonl`);
    const all = claudeLines();
    const asking = block(
      "a2",
      "a1",
      2,
      { type: "tool_use", id: "toolu_1", name: "Bash", input: { command: "rm -rf build" } },
      20,
      "tool_use",
    );
    writeFileSync(path, [...all.slice(0, 2), ...lines([asking])].join(""));
    // Just written: the response stopped for its call, whose result (and in 2.1.1xx more of the
    // response) comes after: left open, as a whole read would have it then.
    const fresh = view(await imported(home.path, "claude", path));
    expect([fresh.responses, fresh.calls, fresh.open]).toEqual([[], [], 1]);
    // Quiet a while (the user is asked): the response is complete (stop_reason), the call waits.
    age(path, QUIET_MS + 1_000);
    const waiting = view(await imported(home.path, "claude", path));
    expect([waiting.responses, waiting.calls, waiting.open]).toEqual([[[10, 20, ["Bash"]]], [], 1]);
    const refusal =
      "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file). STOP what you are doing and wait for the user to tell you how to proceed.";
    appendFileSync(path, lines([toolResult("u2", "a2", 30, refusal, true)]).join(""));
    const refused = view(await imported(home.path, "claude", path));
    expect([refused.calls, refused.outputs, refused.denied]).toEqual([[], [], ["toolu_1"]]);
  });
});

test("regression: a plain import right after a response stopped for its call, then one after the rest, leaves the log one import of the whole file leaves", async () => {
  await using dir = await tempDir();
  const path = join(dir.path, `${SID}.jsonl`);
  const asking = block(
    "a2",
    "u1",
    2,
    { type: "tool_use", id: "toolu_1", name: "Bash", input: { command: "ls" } },
    20,
    "tool_use",
  );
  const rest = [
    toolResult("u2", "a2", 3, "a.txt\nb.txt"),
    block("a3", "u2", 4, { type: "text", text: "Two files." }, 7, "end_turn", "msg_2"),
  ];
  writeFileSync(path, [claudePrompt, asking].map((e) => `${JSON.stringify(e)}\n`).join(""));
  await using grownHome = await tempHome();
  await imported(grownHome.path, "claude", path);
  appendFileSync(path, lines(rest).join(""));
  const grown = await imported(grownHome.path, "claude", path);
  await using onceHome = await tempHome();
  const once = await imported(onceHome.path, "claude", path);
  const order = (r: Imported) =>
    (r.sessions[0]!.events as { type: string; callId?: string }[]).map((e) => `${e.type} ${e.callId ?? ""}`);
  // The response was written before its call and output (closed at the first import's end).
  expect(order(grown)).toEqual(order(once));
  expect(grown.sessions[0]!.messages).toEqual(once.sessions[0]!.messages);
});

test("regression: Claude Code 2.1.1xx writes a response's final stop_reason on its thinking line too, seconds before its text: an import between them leaves it open (its text became a message outside its model call)", async () => {
  await using dir = await tempDir();
  const path = join(dir.path, `${SID}.jsonl`);
  const thinking = block(
    "a2",
    "u1",
    2,
    { type: "thinking", thinking: "Let me think.", signature: "s" },
    40,
    "end_turn",
  );
  const text = block("a3", "a2", 29, { type: "text", text: "Here is the answer." }, 40, "end_turn");
  writeFileSync(path, lines([claudePrompt, thinking]).join(""));
  await using grownHome = await tempHome();
  const first = view(await imported(grownHome.path, "claude", path));
  expect([first.responses, first.open]).toEqual([[], 1]);
  appendFileSync(path, lines([text]).join(""));
  const grown = await imported(grownHome.path, "claude", path);
  await using onceHome = await tempHome();
  const once = await imported(onceHome.path, "claude", path);
  expect(view(grown).warnings).toEqual([]);
  expect(view(grown).responses).toEqual([[10, 40, []]]);
  expect(grown.sessions[0]!.events).toEqual(once.sessions[0]!.events);
  expect(grown.sessions[0]!.messages).toEqual(once.sessions[0]!.messages);
  expect(once.sessions[0]!.messages.map((m) => [m.role, m.parts.length])).toEqual([
    ["user", 1],
    ["assistant", 1],
  ]);
});

describe("a call not yet running in a whole-document session at work (Gemini CLI awaiting approval, OpenCode pending)", () => {
  const now = Date.now() - 60_000;
  const iso = (t: number) => new Date(t).toISOString();
  const gemini = (status: string) => {
    const call = {
      id: "c1",
      name: "run_shell_command",
      args: { command: "rm -rf build" },
      status,
      timestamp: iso(now + 2000),
      ...(status === "cancelled"
        ? {
            result: [
              {
                functionResponse: { id: "c1", name: "run_shell_command", response: { output: "cancelled" } },
              },
            ],
          }
        : {}),
    };
    return [
      {
        sessionId: "c0ffee00-1111-4222-8333-444455556666",
        projectHash: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
        startTime: iso(now),
        lastUpdated: iso(now + 2000),
        directories: ["/w/app"],
      },
      { id: "u1", timestamp: iso(now), type: "user", content: [{ text: "clean up" }] },
      {
        id: "g1",
        timestamp: iso(now + 1000),
        type: "gemini",
        content: "",
        model: "gemini-2.5-pro",
        toolCalls: [call],
        tokens: { input: 100, output: 10, cached: 0, thoughts: 0, tool: 0, total: 110 },
      },
    ]
      .map((r) => `${JSON.stringify(r)}\n`)
      .join("");
  };
  const SES = "ses_1a2b3c4d5ffeQwErTyUiOpAsDf";
  const opencode = (state: object) =>
    JSON.stringify({
      info: {
        id: SES,
        version: "1.17.3",
        directory: "/w/app",
        title: "Clean up",
        time: { created: now, updated: now + 2000 },
      },
      messages: [
        {
          info: { id: "msg_001", sessionID: SES, role: "user", time: { created: now } },
          parts: [{ id: "prt_001", sessionID: SES, messageID: "msg_001", type: "text", text: "clean up" }],
        },
        {
          info: {
            id: "msg_002",
            sessionID: SES,
            parentID: "msg_001",
            role: "assistant",
            modelID: "m",
            providerID: "p",
            time: { created: now + 1000 },
          },
          parts: [
            {
              id: "prt_002",
              sessionID: SES,
              messageID: "msg_002",
              type: "tool",
              tool: "bash",
              callID: "call_1",
              state,
            },
          ],
        },
      ],
    });
  const input = { command: "rm -rf build" };
  const cases: { agent: Agent; file: string; asking: string; refused: string; callId: string }[] = [
    {
      agent: "gemini",
      file: "session-2026-05-01T10-00-c0ffee00.jsonl",
      asking: gemini("awaiting_approval"),
      refused: gemini("cancelled"),
      callId: "c1",
    },
    {
      agent: "opencode",
      file: `${SES}.json`,
      asking: opencode({ status: "pending", input, raw: JSON.stringify(input) }),
      refused: opencode({
        status: "error",
        input,
        error: "Error: The user rejected permission to use this specific tool call.",
        time: { start: now + 1500, end: now + 2000 },
      }),
      callId: "call_1",
    },
  ];
  test("gemini: with --finished the waiting call is written at once, cut off", async () => {
    await using dir = await tempDir();
    await using home = await tempHome();
    const path = join(dir.path, cases[0]!.file);
    writeFileSync(path, cases[0]!.asking);
    const r = parseJson<{ sources: { files: { open: number } }[] }>(
      runCli(["import", "gemini", path, "--finished", "--json"], { home: home.path }),
    );
    expect(r.sources[0]!.files.open).toBe(0);
    const id = parseJson<{ items: { id: string }[] }>(
      runCli(["session", "list", "--json"], { home: home.path }),
    ).items[0]!.id;
    const events = runCli(["rollout", "cat", id], { home: home.path }).stdout;
    expect(events).toContain('"type":"function.call"');
    expect(events).toContain('"type":"turn.aborted"');
  });

  for (const { agent, file, asking, refused, callId } of cases) {
    test(`${agent}: not written as a call before the user refuses it`, async () => {
      await using dir = await tempDir();
      await using home = await tempHome();
      const path = join(dir.path, file);
      writeFileSync(path, asking);
      const waiting = view(await imported(home.path, agent, path));
      expect(waiting.parts).toEqual([
        ["user", "text"],
        ["assistant", "tool"],
      ]);
      expect([waiting.calls, waiting.denied, waiting.open]).toEqual([[], [], 1]);
      // Read again though unchanged: the call is still waiting.
      expect(view(await imported(home.path, agent, path)).read).toBe(1);
      writeFileSync(path, refused);
      const after = view(await imported(home.path, agent, path));
      expect([after.calls, after.outputs, after.denied, after.open]).toEqual([[], [], [callId], 0]);
      expect(view(await imported(home.path, agent, path)).read).toBe(0);
    });
  }
});

test("regression: import --finished marks done what a plain import already read whole", async () => {
  await using dir = await tempDir();
  await using home = await tempHome();
  // A session that has just ended, its last response complete: a plain import leaves nothing open.
  const done = lines([
    claudePrompt,
    block(
      "a1",
      "u1",
      1,
      { type: "tool_use", id: "toolu_1", name: "Bash", input: { command: "ls" } },
      20,
      "tool_use",
    ),
    toolResult("u2", "a1", 2, "a.ts b.ts"),
    block("a2", "u2", 3, { type: "text", text: "Two files." }, 5, "end_turn", "msg_2"),
  ]);
  writeFileSync(join(dir.path, `${SID}.jsonl`), done.join(""));
  const cases = join(dir.path, "cases.json");
  writeFileSync(cases, JSON.stringify([{ id: "done", sessions: "all", expect: [{ noHung: true }] }]));
  const plain = parseJson<{ sources: { files: { open: number } }[] }>(
    runCli(["import", "claude", dir.path, "--json"], { home: home.path }),
  );
  expect(plain.sources[0]!.files.open).toBe(0);
  expect(runCli(["eval", cases], { home: home.path }).code).toBe(2);
  const finished = parseJson<{ sources: { files: { unchanged: number } }[] }>(
    runCli(["import", "claude", dir.path, "--finished", "--json"], { home: home.path }),
  );
  expect(finished.sources[0]!.files.unchanged).toBe(1);
  expect(runCli(["eval", cases], { home: home.path }).code).toBe(0);
  // A whole document read again that changes nothing (touched, or copied again) is marked too.
  const chat = "session-2026-03-28T21-32-c4c43609.json";
  const gemini = join(dir.path, "gemini", chat);
  mkdirSync(dirname(gemini), { recursive: true });
  copyFileSync(join(CORPUS, "gemini", chat), gemini);
  runCli(["import", "gemini", gemini], { home: home.path });
  utimesSync(gemini, new Date(), new Date());
  runCli(["import", "gemini", gemini, "--finished"], { home: home.path });
  const sources = parseJson<{ items: { source?: { agent: string; finished?: boolean } }[] }>(
    runCli(["session", "list", "--json"], { home: home.path }),
  ).items.map((m) => [m.source?.agent, m.source?.finished]);
  expect(sources.sort()).toEqual([
    ["claude", true],
    ["gemini", true],
  ]);
});

test("import --finished closes at once what a transcript still being written would leave open", async () => {
  await using dir = await tempDir();
  await using home = await tempHome();
  // Claude Code before 2.1.8x, just exited (no stop_reason), and a call it never got an answer for.
  writeFileSync(join(dir.path, `${SID}.jsonl`), claudeLines().slice(0, 3).join(""));
  const cli = (...args: string[]) => runCli(["import", "claude", dir.path, ...args], { home: home.path });
  const r = parseJson<{ sources: { files: { open: number } }[] }>(cli("--finished", "--json"));
  expect(r.sources[0]!.files.open).toBe(0);
  const id = `claude-${SID}`;
  const events = runCli(["rollout", "cat", id], { home: home.path }).stdout;
  expect(events).toContain('"type":"model.response"');
  expect(events).toContain('"type":"function.call"');
  // Unchanged, the file is not read again.
  expect(parseJson<{ sources: { files: { read: number } }[] }>(cli("--json")).sources[0]!.files.read).toBe(0);
  // And `eval` evaluates it: its last event is a minute old, but the agent said it was done (a
  // session imported without --finished is set aside as looking still running).
  const cases = join(dir.path, "cases.json");
  writeFileSync(cases, JSON.stringify([{ id: "done", sessions: "all", expect: [{ noHung: true }] }]));
  const evaluated = runCli(["eval", cases, "--json"], { home: home.path });
  expect(evaluated.code).toBe(0);
  await using other = await tempHome();
  runCli(["import", "claude", dir.path], { home: other.path });
  const aside = runCli(["eval", cases], { home: other.path });
  expect([aside.code, aside.stdout]).toEqual([2, expect.stringContaining("looks still running")]);
  // More lines read later without --finished: it may be running again.
  const finished = () =>
    parseJson<{ meta: { source: Record<string, unknown> } }>(
      runCli(["session", "show", id, "--json"], { home: home.path }),
    ).meta.source.finished;
  expect(finished()).toBe(true);
  appendFileSync(join(dir.path, `${SID}.jsonl`), claudeLines().slice(3, 4).join(""));
  cli();
  expect(finished()).toBeUndefined();
  const both = cli("--finished", "--watch");
  expect([both.code, both.stderr]).toEqual([2, expect.stringContaining("--finished and --watch")]);
});

describe("regression: a last line without its newline in a file no longer written is read (the session's last answer was left out for good, without a word)", () => {
  const SRC = join(CORPUS, "claude", "drmaciver_claude-reliability", "coverage-test-fix.transcript.jsonl");
  const stripped = async (dir: string) => {
    const path = join(dir, "c64cc478-3430-40fe-8e9c-4ee9986e9754.jsonl");
    writeFileSync(path, (await Bun.file(SRC).text()).replace(/\n$/, ""));
    return path;
  };
  const count = (home: string, args: string[]) => {
    const r = runCli(["import", "claude", ...args, "--json"], { home });
    const doc = parseJson<{ totals: { imported: number; warnings: number } }>(r);
    const list = parseJson<{ items: { messageCount: number }[] }>(
      runCli(["session", "list", "--json"], { home }),
    );
    return [doc.totals.imported, list.items[0]?.messageCount];
  };

  test("with --finished, and in a file untouched for minutes; as one import of the whole file", async () => {
    await using dir = await tempDir();
    const path = await stripped(dir.path);
    await using whole = await tempHome();
    const want = count(whole.path, [SRC]);
    await using finished = await tempHome();
    expect(count(finished.path, [path, "--finished"])).toEqual(want);
    age(path);
    await using plain = await tempHome();
    expect(count(plain.path, [path])).toEqual(want);
    // Read: nothing is left to read again.
    expect(runCli(["import", "claude", path, "--json"], { home: plain.path }).stdout).toContain(
      '"unchanged": 1',
    );
  });

  test("a watch pass reads it too (a watcher left running never did)", async () => {
    await using dir = await tempDir();
    const path = await stripped(dir.path);
    age(path);
    await using watched = await tempHome();
    const pass = await imported(watched.path, "claude", path, undefined, false);
    await using whole = await tempHome();
    const once = await imported(whole.path, "claude", SRC);
    // Its response waits to be closed, as a watch pass leaves one (its usage comes then).
    const texts = (r: typeof once) => r.sessions[0]!.messages.map((m) => [m.id, m.parts]);
    expect(texts(pass)).toEqual(texts(once));
  });

  test("one cut short in such a file is reported with its line, not imported; completed later, it is (import audit 3)", async () => {
    await using dir = await tempDir();
    const path = join(dir.path, "c64cc478-3430-40fe-8e9c-4ee9986e9754.jsonl");
    const text = await Bun.file(SRC).text();
    writeFileSync(path, text.slice(0, text.length - 40));
    age(path);
    await using home = await tempHome();
    const r = runCli(["import", "claude", path, "--json"], { home: home.path });
    const doc = parseJson<{ sources: { warnings: { file: string; line?: number; message: string }[] }[] }>(r);
    expect(doc.sources[0]!.warnings).toEqual([
      {
        file: path,
        line: text.trimEnd().split("\n").length,
        message:
          "last line cut short (no newline, not whole JSON) in a file no longer written: not imported (read again if the file grows)",
      },
    ]);
    // Unchanged: not read again, not said again.
    expect(runCli(["import", "claude", path], { home: home.path }).stderr).toBe("");
    // Its writer came back: the line is read whole, and the store is one import of the whole file.
    writeFileSync(path, text);
    age(path);
    const grown = await imported(home.path, "claude", path);
    expect(grown.summary.warnings).toEqual([]);
    await using whole = await tempHome();
    const once = await imported(whole.path, "claude", SRC);
    expect(grown.sessions[0]!.events).toEqual(once.sessions[0]!.events);
    expect(grown.sessions[0]!.messages).toEqual(once.sessions[0]!.messages);
  });
});

describe("regression: a Codex response an import closed right before its token_count gets that usage on its message when it comes (it went on no message: the session's tokens missed it)", () => {
  for (const [name, cut, what] of [
    [
      "rollout-2026-04-19T22-10-31-019da915-31a8-74d0-ad7f-640110fae046.jsonl",
      27,
      "one with an unanswered call",
    ],
    ["rollout-2026-04-19T22-04-58-019da910-1d2d-7883-b552-6e3adf8a4ed9.jsonl", 31, "a plain answer"],
  ] as const) {
    test(what, async () => {
      await using dir = await tempDir();
      const whole = await Bun.file(join(CORPUS, "codex", name)).text();
      const path = join(dir.path, name);
      expect(JSON.parse(whole.split("\n")[cut]!).payload.type).toBe("token_count");
      writeFileSync(path, `${whole.split("\n").slice(0, cut).join("\n")}\n`);
      age(path); // a copy arriving in pieces, not a live file: the response is closed at the cut
      await using grownHome = await tempHome();
      await imported(grownHome.path, "codex", path);
      writeFileSync(path, whole);
      age(path);
      const grown = (await imported(grownHome.path, "codex", path)).sessions[0]!;
      await using onceHome = await tempHome();
      const once = (await imported(onceHome.path, "codex", path)).sessions[0]!;
      const tokensOf = (events: unknown[]) =>
        (events as { type: string; inputTokens?: number }[])
          .filter((e) => e.type === "model.response")
          .reduce((n, e) => n + (e.inputTokens ?? 0), 0);
      expect(grown.meta.tokens).toEqual(once.meta.tokens);
      expect(grown.meta.tokens?.input).toBe(tokensOf(grown.events));
      const inputOf = (ms: typeof once.messages) => ms.reduce((n, m) => n + (m.usage?.inputTokens ?? 0), 0);
      expect(inputOf(grown.messages)).toBe(once.meta.tokens?.input ?? -1);
    });
  }
});

test("claude: final imports of a file still being written, cut after each line, log what one import of it does (results held past a cut)", async () => {
  // A final import cut right after a tool result wrote the result before the open response, and
  // the response's end came after it, earlier than it (held-results review 1).
  const all = [
    ...claudeLines(),
    ...lines([block("a3", "u2", 4, { type: "text", text: "Two files." }, 7, "end_turn", "msg_2")]),
  ];
  await using dir = await tempDir();
  const path = join(dir.path, `${SID}.jsonl`);
  const shape = (r: Imported) =>
    (r.sessions[0]?.events ?? []).map(
      (e) => `${(e as { type: string }).type} ${String((e as { id: string }).id)}`,
    );
  await using home = await tempHome();
  for (let n = 1; n <= all.length; n++) {
    writeFileSync(path, all.slice(0, n).join(""));
    await imported(home.path, "claude", path);
  }
  const grown = shape(await imported(home.path, "claude", path));
  await using once = await tempHome();
  expect(grown).toEqual(shape(await imported(once.path, "claude", path)));
  expect(grown.map((e) => e.split(" ")[0])).toEqual([
    "session.started",
    "turn.started",
    "model.request",
    "function.call",
    "model.response",
    "function.output",
    "model.request",
    "model.response",
  ]);
});
