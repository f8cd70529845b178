/** `freecode replay` and `freecode usage` over the fixture log and config.json prices. */
import { describe, expect, test } from "bun:test";
import { copyFileSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadReplay } from "../../src/rollout/load.ts";
import { parseJson, ROOT, runCli, tempHome } from "../_helpers.ts";

function setup(home: string) {
  const dir = join(home, "rollout", "sessions", "fixture-session");
  mkdirSync(dir, { recursive: true });
  copyFileSync(join(ROOT, "test/rollout/fixtures/session.jsonl"), join(dir, "events.jsonl"));
}

describe("replay", () => {
  test("--json: turns keyed across the resume, calls with outputs; human output lists them", async () => {
    await using home = await tempHome();
    setup(home.path);
    const printed = runCli(["replay", "fixture-session", "--json", "--max-output", "4"], { home: home.path });
    const r = parseJson<{ turns: { turnKey: string }[]; totalCalls: number }>(printed);
    // Written in pieces, byte for byte what JSON.stringify gives for the library's Replay.
    const file = join(home.path, "rollout", "sessions", "fixture-session", "events.jsonl");
    const replay = await loadReplay({ file, sessionId: "fixture-session" }, { maxOutputChars: 4 });
    expect(printed.stdout).toBe(`${JSON.stringify(replay, null, 2)}\n`);
    expect(r.turns.map((t) => t.turnKey)).toEqual(["turn-0#1", "turn-1#1", "turn-0#2"]);
    expect(r.totalCalls).toBe(6);
    const text = runCli(["replay", "fixture-session"], { home: home.path }).stdout;
    expect(text).toContain("✗ Bash");
    expect(text).toContain("⊘ Write denied by mode: plan mode forbids writes");
    expect(text).toContain("unreadable line 29");
  });
});

describe("usage", () => {
  test("unpriced models say cost unknown, never $0; prices from config.json apply by glob", async () => {
    await using home = await tempHome();
    setup(home.path);
    const before = parseJson<{ totals: { costUsd: number | null } }>(
      runCli(["usage", "--json"], { home: home.path }),
    );
    expect(before.totals.costUsd).toBeNull();
    expect(runCli(["usage"], { home: home.path }).stdout).toContain("cost unknown");
    writeFileSync(
      join(home.path, "config.json"),
      JSON.stringify({ prices: { "claude-*": { input: 3, output: 15 } } }),
    );
    const after = parseJson<{ models: { model: string; costUsd: number | null }[] }>(
      runCli(["usage", "fixture-session", "--json"], { home: home.path }),
    );
    const claude = after.models.find((m) => m.model === "claude-sonnet-4")!;
    expect(claude.costUsd).toBeCloseTo((2500 * 3 + 500 * 15 + 5000 * 3 + 100 * 3) / 1e6, 10);
    expect(after.models.find((m) => m.model === "gpt-5")!.costUsd).toBeNull();
  });
});
