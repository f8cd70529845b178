/**
 * A long JSONL transcript is written in parts as it is read (what can no longer change, every few
 * MiB), so memory follows the open part of a session, not the file. Given every Claude and Codex
 * source of the real corpus, when it is imported with a write before every line (the smallest
 * parts there can be) and, into another store, all at once, then both stores hold the same
 * sessions: the same meta, messages and events, in the same order, with the same summary counts.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { importSources } from "../../src/import/import.ts";
import type { Agent } from "../../src/import/types.ts";
import { openStore } from "../../src/storage/select.ts";
import { CORPUS, tempHome } from "../_helpers.ts";

/** Everything a store holds after importing `path`, sessions sorted by id. */
async function imported(home: string, agent: Agent, path: string, writeEveryBytes?: number) {
  const { adapter } = await openStore("files", { home, fsync: "never" });
  try {
    const report = await importSources({
      agent,
      paths: [path],
      adapter,
      home,
      fsync: false,
      writeEveryBytes,
    });
    const { items } = await adapter.listSessions({ all: true });
    const sessions = [];
    for (const meta of items.sort((a, b) => a.id.localeCompare(b.id))) {
      const events = [];
      for await (const r of adapter.readEvents(meta.id)) events.push(r.event ?? r.issue);
      sessions.push({ meta, messages: (await adapter.readMessages(meta.id)).messages, events });
    }
    const { path: _, ...summary } = report.sources[0]!;
    return { sessions, summary };
  } finally {
    await adapter.close();
  }
}

const sources: [Agent, string][] = [
  ...readdirSync(join(CORPUS, "claude"))
    .filter((d) => !d.endsWith(".md"))
    .map((d): [Agent, string] => ["claude", join(CORPUS, "claude", d)]),
  ...readdirSync(join(CORPUS, "codex"))
    .filter((f) => f.endsWith(".jsonl"))
    .map((f): [Agent, string] => ["codex", join(CORPUS, "codex", f)]),
];

describe("import in parts", () => {
  test("the corpus has JSONL sources of both agents", () => {
    expect(sources.filter(([a]) => a === "claude").length).toBeGreaterThanOrEqual(4);
    expect(sources.filter(([a]) => a === "codex").length).toBeGreaterThanOrEqual(3);
  });

  for (const [agent, path] of sources) {
    test(`${agent} ${path.slice(CORPUS.length + 1)}: written line by line = written at once`, async () => {
      await using once = await tempHome();
      await using parts = await tempHome();
      const whole = await imported(once.path, agent, path);
      const split = await imported(parts.path, agent, path, 1);
      expect(whole.sessions.length).toBeGreaterThan(0);
      expect(split.summary).toEqual(whole.summary);
      expect(split.sessions.map((s) => s.meta.id)).toEqual(whole.sessions.map((s) => s.meta.id));
      for (let i = 0; i < whole.sessions.length; i++) {
        const [a, b] = [split.sessions[i]!, whole.sessions[i]!];
        expect(a.messages).toEqual(b.messages);
        expect(a.events).toEqual(b.events);
        expect(a.meta).toEqual(b.meta);
      }
    });
  }
});
