/**
 * An import without `--watch` that runs while the agent is still writing a response (`live.ts`):
 * the response stays open, and the next import completes it. Closed at the cut, Claude Code's next
 * block (a tool call) was taken for a replay and lost, its result left without a call; Codex's next
 * item became a second response. A response whose last line is older than the wait is closed.
 */
import { describe, expect, test } from "bun:test";
import { appendFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { STREAM_WAIT_MS } from "../../src/import/live.ts";
import type { Agent } from "../../src/import/types.ts";
import { tempDir, tempHome } from "../_helpers.ts";
import { imported } from "./_store.ts";

type Imported = Awaited<ReturnType<typeof imported>>;

/** What a test checks of the one session imported: its messages' parts, its events, the summary. */
function view(r: Imported) {
  const [s] = r.sessions;
  const events = (s?.events ?? []) as { type: string; [k: string]: unknown }[];
  return {
    parts: (s?.messages ?? []).map((m) => [m.role, ...m.parts.map((p) => p.type)]),
    calls: events.filter((e) => e.type === "function.call").map((e) => e.callId),
    outputs: events.filter((e) => e.type === "function.output").map((e) => e.callId),
    responses: events
      .filter((e) => e.type === "model.response")
      .map((e) => [e.inputTokens ?? null, e.outputTokens ?? null, e.toolCalls]),
    skipped: r.summary.entries.skipped,
    read: r.summary.files.read,
  };
}

const SID = "5b0c7d1e-0f00-4aaa-9bbb-000000000001";

/** A Claude Code session: a prompt, a response in two lines (text, then a tool call), its result. */
function claudeLines(t0: number): string[] {
  const at = (s: number) => new Date(t0 + s * 1000).toISOString();
  const base = { sessionId: SID, cwd: "/w/app", version: "2.1.0", userType: "external", isSidechain: false };
  const block = (uuid: string, parent: string, s: number, content: object, output: number) => ({
    ...base,
    type: "assistant",
    uuid,
    parentUuid: parent,
    timestamp: at(s),
    requestId: "req_1",
    message: {
      id: "msg_1",
      role: "assistant",
      model: "claude-x",
      content: [content],
      usage: { input_tokens: 10, output_tokens: output },
    },
  });
  return [
    {
      ...base,
      type: "user",
      uuid: "u1",
      parentUuid: null,
      timestamp: at(0),
      message: { role: "user", content: "list the files" },
    },
    block("a1", "u1", 1, { type: "text", text: "Let me look." }, 5),
    block("a2", "a1", 2, { type: "tool_use", id: "toolu_1", name: "Bash", input: { command: "ls" } }, 20),
    {
      ...base,
      type: "user",
      uuid: "u2",
      parentUuid: "a2",
      timestamp: at(3),
      message: {
        role: "user",
        content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "a.ts b.ts" }],
      },
    },
  ].map((e) => `${JSON.stringify(e)}\n`);
}

const THREAD = "019b64e5-57fa-7463-b644-0000000000c1";

/** A Codex rollout: a prompt, a response in two items (text, then a call), its output, its usage. */
function codexLines(t0: number): string[] {
  const line = (s: number, type: string, payload: object) =>
    `${JSON.stringify({ timestamp: new Date(t0 + s * 1000).toISOString(), type, payload })}\n`;
  return [
    line(0, "session_meta", {
      id: THREAD,
      timestamp: new Date(t0).toISOString(),
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

const cases: { agent: Agent; file: string; lines: (t0: number) => string[]; cut: number }[] = [
  { agent: "claude", file: `${SID}.jsonl`, lines: claudeLines, cut: 2 },
  { agent: "codex", file: `rollout-2026-01-01T00-00-00-${THREAD}.jsonl`, lines: codexLines, cut: 4 },
];

describe("an import that cuts a response the agent is still writing", () => {
  for (const { agent, file, lines, cut } of cases) {
    test(`${agent}: the response stays open and the next import completes it`, async () => {
      await using dir = await tempDir();
      await using home = await tempHome();
      const path = join(dir.path, file);
      const all = lines(Date.now() - 10_000);
      writeFileSync(path, all.slice(0, cut).join(""));
      const first = view(await imported(home.path, agent, path));
      expect(first.responses).toEqual([]); // open: not written yet
      appendFileSync(path, all.slice(cut).join(""));
      const grown = view(await imported(home.path, agent, path));
      // One response, one message with both of its parts, the call paired with its output.
      expect(grown.parts).toEqual([
        ["user", "text"],
        ["assistant", "text", "tool"],
      ]);
      expect(grown.skipped).toEqual({});
      expect(grown.calls).toHaveLength(1);
      expect(grown.outputs).toEqual(grown.calls);
      if (agent === "claude") {
        // Claude Code's response may go on: it is still open, and the file is read again.
        expect(grown.responses).toEqual([]);
        expect(view(await imported(home.path, agent, path)).read).toBe(1);
      } else {
        // Codex's usage closed it: settled, the next import finds the file unchanged.
        expect(grown.responses).toEqual([[10, 20, ["shell"]]]);
        expect(view(await imported(home.path, agent, path)).read).toBe(0);
      }
    });

    test(`${agent}: a response whose last line is older than the wait is closed, even in an unchanged file`, async () => {
      await using dir = await tempDir();
      await using home = await tempHome();
      const path = join(dir.path, file);
      // Cut so that the open response's last line (at +2 s) is 3 s short of the wait.
      const t0 = Date.now() - STREAM_WAIT_MS + 1000;
      writeFileSync(
        path,
        lines(t0)
          .slice(0, cut + 1)
          .join(""),
      );
      expect(view(await imported(home.path, agent, path)).responses).toEqual([]);
      await Bun.sleep(Math.max(0, t0 + 2000 + STREAM_WAIT_MS - Date.now()) + 50);
      const closed = view(await imported(home.path, agent, path));
      expect(closed.read).toBe(1);
      expect(closed.responses).toEqual(agent === "claude" ? [[10, 20, ["Bash"]]] : [[null, null, ["shell"]]]);
      expect(view(await imported(home.path, agent, path)).read).toBe(0);
    });
  }
});
