/**
 * A session compacted after its import, imported again: the messages its compaction dropped are not
 * new. A whole document (OpenCode, Gemini) derives every message each time, and a transcript read
 * again from its start (its import state lost) does too; they were appended after the kept ones.
 */
import { expect, test } from "bun:test";
import { copyFileSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { importSources } from "../../src/import/import.ts";
import type { Agent } from "../../src/import/types.ts";
import { compactSession } from "../../src/session/compaction.ts";
import { openStore } from "../../src/storage/select.ts";
import { CORPUS, tempDir, tempHome } from "../_helpers.ts";

async function importOnce(home: string, agent: Agent, path: string, id: string) {
  const { adapter } = await openStore("files", { home, fsync: "never" });
  try {
    await importSources({ agent, paths: [path], adapter, home, fsync: false });
    return { meta: (await adapter.getMeta(id))!, messages: (await adapter.readMessages(id)).messages };
  } finally {
    await adapter.close();
  }
}

async function compact(home: string, id: string) {
  const { adapter } = await openStore("files", { home, fsync: "never" });
  try {
    expect((await compactSession(adapter, id, { keepUserTurns: 1 })).compacted).toBe(true);
    return (await adapter.readMessages(id)).messages.map((m) => m.id);
  } finally {
    await adapter.close();
  }
}

test("regression: an OpenCode document imported again after a compaction adds nothing it dropped (they came back after the kept ones, tokens and turns twice)", async () => {
  await using home = await tempHome();
  await using dir = await tempDir();
  const file = join(dir.path, "s.json");
  const source = join(
    CORPUS,
    "opencode/richardaiand_aiand-portfolio-web/reconstructed_export/ses_12be9f828ffeaiYkWjPssYhKmB.json",
  );
  copyFileSync(source, file);
  const id = "opencode-ses_12be9f828ffeaiYkWjPssYhKmB";
  const first = await importOnce(home.path, "opencode", file, id);
  expect(first.meta.messageCount).toBe(68);
  const kept = await compact(home.path, id);
  // The session goes on in OpenCode: its document changes (a new title) and is read again whole.
  const doc = JSON.parse(readFileSync(file, "utf8"));
  doc.session_row.title = "Greeting 2";
  writeFileSync(file, JSON.stringify(doc));
  utimesSync(file, new Date(Date.now() - 600_000), new Date(Date.now() - 600_000));
  const again = await importOnce(home.path, "opencode", file, id);
  expect(again.meta.title).toBe("Greeting 2");
  expect(again.messages.map((m) => m.id)).toEqual(kept);
  expect(again.meta).toMatchObject({ messageCount: kept.length, turnCount: first.meta.turnCount });
  expect(again.meta.tokens).toEqual(first.meta.tokens);
  expect(again.meta.summary).toBeDefined();
});

test("regression: a Claude transcript read again from its start (its import state lost) after a compaction adds nothing it dropped, and its new tail still comes", async () => {
  await using home = await tempHome();
  await using dir = await tempDir();
  const source = join(
    CORPUS,
    "claude/laf-us_idaho-vault/c--Users-loganf-Documents-IDAHO-VAULT/41a308c7-b1e0-4819-ab03-4f553a17c6e0.jsonl",
  );
  const lines = readFileSync(source, "utf8").split("\n").filter(Boolean);
  const file = join(dir.path, "t.jsonl");
  // All but the last few lines (the second turn's end), then the rest later.
  const cut = lines.length - 4;
  writeFileSync(file, `${lines.slice(0, cut).join("\n")}\n`);
  const id = "claude-41a308c7-b1e0-4819-ab03-4f553a17c6e0";
  const first = await importOnce(home.path, "claude", file, id);
  const kept = await compact(home.path, id);
  rmSync(join(home.path, "state", "imports.json"), { force: true });
  rmSync(join(home.path, "state", "parsers"), { recursive: true, force: true });
  writeFileSync(file, `${lines.join("\n")}\n`);
  const again = await importOnce(home.path, "claude", file, id);
  const ids = again.messages.map((m) => m.id);
  expect(ids.slice(0, kept.length)).toEqual(kept);
  expect(ids.length).toBeGreaterThan(kept.length);
  expect(again.meta.turnCount).toBe(first.meta.turnCount);
});
