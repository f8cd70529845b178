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
