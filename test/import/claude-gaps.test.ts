/**
 * Claude Code entries the corpus does not hold, shaped as Claude Code writes them (see
 * ../shared/reference/transcript-formats.md and the public transcripts it cites): calls refused
 * for want of a permission nobody granted, prompts queued while the agent worked, server tools
 * (web search) whose result comes in the response itself, entries a resumed session writes again,
 * and ≤ 1.0.x `summary` lines whose leaf is in another session's file (that one is from the corpus).
 */
import { describe, expect, test } from "bun:test";
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CORPUS, tempDir, tempHome } from "../_helpers.ts";
import { imported } from "./_store.ts";

const SID = "0b7c2f4e-1111-4222-8333-944455556666";
let clock = Date.parse("2026-05-01T10:00:00.000Z");
const base = (uuid: string, parentUuid: string | null) => ({
  parentUuid,
  isSidechain: false,
  userType: "external",
  cwd: "/work/app",
  sessionId: SID,
  version: "2.1.90",
  gitBranch: "main",
  uuid,
  timestamp: new Date((clock += 1000)).toISOString(),
});
const prompt = (uuid: string, parent: string | null, text: string) => ({
  ...base(uuid, parent),
  type: "user",
  message: { role: "user", content: text },
});
const assistant = (uuid: string, parent: string, id: string, content: unknown[], usage = true) => ({
  ...base(uuid, parent),
  type: "assistant",
  requestId: `req_${id}`,
  message: {
    id,
    type: "message",
    role: "assistant",
    model: "claude-sonnet-4-6",
    content,
    stop_reason: null,
    ...(usage
      ? {
          usage: {
            input_tokens: 10,
            output_tokens: 5,
            cache_read_input_tokens: 0,
            cache_creation_input_tokens: 0,
          },
        }
      : {}),
  },
});
const result = (uuid: string, parent: string, callId: string, text: string, isError: boolean) => ({
  ...base(uuid, parent),
  type: "user",
  message: {
    role: "user",
    content: [{ type: "tool_result", tool_use_id: callId, content: text, is_error: isError }],
  },
  toolUseResult: `Error: ${text}`,
});
const toolUse = (id: string, name: string, input: unknown) => ({ type: "tool_use", id, name, input });

const jsonl = (lines: unknown[]) => `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`;

/** Import `lines` as one transcript; with `more`, import `lines` first and then again with `more` appended. */
async function importLines(lines: unknown[], more?: unknown[]) {
  await using dir = await tempDir();
  await using home = await tempHome();
  const folder = join(dir.path, "projects", "-work-app");
  mkdirSync(folder, { recursive: true });
  const file = join(folder, `${SID}.jsonl`);
  writeFileSync(file, jsonl(lines));
  let result = await imported(home.path, "claude", file);
  if (more) {
    appendFileSync(file, jsonl(more));
    result = await imported(home.path, "claude", file);
  }
  expect(result.sessions.length).toBe(1);
  return { ...result.sessions[0]!, summary: result.summary };
}

const ofType = (events: unknown[], type: string) =>
  events.filter((e) => (e as { type?: string }).type === type) as Record<string, unknown>[];

describe("claude entries beyond the corpus", () => {
  test("a call refused because no one granted the permission is a denial (source permission), not a failure", async () => {
    const denied = [
      "Claude requested permissions to use Bash, but you haven't granted it yet.",
      "Claude requested permissions to write to /work/app/.env, but you haven't granted it yet.",
      "This command requires approval",
    ];
    const lines: unknown[] = [prompt("u1", null, "ship it")];
    denied.forEach((text, i) => {
      lines.push(
        assistant(`a${i}`, "u1", `msg_${i}`, [toolUse(`toolu_${i}`, "Bash", { command: "git push" })]),
      );
      lines.push(result(`r${i}`, `a${i}`, `toolu_${i}`, text, true));
    });
    // A real failure beside them stays a failed output.
    lines.push(assistant("a9", "r2", "msg_9", [toolUse("toolu_9", "Bash", { command: "false" })]));
    lines.push(result("r9", "a9", "toolu_9", "Exit code 1", true));
    const s = await importLines(lines);
    const denials = ofType(s.events, "function.denied");
    expect(denials.map((d) => [d.callId, d.source])).toEqual([
      ["toolu_0", "permission"],
      ["toolu_1", "permission"],
      ["toolu_2", "permission"],
    ]);
    expect(denials[1]!.reason).toBe(denied[1]);
    const outputs = ofType(s.events, "function.output");
    expect(outputs.map((o) => [o.callId, o.failed])).toEqual([["toolu_9", true]]);
    // A result that merely quotes the sentence later on is not a denial.
    const quoted = await importLines([
      prompt("v1", null, "grep the logs"),
      assistant("b1", "v1", "msg_b1", [toolUse("toolu_q", "Bash", { command: "grep granted log" })]),
      result(
        "q1",
        "b1",
        "toolu_q",
        "log: Claude requested permissions to use Bash, but you haven't granted it yet.",
        true,
      ),
    ]);
    expect(ofType(quoted.events, "function.denied")).toEqual([]);
    expect(ofType(quoted.events, "function.output")[0]!.failed).toBe(true);
  });

  test("a prompt queued while the agent worked is a user message that opens a turn; a task notice is synthetic", async () => {
    const notice =
      "<task-notification>\n<task-id>bg1</task-id>\n<status>completed</status>\n</task-notification>";
    const s = await importLines([
      prompt("u1", null, "fix the build"),
      assistant("a1", "u1", "msg_1", [toolUse("toolu_1", "Bash", { command: "make" })]),
      {
        type: "queue-operation",
        operation: "enqueue",
        timestamp: "2026-05-01T10:00:02.500Z",
        sessionId: SID,
        content: "and run the tests",
      },
      result("r1", "a1", "toolu_1", "ok", false),
      {
        ...base("q1", "r1"),
        type: "attachment",
        attachment: {
          type: "queued_command",
          prompt: "and run the tests",
          commandMode: "prompt",
          origin: { kind: "human" },
        },
      },
      {
        ...base("q2", "q1"),
        type: "attachment",
        attachment: {
          type: "queued_command",
          prompt: notice,
          commandMode: "task-notification",
          origin: { kind: "task-notification", producer: "session-task" },
        },
      },
      assistant("a2", "q2", "msg_2", [{ type: "text", text: "Tests pass." }]),
    ]);
    const users = s.messages.filter((m) => m.role === "user");
    expect(users.map((m) => [m.id, m.parts[0]?.content, m.synthetic])).toEqual([
      ["u1", "fix the build", undefined],
      ["q1", "and run the tests", undefined],
      ["q2", notice, "task-notification"],
    ]);
    expect(ofType(s.events, "turn.started").map((e) => e.turnId)).toEqual(["u1", "q1"]);
    expect(s.meta.turnCount).toBe(2);
    expect(s.meta.title).toBe("fix the build");
    // The later response belongs to the queued prompt's turn.
    expect(ofType(s.events, "model.response").map((e) => e.turnId)).toEqual(["u1", "q1"]);
    expect(s.summary.entries.skipped["attachment/queued_command"]).toBeUndefined();
  });

  test("regression: toolDenialKind user-rejected is the user's no; interrupted and cancelled are no refusal (both were permission denials)", async () => {
    const said = (uuid: string, parent: string, callId: string, text: string, kind: string) => ({
      ...result(uuid, parent, callId, text, true),
      toolUseResult: text,
      toolDenialKind: kind,
    });
    const s = await importLines([
      prompt("u1", null, "clean up"),
      assistant("a1", "u1", "msg_1", [toolUse("toolu_1", "Bash", { command: "rm -rf build" })]),
      said(
        "r1",
        "a1",
        "toolu_1",
        "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file). STOP what you are doing and wait for the user to tell you how to proceed.",
        "user-rejected",
      ),
      prompt("u2", "r1", "build then"),
      assistant("a2", "u2", "msg_2", [toolUse("toolu_2", "Bash", { command: "make" })]),
      said("r2", "a2", "toolu_2", "[Request interrupted by user for tool use]", "interrupted"),
      assistant("a3", "r2", "msg_3", [toolUse("toolu_3", "Bash", { command: "make test" })]),
      said("r3", "a3", "toolu_3", "Permission to use Bash has been denied.", "permission-rule"),
    ]);
    expect(ofType(s.events, "function.denied").map((d) => [d.callId, d.source])).toEqual([
      ["toolu_1", "user"],
      ["toolu_3", "rule"],
    ]);
    expect(ofType(s.events, "function.output").map((o) => [o.callId, o.failed])).toEqual([["toolu_2", true]]);
  });

  test("regression: a `!` shell command and a task's notice in a user entry open no turn and title nothing", async () => {
    const s = await importLines([
      prompt("u0", null, "<bash-input>git status</bash-input>"),
      prompt("u1", "u0", "<bash-stdout>On branch main</bash-stdout><bash-stderr></bash-stderr>"),
      prompt("u2", "u1", "commit it"),
      assistant("a2", "u2", "msg_2", [{ type: "text", text: "Committed." }]),
      {
        ...prompt("u3", "a2", "<task-notification>\n<task-id>bg1</task-id>\n<status>completed</status>"),
        origin: { kind: "task-notification" },
        promptSource: "system",
      },
      assistant("a3", "u3", "msg_3", [{ type: "text", text: "The task finished." }]),
    ]);
    expect(s.messages.filter((m) => m.role === "user").map((m) => [m.id, m.synthetic])).toEqual([
      ["u0", "shell-command"],
      ["u1", "command-output"],
      ["u2", undefined],
      ["u3", "task-notification"],
    ]);
    expect(ofType(s.events, "turn.started").map((e) => e.turnId)).toEqual(["u2"]);
    expect([s.meta.turnCount, s.meta.title]).toEqual([1, "commit it"]);
  });

  test("a server tool's result in the same response pairs with its call (an error result is a failure)", async () => {
    const ok = [
      {
        type: "web_search_result",
        url: "https://bun.sh/docs",
        title: "Bun docs",
        encrypted_content: "x",
        page_age: null,
      },
    ];
    const s = await importLines([
      prompt("u1", null, "what is new in bun"),
      assistant(
        "a1",
        "u1",
        "msg_1",
        [{ type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: { query: "bun" } }],
        false,
      ),
      assistant(
        "a2",
        "a1",
        "msg_1",
        [{ type: "web_search_tool_result", tool_use_id: "srvtoolu_1", content: ok }],
        false,
      ),
      assistant(
        "a3",
        "a2",
        "msg_1",
        [{ type: "server_tool_use", id: "srvtoolu_2", name: "web_search", input: { query: "bun 2" } }],
        false,
      ),
      assistant(
        "a4",
        "a3",
        "msg_1",
        [
          {
            type: "web_search_tool_result",
            tool_use_id: "srvtoolu_2",
            content: { type: "web_search_tool_result_error", error_code: "max_uses_exceeded" },
          },
        ],
        false,
      ),
      assistant("a5", "a4", "msg_1", [{ type: "text", text: "Bun 2 is out." }]),
    ]);
    const outputs = ofType(s.events, "function.output");
    expect(outputs.map((o) => [o.callId, o.tool, o.failed])).toEqual([
      ["srvtoolu_1", "web_search", false],
      ["srvtoolu_2", "web_search", true],
    ]);
    const responses = ofType(s.events, "model.response");
    expect(responses.length).toBe(1);
    expect(responses[0]!.toolCalls).toEqual(["web_search", "web_search"]);
    const parts = s.messages.find((m) => m.role === "assistant")!.parts;
    expect(
      parts
        .filter((p) => p.type === "tool")
        .map((p) => [p.callId, p.failed === true, p.result !== undefined]),
    ).toEqual([
      ["srvtoolu_1", false, true],
      ["srvtoolu_2", true, true],
    ]);
  });

  test("a summary line titles the session only when its leaf entry is in the file", async () => {
    // Corpus: the only summary's leafUuid is in another session's file.
    const file = join(
      CORPUS,
      "claude",
      "d-kimuson_claude-code-viewer",
      "fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl",
    );
    await using home = await tempHome();
    const { sessions } = await imported(home.path, "claude", file);
    const main = sessions.find((x) => x.meta.source?.id === "fe5e1c67-53e7-4862-81ae-d0e013e3270b")!;
    expect(main.meta.title).toBe("/orchestrator create TODO app by Next.js");
    expect(main.meta.titleSource).toBe("prompt");
    // A summary whose leaf is here wins over the prompt, the first such one.
    const s = await importLines([
      { type: "summary", summary: "From elsewhere", leafUuid: "not-in-this-file" },
      { type: "summary", summary: "Build fixed", leafUuid: "a1" },
      { type: "summary", summary: "Later branch", leafUuid: "a2" },
      prompt("u1", null, "fix the build"),
      assistant("a1", "u1", "msg_1", [{ type: "text", text: "Fixed." }]),
      prompt("u2", "a1", "thanks"),
      assistant("a2", "u2", "msg_2", [{ type: "text", text: "Welcome." }]),
    ]);
    expect([s.meta.title, s.meta.titleSource]).toEqual(["Build fixed", "generated"]);
  });

  describe("entries a resumed session writes again", () => {
    // A compacted session: work, the boundary, the summary, more work.
    const session = [
      prompt("u1", null, "index the repo"),
      assistant("a1", "u1", "msg_1", [toolUse("toolu_1", "Bash", { command: "ls" })]),
      result("r1", "a1", "toolu_1", "src\ntest", false),
      assistant("a2", "r1", "msg_2", [{ type: "text", text: "Two folders." }]),
      {
        ...base("c1", null),
        type: "system",
        subtype: "compact_boundary",
        logicalParentUuid: "a2",
        compactMetadata: { trigger: "auto", preTokens: 150000 },
      },
      {
        ...prompt("s1", "c1", "This session is being continued from a previous conversation…"),
        isCompactSummary: true,
      },
      prompt("u2", "s1", "now the tests"),
      assistant("a3", "u2", "msg_3", [toolUse("toolu_3", "Bash", { command: "bun test" })]),
      result("r3", "a3", "toolu_3", "12 pass", false),
      assistant("a4", "r3", "msg_4", [{ type: "text", text: "All pass." }]),
    ] as Record<string, unknown>[];
    // Resumed: the post-compaction segment again, uuids and times kept, metadata moved on.
    const replay = session.slice(4).map((e) => ({ ...e, gitBranch: "feature", version: "2.1.91" }));
    const after = [
      prompt("u5", "a4", "and lint"),
      assistant("a5", "u5", "msg_5", [{ type: "text", text: "Clean." }]),
    ];
    const shape = (s: Awaited<ReturnType<typeof importLines>>) => ({
      events: s.events.map((e) => (e as { id: string }).id),
      messages: s.messages.map((m) => m.id),
      tokens: s.meta.tokens,
      turns: s.meta.turnCount,
    });

    test("an entry written again with its uuid is imported once, in one read and across two", async () => {
      const plain = await importLines([...session, ...after]);
      const resumed = await importLines([...session, ...replay, ...after]);
      expect(shape(resumed)).toEqual(shape(plain));
      expect(resumed.summary.entries.skipped["(replayed entry)"]).toBe(replay.length);
      expect(ofType(resumed.events, "model.response").length).toBe(5);
      expect(ofType(resumed.events, "compact.occurred").length).toBe(1);
      // Read in two passes, the replay arriving in the second: the store merges it by id.
      const grown = await importLines(session, [...replay, ...after]);
      expect(shape(grown)).toEqual(shape(plain));
    });

    test("a response written again under a new uuid counts once", async () => {
      const plain = await importLines([...session, ...after]);
      // The responses of the last turn again (their lines only), in the next turn.
      const copy = [session[7]!, session[9]!].map((e) => ({ ...e, uuid: `${e.uuid}-copy` }));
      const resumed = await importLines([...session, after[0], ...copy, after[1]]);
      const responses = ofType(resumed.events, "model.response");
      expect(responses.length).toBe(5);
      expect(resumed.meta.tokens).toEqual(plain.meta.tokens);
      expect(ofType(resumed.events, "function.call").map((e) => e.callId)).toEqual(["toolu_1", "toolu_3"]);
      expect(resumed.summary.entries.skipped["(replayed entry)"]).toBe(2);
    });
  });

  test("a message over the store's 8 MiB limit is left out and reported; the rest of the session imports", async () => {
    const huge = "x".repeat(9 * 1024 * 1024);
    const s = await importLines([
      prompt("u1", null, "dump the log"),
      assistant("a1", "u1", "msg_1", [toolUse("toolu_1", "Bash", { command: "cat big.log" })]),
      result("r1", "a1", "toolu_1", "ok", false),
      assistant("a2", "r1", "msg_2", [{ type: "text", text: huge }]),
      prompt("u2", "a2", "thanks"),
      assistant("a3", "u2", "msg_3", [{ type: "text", text: "Welcome." }]),
    ]);
    expect(s.messages.map((m) => m.id)).toEqual(["u1", "a1", "u2", "a3"]);
    expect(s.summary.warnings.map((w) => w.message)).toEqual([
      "message a2 not imported: message a2 is 9 MiB, over the 8 MiB limit",
    ]);
    expect(s.summary.entries.skipped["(invalid record)"]).toBe(1);
    expect(ofType(s.events, "model.response").length).toBe(3);
  });

  test("regression: an event nested too deep for the store is left out and reported; the session keeps its rollout log", async () => {
    // A tool's input 1,100 levels deep: its message and its `function.call` are over the store's
    // depth limit. The event was refused with the whole batch after the session was made (messages,
    // no rollout log, "not imported"), and every import after failed the same way.
    let deep: unknown = "leaf";
    for (let i = 0; i < 1100; i++) deep = { a: deep };
    const lines = [
      prompt("u1", null, "nest it"),
      assistant("a1", "u1", "msg_1", [toolUse("toolu_1", "Bash", { command: "ls", deep })]),
      result("r1", "a1", "toolu_1", "ok", false),
      assistant("a2", "r1", "msg_2", [{ type: "text", text: "Done." }]),
    ];
    const s = await importLines(lines);
    expect(s.summary.sessions).toEqual({ created: 1, updated: 0, unchanged: 0 });
    expect(s.summary.warnings.map((w) => w.message)).toEqual([
      "message a1 not imported: message a1 nests more than 1000 levels deep",
      `event claude-${SID}:function.call:toolu_1 not imported: invalid event: function.call nests more than 1000 levels deep`,
    ]);
    expect(ofType(s.events, "model.response").length).toBe(2);
    expect(ofType(s.events, "function.output").length).toBe(1);
  });

  test("regression: a transcript with no working directory anywhere is imported, its folder standing in", async () => {
    const noCwd = (e: Record<string, unknown>) => {
      const { cwd: _, ...rest } = e;
      return rest;
    };
    const s = await importLines([
      noCwd(prompt("u1", null, "hello")),
      noCwd(assistant("a1", "u1", "msg_1", [{ type: "text", text: "Hi." }])),
    ]);
    // The files store refused the session ("project path must not be empty"): nothing was kept.
    expect(s.messages.map((m) => m.id)).toEqual(["u1", "a1"]);
    expect(s.meta.projectPath.endsWith(join("projects", "-work-app"))).toBe(true);
    expect(s.summary.warnings.map((w) => w.message)).toEqual([
      expect.stringContaining("no working directory recorded: the transcript's folder stands in"),
    ]);
  });

  test("regression: a Task call whose description is not a text starts its subagent without one", async () => {
    const s = await importLines([
      prompt("u1", null, "explore"),
      assistant("a1", "u1", "msg_1", [
        toolUse("toolu_1", "Task", { description: {}, prompt: "look around" }),
      ]),
      { ...result("r1", "a1", "toolu_1", "found it", false), toolUseResult: { agentId: "a0f1" } },
      assistant("a2", "r1", "msg_2", [{ type: "text", text: "Done." }]),
    ]);
    // The start was refused by the catalogue ("Expected string but received Object (field task)").
    expect(s.summary.warnings).toEqual([]);
    const start = ofType(s.events, "subagent.start");
    expect(start.length).toBe(1);
    expect(start[0]!.task).toBeUndefined();
  });

  test("regression: a working directory holding a NUL byte: the transcript's folder stands in, the session is kept", async () => {
    const nul = (e: Record<string, unknown>) => ({ ...e, cwd: "/work/app\u0000" });
    const s = await importLines([
      nul(prompt("u1", null, "hello")),
      nul(assistant("a1", "u1", "msg_1", [{ type: "text", text: "Hi." }])),
    ]);
    // The store refused it ("project path must not contain NUL"): the session was not imported.
    expect(s.messages.map((m) => m.id)).toEqual(["u1", "a1"]);
    expect(s.meta.projectPath.endsWith(join("projects", "-work-app"))).toBe(true);
    expect(s.summary.warnings.map((w) => w.message)).toEqual([
      expect.stringContaining(
        'working directory "/work/app\\u0000" holds a NUL byte: the transcript\'s folder stands in',
      ),
    ]);
  });

  test("regression: a relative working directory is not a project: the transcript folder stands in", async () => {
    const relative = (e: Record<string, unknown>) => ({ ...e, cwd: "work/app" });
    const s = await importLines([
      relative(prompt("u1", null, "hello")),
      relative(assistant("a1", "u1", "msg_1", [{ type: "text", text: "Hi." }])),
    ]);
    expect(s.meta.projectPath.endsWith(join("projects", "-work-app"))).toBe(true);
    expect(s.summary.warnings.map((w) => w.message)).toEqual([
      expect.stringContaining('working directory "work/app" is not an absolute path'),
    ]);
  });
});

test.each([
  ["no message", { type: "assistant" }],
  ["a text for a message", { type: "assistant", message: "oops" }],
  [
    "an id that is a number",
    { type: "assistant", uuid: "u-y", message: { id: 42, content: [{ type: "text", text: "x" }] } },
  ],
  [
    "content that is an object",
    { type: "assistant", uuid: "u-z", message: { id: "msg_z", content: { text: "x" } } },
  ],
  ["an API error whose error is a number", { type: "system", uuid: "u3", subtype: "api_error", error: 5 }],
])(
  "an entry of another shape in the middle of a streamed response is reported, and the response keeps its calls: %s",
  async (_name, bad) => {
    // coverage-test-fix's lines 11 and 12 are the two tool_use blocks of the response whose text is
    // line 10: taken for a response of its own, the bad line closed it and both calls were lost.
    const src = join(CORPUS, "claude", "drmaciver_claude-reliability", "coverage-test-fix.transcript.jsonl");
    const lines = readFileSync(src, "utf8").split("\n").filter(Boolean);
    const name = "c64cc478-3430-40fe-8e9c-4ee9986e9754.jsonl";
    await using dir = await tempDir();
    const file = (d: string, content: string[]) => {
      mkdirSync(join(dir.path, d), { recursive: true });
      writeFileSync(join(dir.path, d, name), `${content.join("\n")}\n`);
      return join(dir.path, d, name);
    };
    await using cleanHome = await tempHome();
    await using badHome = await tempHome();
    const clean = await imported(cleanHome.path, "claude", file("clean", lines));
    const bent = await imported(
      badHome.path,
      "claude",
      file("bent", [...lines.slice(0, 10), JSON.stringify(bad), ...lines.slice(10)]),
    );
    const [want, got] = [clean.sessions[0]!, bent.sessions[0]!];
    expect(got.events).toEqual(want.events);
    expect(got.messages).toEqual(want.messages);
    expect(ofType(got.events, "function.call").length).toBe(13);
    expect(bent.summary.entries.skipped["(unreadable entry)"]).toBe(1);
    expect(bent.summary.warnings).toContainEqual(
      expect.objectContaining({ line: 11, message: expect.stringContaining("not imported") }),
    );
  },
);

/**
 * The log's events `keep` takes, as `type id`: calls, outputs and refusals by call id, responses by
 * id, hooks by name.
 */
const eventLines = (events: unknown[], keep: (type: string) => boolean) =>
  (events as Record<string, unknown>[])
    .filter((e) => keep(String(e.type)))
    .map((e) => `${e.type} ${e.callId ?? e.responseId ?? e.hookName ?? ""}`.trim());

/** The log's times never go back. */
function expectTimeOrder(events: unknown[]): void {
  const times = (events as { timestamp: number }[]).map((e) => e.timestamp);
  expect(times).toEqual(times.toSorted((a, b) => a - b));
}

describe("claude: a response's end before what came after its last line", () => {
  const shape = (events: unknown[]) =>
    eventLines(events, (type) => type !== "session.started" && type !== "turn.started");

  test("regression: results and hooks after a response's last line go in after its model.response, its calls before it", async () => {
    // Two parallel calls, their results and a PostToolUse hook, then the next response. The
    // model.response was written when the next response began, after the outputs that came
    // after its last line, and earlier than them (245 of the corpus's responses).
    const hook = () => ({
      ...base("h1", "r2"),
      type: "attachment",
      attachment: {
        type: "hook_success",
        hookName: "PostToolUse:Read",
        hookEvent: "PostToolUse",
        command: "lint",
      },
    });
    const { events } = await importLines([
      prompt("u1", null, "read both"),
      assistant("a1", "u1", "msg_1", [toolUse("toolu_1", "Read", { file_path: "a" })]),
      assistant("a2", "a1", "msg_1", [toolUse("toolu_2", "Read", { file_path: "b" })]),
      result("r1", "a2", "toolu_1", "a's text", false),
      result("r2", "r1", "toolu_2", "b's text", false),
      hook(),
      assistant("a3", "h1", "msg_2", [{ type: "text", text: "Both read." }]),
    ]);
    expect(shape(events)).toEqual([
      "model.request",
      "function.call toolu_1",
      "function.call toolu_2",
      "model.response msg_1",
      "function.output toolu_1",
      "function.output toolu_2",
      "hook.triggered PostToolUse:Read",
      "model.request",
      "model.response msg_2",
    ]);
    expectTimeOrder(events);
  });

  test("a result between two blocks of one response goes in before the response goes on", async () => {
    const { events } = await importLines([
      prompt("u1", null, "read, then write"),
      assistant("a1", "u1", "msg_1", [toolUse("toolu_1", "Read", { file_path: "a" })]),
      result("r1", "a1", "toolu_1", "a's text", false),
      assistant("a2", "r1", "msg_1", [toolUse("toolu_2", "Write", { file_path: "b" })]),
      result("r2", "a2", "toolu_2", "written", false),
      prompt("u2", "r2", "thanks"),
    ]);
    expect(shape(events)).toEqual([
      "model.request",
      "function.call toolu_1",
      "function.output toolu_1",
      "function.call toolu_2",
      "model.response msg_1",
      "function.output toolu_2",
    ]);
  });

  test("a refusal after a response's last line is no call: its denial comes after the response", async () => {
    const { events } = await importLines([
      prompt("u1", null, "push"),
      assistant("a1", "u1", "msg_1", [toolUse("toolu_1", "Bash", { command: "git push" })]),
      result(
        "r1",
        "a1",
        "toolu_1",
        "The user doesn't want to proceed with this tool use. The tool use was rejected.",
        true,
      ),
      prompt("u2", "r1", "no pushing"),
    ]);
    expect(shape(events)).toEqual(["model.request", "model.response msg_1", "function.denied toolu_1"]);
  });

  test("the corpus: no model.response is logged earlier than what comes before it", async () => {
    await using home = await tempHome();
    const { sessions } = await imported(home.path, "claude", join(CORPUS, "claude"));
    let responses = 0;
    for (const s of sessions) {
      let latest = 0;
      for (const e of s.events as { type: string; timestamp: number; id: string }[]) {
        if (e.type === "model.response") {
          responses++;
          expect([s.meta.id, e.id, e.timestamp >= latest]).toEqual([s.meta.id, e.id, true]);
        }
        latest = Math.max(latest, e.timestamp);
      }
    }
    expect(responses).toBeGreaterThan(250);
  });
});

test("regression: a refusal held beside a result that ran gives the refused call no function.call (held-results review 2)", async () => {
  const { events } = await importLines([
    prompt("u1", null, "push, then read"),
    assistant("a1", "u1", "msg_1", [toolUse("toolu_1", "Bash", { command: "git push" })]),
    assistant("a2", "a1", "msg_1", [toolUse("toolu_2", "Read", { file_path: "b" })]),
    result(
      "r1",
      "a2",
      "toolu_1",
      "The user doesn't want to proceed with this tool use. The tool use was rejected.",
      true,
    ),
    result("r2", "r1", "toolu_2", "b's text", false),
    prompt("u2", "r2", "ok"),
  ]);
  const shape = eventLines(events, (type) => type.startsWith("function.") || type.startsWith("model."));
  expect(shape).toEqual([
    "model.request",
    "function.call toolu_2",
    "model.response msg_1",
    "function.denied toolu_1",
    "function.output toolu_2",
  ]);
});

describe("claude: a PreToolUse hook after the call it ran for", () => {
  const preToolUse = (uuid: string, parent: string, callId: string) => ({
    ...base(uuid, parent),
    type: "attachment",
    attachment: {
      type: "hook_success",
      hookName: "PreToolUse:Bash",
      toolUseID: callId,
      hookEvent: "PreToolUse",
      command: "guard.sh",
    },
  });
  const shape = (events: unknown[]) =>
    eventLines(events, (type) => type.startsWith("function.") || type === "hook.triggered");

  test("regression: the hook goes in after the call's function.call, not before it (14 corpus calls were after their hook)", async () => {
    // The call is written with its output (or its response's end); the hook, read in between, went
    // in first.
    const { events } = await importLines([
      prompt("u1", null, "run it"),
      assistant("a1", "u1", "msg_1", [toolUse("toolu_1", "Bash", { command: "make" })]),
      preToolUse("h1", "a1", "toolu_1"),
      assistant("a2", "h1", "msg_1", [toolUse("toolu_2", "Bash", { command: "make test" })]),
      preToolUse("h2", "a2", "toolu_2"),
      result("r1", "h2", "toolu_1", "built", false),
      result("r2", "r1", "toolu_2", "passed", false),
      prompt("u2", "r2", "thanks"),
    ]);
    expect(shape(events)).toEqual([
      "function.call toolu_1",
      "hook.triggered PreToolUse:Bash",
      "function.call toolu_2",
      "hook.triggered PreToolUse:Bash",
      "function.output toolu_1",
      "function.output toolu_2",
    ]);
    expectTimeOrder(events);
  });

  test("a refused call's hook goes in before its denial, and the call has no function.call", async () => {
    const { events } = await importLines([
      prompt("u1", null, "push"),
      assistant("a1", "u1", "msg_1", [toolUse("toolu_1", "Bash", { command: "git push" })]),
      preToolUse("h1", "a1", "toolu_1"),
      result(
        "r1",
        "h1",
        "toolu_1",
        "The user doesn't want to proceed with this tool use. The tool use was rejected.",
        true,
      ),
      prompt("u2", "r1", "no"),
    ]);
    expect(shape(events)).toEqual(["hook.triggered PreToolUse:Bash", "function.denied toolu_1"]);
  });
});

test("what a response's end lets out goes in by time: a hook Claude Code wrote after a result but ran before it comes first", async () => {
  const call = assistant("a1", "u1", "msg_1", [toolUse("toolu_1", "Bash", { command: "make" })]);
  const hook = {
    ...base("h1", "a1"),
    type: "attachment",
    attachment: {
      type: "hook_success",
      hookName: "PostToolUse:Bash",
      hookEvent: "PostToolUse",
      command: "lint",
    },
  };
  const output = result("r1", "a1", "toolu_1", "built", false);
  // Written out of time order, as Claude Code does: the result's line first, the hook's after it.
  const { events } = await importLines([
    prompt("u1", null, "build"),
    call,
    output,
    hook,
    prompt("u2", "h1", "ok"),
  ]);
  const shape = (events as Record<string, unknown>[])
    .filter((e) => String(e.type).startsWith("function.") || e.type === "hook.triggered")
    .map((e) => e.type);
  expect(shape).toEqual(["function.call", "hook.triggered", "function.output"]);
});
