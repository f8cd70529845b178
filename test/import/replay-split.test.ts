/**
 * A resumed Claude Code session writes earlier entries again (same uuids). When one import stops
 * within that copy and the next one reads the rest (a plain import after the file grew), the rest
 * is still a replay: what tells it (the uuids read, the responses closed) is saved with the import
 * state. Before, the second read took a replayed line for a new entry: a message twice, its usage
 * counted again (review: 11 messages for 10, 1,475 output tokens for 1,298).
 */
import { expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CORPUS, tempDir } from "../_helpers.ts";
import { imported, metasAlike } from "./_store.ts";

const SOURCE = join(
  CORPUS,
  "claude/laf-us_idaho-vault/c--Users-loganf-Documents-IDAHO-VAULT/41a308c7-b1e0-4819-ab03-4f553a17c6e0.jsonl",
);

test("a replay cut by an import at any line: the next import gives the one-read result", async () => {
  const lines = readFileSync(SOURCE, "utf8").trimEnd().split("\n");
  // Lines 5-20 written again after line 22, as a resume does (uuids kept, other metadata changed).
  const again = lines.slice(4, 20).map((l) => JSON.stringify({ ...JSON.parse(l), gitBranch: "resumed" }));
  const all = [...lines.slice(0, 22), ...again, ...lines.slice(22)];
  await using dir = await tempDir();
  const file = join(dir.path, "41a308c7-b1e0-4819-ab03-4f553a17c6e0.jsonl");
  writeFileSync(file, `${all.join("\n")}\n`);
  const once = await imported(join(dir.path, "once"), "claude", file);
  for (let cut = 22; cut <= 22 + again.length; cut++) {
    const home = join(dir.path, `cut-${cut}`);
    writeFileSync(file, `${all.slice(0, cut).join("\n")}\n`);
    await imported(home, "claude", file);
    writeFileSync(file, `${all.join("\n")}\n`);
    const twice = await imported(home, "claude", file);
    expect([cut, twice.sessions.map((s) => s.messages.length)]).toEqual([
      cut,
      once.sessions.map((s) => s.messages.length),
    ]);
    for (let i = 0; i < once.sessions.length; i++) {
      const [a, b] = [twice.sessions[i]!, once.sessions[i]!];
      expect([cut, a.messages]).toEqual([cut, b.messages]);
      const [got, want] = metasAlike(a.meta, b.meta);
      expect([cut, got]).toEqual([cut, want]);
    }
  }
}, 60_000);

test("a summary line written after its leaf titles the session, in the same read or a later one", async () => {
  await using dir = await tempDir();
  const file = join(dir.path, "5a5a5a5a-1111-4222-8333-444455556666.jsonl");
  const base = {
    sessionId: "5a5a5a5a-1111-4222-8333-444455556666",
    cwd: "/p",
    timestamp: "2026-01-01T00:00:00.000Z",
  };
  const prompt = JSON.stringify({
    ...base,
    type: "user",
    uuid: "u1",
    message: { role: "user", content: "fix the flaky test" },
  });
  const summary = JSON.stringify({ type: "summary", summary: "Flaky test fixed", leafUuid: "u1" });
  writeFileSync(file, `${prompt}\n${summary}\n`);
  const same = await imported(join(dir.path, "same"), "claude", file);
  expect(same.sessions[0]!.meta.title).toBe("Flaky test fixed");
  const later = join(dir.path, "later");
  writeFileSync(file, `${prompt}\n`);
  expect((await imported(later, "claude", file)).sessions[0]!.meta.title).toBe("fix the flaky test");
  writeFileSync(file, `${prompt}\n${summary}\n`);
  expect((await imported(later, "claude", file)).sessions[0]!.meta.title).toBe("Flaky test fixed");
});
