/** End to end: the compiled binary over the bundled examples, exit codes 0, 1 and 2. */
import { describe, expect, test } from "bun:test";
import { cpSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseJson, ROOT, runBinary, tempDir } from "../_helpers.ts";

const SESSIONS = join(ROOT, "examples", "rollouts");
const CASES = join(ROOT, "examples", "cases");
const passing = readdirSync(CASES)
  .filter((f) => f !== "demo-failure.yaml")
  .map((f) => join(CASES, f));

describe("freecode eval (compiled binary)", () => {
  test("the README quick start: examples show passes and the explained deliberate failure, exit 1", () => {
    const r = runBinary(["eval", "examples/cases", "--sessions", "examples/rollouts"], {
      timeoutMs: 120_000,
    });
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("✓ login-fix");
    expect(r.stdout).toContain("✗ demo-deliberate-failure  examples/cases/demo-failure.yaml:7");
    expect(r.stdout).toContain("1 hung model request: claude-sonnet-5 opened at seq 8");
    expect(r.stdout).toContain("8 cases: 7 passed, 1 failed, 0 could not be evaluated");
  }, 120_000);

  test("without the deliberate failure: exit 0", () => {
    const r = runBinary(["eval", ...passing, "--sessions", SESSIONS]);
    expect(r.code).toBe(0);
  });

  test("could not evaluate (a missing session) and a bad case file: exit 2", async () => {
    await using dir = await tempDir();
    const missing = join(dir.path, "missing.yaml");
    writeFileSync(missing, "id: missing\nsessions: [no-such-session]\nexpect:\n  - noHung: true\n");
    const r = runBinary(["eval", missing, "--sessions", SESSIONS, "--json"]);
    expect(r.code).toBe(2);
    expect(parseJson<{ cases: { sessions: { error: string }[] }[] }>(r).cases[0]!.sessions[0]!.error).toBe(
      "no rollout log for session no-such-session",
    );
    const bad = join(dir.path, "bad.json");
    writeFileSync(bad, '{"id": "x", "expect": [{"noHung": "yes"}]}');
    const b = runBinary(["eval", bad, "--sessions", SESSIONS]);
    expect(b.code).toBe(2);
    expect(b.stderr).toContain("bad.json:1: invalid noHung:");
  });

  test("a large selection is folded by two processes with the same verdicts", async () => {
    await using dir = await tempDir();
    const many = join(dir.path, "many");
    for (let i = 0; i < 60; i++) {
      const id = i % 3 === 0 ? "fix-login-3" : "fix-login-1";
      mkdirSync(join(many, `trial-${i}`), { recursive: true });
      cpSync(join(SESSIONS, id, "events.jsonl"), join(many, `trial-${i}`, "events.jsonl"));
    }
    const cases = join(dir.path, "c.yaml");
    // Many checks per session make a report of several hundred KB: a regression test for stdout being
    // cut short when the process exited before the pipe drained.
    const filler = Array.from({ length: 19 }, (_, i) => `  - toolCalls: { max: ${100 + i} }\n`).join("");
    writeFileSync(
      cases,
      `id: tests-ran\nsessions: all\npassRate: 0.5\nexpect:\n  - expectBashMatches: ['npm test']\n${filler}`,
    );
    const r = runBinary(["eval", cases, "--sessions", many, "--json", "--workers", "2"]);
    expect(r.code).toBe(0);
    const report = parseJson<{
      processes: number;
      sessionsFolded: number;
      cases: { counts: { passed: number; failed: number } }[];
    }>(r);
    expect(report.processes).toBe(2);
    expect(report.sessionsFolded).toBe(60);
    expect(report.cases[0]!.counts).toMatchObject({ passed: 40, failed: 20 });
    expect(r.stdout.length).toBeGreaterThan(200_000);
  }, 60_000);
});
