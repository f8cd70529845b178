/**
 * Gemini CLI conformance: the recording in corpus/gemini imports with the token totals, tool calls
 * and errors of a count over its raw JSON; `$rewindTo` and torn lines of the JSONL form are handled.
 */
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { mapGemini } from "../../src/import/gemini.ts";
import { newCounts } from "../../src/import/types.ts";
import { CORPUS, tempDir, tempHome } from "../_helpers.ts";
import { checkEval, checkTraces, importOne, sessionsFrom, tallyRollouts, zero } from "./_corpus.ts";
import { imported } from "./_store.ts";

const files = [...new Bun.Glob("*.json").scanSync(join(CORPUS, "gemini"))].sort();

describe("gemini corpus conformance", () => {
  for (const rel of files) {
    test(rel, async () => {
      await using home = await tempHome();
      const path = join(CORPUS, "gemini", rel);
      const { adapter } = await importOne(home.path, "gemini", path);
      const ids = await sessionsFrom(adapter, path);
      expect(ids.length).toBe(1);
      const doc = await Bun.file(path).json();
      const raw = zero();
      for (const m of doc.messages) {
        raw.tokens += m.tokens?.total ?? 0;
        if (m.type === "error") raw.modelErrors++;
        for (const c of m.toolCalls ?? []) {
          raw.toolCalls++;
          if (c.status === "error") raw.toolErrors++;
          if (c.status === "cancelled") raw.denied++;
        }
      }
      const got = await tallyRollouts(adapter, ids);
      expect(got).toEqual(raw);
      expect((await adapter.getMeta(ids[0]!))?.messageCount).toBe(doc.messages.length);
      await checkTraces(adapter, ids, got);
      await checkEval(adapter, home.path, 1);
      await adapter.close();
    });
  }

  test("JSONL recording: $set, $rewindTo, tool calls, a torn last line", async () => {
    await using dir = await tempDir();
    const path = join(dir.path, "session-2026-05-01T10-00-abcd1234.jsonl");
    const lines = [
      {
        sessionId: "abcd1234-0000",
        projectHash: "x",
        startTime: "2026-05-01T10:00:00.000Z",
        directories: ["/work/p"],
      },
      { id: "u1", timestamp: "2026-05-01T10:00:01.000Z", type: "user", content: [{ text: "first try" }] },
      { $rewindTo: "u1" },
      { id: "u2", timestamp: "2026-05-01T10:00:02.000Z", type: "user", content: [{ text: "list files" }] },
      {
        id: "g1",
        timestamp: "2026-05-01T10:00:03.000Z",
        type: "gemini",
        content: [{ text: "ok" }],
        model: "gemini-2.5-pro",
        tokens: { input: 100, output: 10, cached: 40, thoughts: 5, tool: 2, total: 117 },
        toolCalls: [
          {
            id: "c1",
            name: "run_shell_command",
            args: { command: "ls" },
            status: "success",
            result: [],
            timestamp: "2026-05-01T10:00:03.500Z",
          },
          {
            id: "c2",
            name: "write_file",
            args: { file_path: "a" },
            status: "cancelled",
            timestamp: "2026-05-01T10:00:04.000Z",
          },
          {
            id: "c3",
            name: "read_file",
            args: { file_path: "b" },
            status: "error",
            timestamp: "2026-05-01T10:00:04.500Z",
          },
        ],
      },
      { $set: { summary: "Listing files" } },
    ];
    writeFileSync(path, `${lines.map((l) => JSON.stringify(l)).join("\n")}\n{"id":"torn`);
    const counts = newCounts();
    const warnings: { file: string; message: string }[] = [];
    const s = mapGemini(path, await Bun.file(path).text(), { counts, warnings })!;
    expect(warnings).toEqual([]);
    expect(s.meta.title).toBe("Listing files");
    expect(s.meta.projectPath).toBe("/work/p");
    expect(s.messages.map((m) => m.id)).toEqual(["u2", "g1"]);
    const types = s.events.map((e) => e.type);
    expect(types.filter((t) => t === "function.denied")).toHaveLength(1);
    expect(s.events.filter((e) => e.type === "function.output" && e.failed)).toHaveLength(1);
    expect(s.tokens.input + s.tokens.output + s.tokens.cacheRead).toBe(117);
  });
});

/** A JSONL recording of `records` at `path`. */
const writeRecords = (path: string, records: unknown[]) =>
  writeFileSync(path, `${records.map((r) => JSON.stringify(r)).join("\n")}\n`);

test("regression: what a rewind dropped stays in the log and in the session's turns and tokens, whether the recording was imported before the rewind or after (usage, trace, search and eval depended on when)", async () => {
  await using dir = await tempDir();
  const path = join(dir.path, "session-2026-05-01T10-00-rw000001.jsonl");
  const at = (s: number) => `2026-05-01T10:00:${String(s).padStart(2, "0")}.000Z`;
  const tok = (input: number) => ({ input, output: 10, cached: 0, thoughts: 0, tool: 0, total: input + 10 });
  const records = [
    { sessionId: "rw000001", projectHash: "x", startTime: at(0), directories: ["/work/p"] },
    { id: "u1", timestamp: at(1), type: "user", content: [{ text: "first" }] },
    { id: "g1", timestamp: at(2), type: "gemini", content: "one", model: "gemini-2.5-pro", tokens: tok(100) },
    { id: "u2", timestamp: at(3), type: "user", content: [{ text: "second" }] },
    {
      id: "g2",
      timestamp: at(4),
      type: "gemini",
      content: "running",
      model: "gemini-2.5-pro",
      tokens: tok(200),
      toolCalls: [
        {
          id: "c1",
          name: "run_shell_command",
          args: { command: "rm -rf out" },
          status: "success",
          timestamp: at(5),
        },
      ],
    },
    { $rewindTo: "u2" },
    { id: "u3", timestamp: at(7), type: "user", content: [{ text: "other" }] },
    {
      id: "g4",
      timestamp: at(8),
      type: "gemini",
      content: "four",
      model: "gemini-2.5-pro",
      tokens: tok(400),
    },
  ];
  const write = (n: number) => writeRecords(path, records.slice(0, n));
  await using grownHome = await tempHome();
  for (const n of [3, 5, 6, records.length]) {
    write(n);
    await imported(grownHome.path, "gemini", path);
  }
  const grown = (await imported(grownHome.path, "gemini", path)).sessions[0]!;
  await using onceHome = await tempHome();
  const once = (await imported(onceHome.path, "gemini", path)).sessions[0]!;
  expect(grown.events).toEqual(once.events);
  expect(grown.messages).toEqual(once.messages);
  expect(once.messages.map((m) => m.id)).toEqual(["u1", "g1", "u3", "g4"]);
  const { updatedAt: _a, ...g } = grown.meta;
  const { updatedAt: _b, ...o } = once.meta;
  expect(g).toEqual(o);
  // The rewound turn ran a tool and cost tokens: the log has them, and the counters agree with it.
  const events = once.events as { type: string; callId?: string }[];
  expect(events.filter((e) => e.type === "function.call").map((e) => e.callId)).toEqual(["c1"]);
  expect(events.filter((e) => e.type === "turn.started")).toHaveLength(3);
  expect([once.meta.turnCount, once.meta.messageCount, once.meta.tokens?.input]).toEqual([3, 4, 700]);
});

test("regression: a recording whose every message a rewind took back is a session, with its events, however it was imported", async () => {
  await using dir = await tempDir();
  const path = join(dir.path, "session-2026-05-01T10-00-rw000002.jsonl");
  const at = (s: number) => `2026-05-01T10:00:${String(s).padStart(2, "0")}.000Z`;
  const records = [
    { sessionId: "rw000002", projectHash: "x", startTime: at(0), directories: ["/work/p"] },
    { id: "u1", timestamp: at(1), type: "user", content: [{ text: "list files" }] },
    { id: "g1", timestamp: at(2), type: "gemini", content: "done", model: "gemini-2.5-pro" },
    { $rewindTo: "u1" },
  ];
  const write = (n: number) => writeRecords(path, records.slice(0, n));
  write(records.length);
  await using onceHome = await tempHome();
  const once = await imported(onceHome.path, "gemini", path);
  // Its events went into a log no session named ("0 created", `session list` empty).
  expect(once.summary.sessions).toEqual({ created: 1, updated: 0, unchanged: 0 });
  expect(once.sessions.map((s) => [s.messages.length, s.events.length > 0])).toEqual([[0, true]]);
  await using grownHome = await tempHome();
  write(3);
  await imported(grownHome.path, "gemini", path);
  write(records.length);
  const grown = (await imported(grownHome.path, "gemini", path)).sessions[0]!;
  expect(grown.events).toEqual(once.sessions[0]!.events);
  expect(grown.messages).toEqual([]);
});
