/**
 * A long JSONL transcript is written in parts as it is read (what can no longer change, every few
 * MiB), so memory follows the open part of a session, not the file. Given every Claude and Codex
 * source of the real corpus, when it is imported with a write before every line (the smallest
 * parts there can be) and, into another store, all at once, then both stores hold the same
 * sessions: the same meta, messages and events, in the same order, with the same summary counts.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { importSources } from "../../src/import/import.ts";
import type { Agent } from "../../src/import/types.ts";
import { openStore } from "../../src/storage/select.ts";
import { CORPUS, tempDir, tempHome } from "../_helpers.ts";
import { imported, metasAlike } from "./_store.ts";

type Store = Awaited<ReturnType<typeof imported>>;

/** The same sessions, with the same meta, messages and events in the same order. */
function expectSameSessions(got: Store, want: Store): void {
  expect(got.sessions.map((s) => s.meta.id)).toEqual(want.sessions.map((s) => s.meta.id));
  for (let i = 0; i < want.sessions.length; i++) {
    const [a, b] = [got.sessions[i]!, want.sessions[i]!];
    expect(a.messages).toEqual(b.messages);
    expect(a.events).toEqual(b.events);
    const [got2, want2] = metasAlike(a.meta, b.meta);
    expect(got2).toEqual(want2);
  }
}

const interruptedIds = (r: Store) =>
  r.sessions.flatMap((s) => s.messages.filter((m) => m.interrupted).map((m) => m.id));

/**
 * A real transcript, then a complete answer (no tool calls), then the user types a prompt and
 * interrupts: the prompt ends the answer's response, and the interrupt line after it marks it.
 */
function answeredThenInterrupted(): string[] {
  const src = join(CORPUS, "claude", "drmaciver_claude-reliability", "coverage-test-fix.transcript.jsonl");
  const lines = readFileSync(src, "utf8").split("\n").filter(Boolean);
  const last = JSON.parse(lines.at(-1)!);
  const at = Date.parse(last.timestamp);
  const entry = (uuid: string, parentUuid: string, ms: number, rest: object) =>
    JSON.stringify({
      parentUuid,
      isSidechain: false,
      sessionId: last.sessionId,
      cwd: last.cwd,
      uuid,
      timestamp: new Date(at + ms).toISOString(),
      ...rest,
    });
  const usage = {
    input_tokens: 10,
    output_tokens: 8,
    cache_read_input_tokens: 0,
    cache_creation_input_tokens: 0,
  };
  const answer = {
    type: "assistant",
    message: {
      id: "msg_synthetic",
      type: "message",
      role: "assistant",
      model: "claude-opus-4-5-20251101",
      content: [{ type: "text", text: "Done: multiply_numbers is tested." }],
      usage,
    },
  };
  const typed = (text: string) => ({ type: "user", message: { role: "user", content: text } });
  return [
    ...lines,
    entry("synthetic-answer", last.uuid, 500, answer),
    entry("synthetic-prompt", "synthetic-answer", 1000, typed("and divide_numbers too")),
    entry("synthetic-interrupt", "synthetic-prompt", 2000, typed("[Request interrupted by user]")),
  ];
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
      expectSameSessions(split, whole);
    });
  }

  // An interrupt marks the last answer as interrupted. While watching, the answer may have been
  // read (and written) in an earlier pass than the interrupt: it is kept open across passes.
  test("an interrupt read in a later watch pass still marks the answer (every corpus file with one)", async () => {
    const INTERRUPT = /"type":"turn_aborted"|\[Request interrupted by user/;
    let checked = 0;
    for (const [agent, path] of sources) {
      if (!statSync(path).isFile()) continue;
      const lines = readFileSync(path, "utf8").split("\n").filter(Boolean);
      const at = lines.findIndex((l) => INTERRUPT.test(l));
      if (at <= 0) continue;
      await using once = await tempHome();
      await using live = await tempHome();
      await using dir = await tempDir();
      const copy = join(dir.path, "live.jsonl");
      writeFileSync(copy, `${lines.slice(0, at).join("\n")}\n`);
      await imported(live.path, agent, copy, undefined, false);
      writeFileSync(copy, `${lines.join("\n")}\n`);
      const passes = await imported(live.path, agent, copy);
      const whole = await imported(once.path, agent, copy);
      if (interruptedIds(whole).length > 0) checked++;
      expect(interruptedIds(passes)).toEqual(interruptedIds(whole));
      expect(passes.sessions.map((s) => s.messages)).toEqual(whole.sessions.map((s) => s.messages));
    }
    expect(checked).toBeGreaterThan(0);
  });

  test("an interrupt after a later prompt still marks the last answer when written line by line", async () => {
    const lines = answeredThenInterrupted();
    await using dir = await tempDir();
    const file = join(dir.path, "interrupted.jsonl");
    writeFileSync(file, `${lines.join("\n")}\n`);
    await using once = await tempHome();
    await using parts = await tempHome();
    const whole = await imported(once.path, "claude", file);
    const split = await imported(parts.path, "claude", file, 1);
    expect(interruptedIds(whole)).toEqual(["synthetic-answer"]);
    expect(split.sessions.map((s) => s.messages)).toEqual(whole.sessions.map((s) => s.messages));
  });

  test("an interrupt read by a later import (after a final one) marks the stored answer", async () => {
    // A periodic `freecode import` ran after the prompt; the user pressed Esc after that.
    const lines = answeredThenInterrupted();
    await using dir = await tempDir();
    const file = join(dir.path, "interrupted.jsonl");
    writeFileSync(file, `${lines.slice(0, -1).join("\n")}\n`);
    await using home = await tempHome();
    const before = await imported(home.path, "claude", file);
    expect(interruptedIds(before)).toEqual([]);
    writeFileSync(file, `${lines.join("\n")}\n`);
    const after = await imported(home.path, "claude", file);
    expect(after.summary.sessions).toEqual({ created: 0, updated: 1, unchanged: 0 });
    await using once = await tempHome();
    const whole = await imported(once.path, "claude", file);
    expect(interruptedIds(after)).toEqual(["synthetic-answer"]);
    expectSameSessions(after, whole);
  });

  test("an import that fails between parts heals on the next run: the store ends as an all-at-once import", async () => {
    const src = join(CORPUS, "claude", "laf-us_idaho-vault");
    await using once = await tempHome();
    const whole = await imported(once.path, "claude", src);
    for (const failAt of [3, 25, 60]) {
      await using broken = await tempHome();
      // The store fails on its failAt-th write of messages: the parts before it are stored.
      const { adapter } = await openStore("files", { home: broken.path, fsync: "never" });
      let writes = 0;
      const failing = new Proxy(adapter, {
        get(target, key, receiver) {
          const value = Reflect.get(target, key, receiver);
          if (key !== "appendMessages" && key !== "createSession") return value;
          return async (...args: unknown[]) => {
            if (++writes === failAt) throw new Error("disk full (test)");
            return (value as (...a: unknown[]) => Promise<void>).apply(target, args);
          };
        },
      });
      const report = await importSources({
        agent: "claude",
        paths: [src],
        adapter: failing,
        home: broken.path,
        fsync: false,
        writeEveryBytes: 1,
      });
      await adapter.close();
      expect(writes).toBeGreaterThanOrEqual(failAt);
      expect(report.sources[0]!.warnings.some((w) => w.message.includes("disk full (test)"))).toBe(true);
      const healed = await imported(broken.path, "claude", src, 1);
      expectSameSessions(healed, whole);
    }
  });
});
