/**
 * Eval over random logs (seeded; see `test/rollout/_random-log.ts`): every assertion family of the
 * bench's case and the examples' cases runs over 300 logs of resumes, lost outputs, withdrawn calls
 * and unknown turns. Checks pass or fail with a message; the only checks set aside are those with no
 * answer on a trace (a percentile over no values, a cost with no price); nothing throws.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runEval } from "../../src/eval/runner.ts";
import { ROOT } from "../_helpers.ts";
import { randomLog } from "../rollout/_random-log.ts";

const dir = mkdtempSync(join(tmpdir(), "freecode-eval-random-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("every assertion runs over 300 random logs: pass or fail with a message, never an exception", async () => {
  const sessions = join(dir, "sessions");
  for (let seed = 1; seed <= 300; seed++) {
    mkdirSync(join(sessions, `s${seed}`), { recursive: true });
    const events = randomLog(seed, 20 + (seed % 7) * 30);
    writeFileSync(
      join(sessions, `s${seed}`, "events.jsonl"),
      events.map((e) => `${JSON.stringify(e)}\n`).join(""),
    );
  }
  // The bench's case touches every assertion family; the examples add the rest, over all sessions.
  const bench = readFileSync(join(ROOT, "bench", "eval.ts"), "utf8");
  const start = bench.indexOf("const CASE = `") + "const CASE = `".length;
  writeFileSync(join(dir, "bench.yaml"), bench.slice(start, bench.indexOf("`;", start)));
  // Every example case, over every random session.
  const examples: Record<string, unknown>[] = [];
  for (const f of ["safety.yaml", "login.yaml", "demo-failure.yaml", "health.json", "freecode-style.jsonl"]) {
    const text = readFileSync(join(ROOT, "examples", "cases", f), "utf8");
    const docs = f.endsWith(".yaml")
      ? text.split(/^---$/m).map((d) => Bun.YAML.parse(d))
      : f.endsWith(".jsonl")
        ? text
            .split("\n")
            .filter(Boolean)
            .map((l) => JSON.parse(l))
        : [JSON.parse(text)].flat();
    for (const doc of docs.flatMap((d) => (d && typeof d === "object" && "cases" in d ? d.cases : [d]))) {
      if (doc && typeof doc === "object")
        examples.push({ ...doc, id: `${f}-${examples.length}`, sessions: "all" });
    }
  }
  writeFileSync(join(dir, "examples.json"), JSON.stringify(examples));
  const report = await runEval({
    cases: [join(dir, "bench.yaml"), join(dir, "examples.json")],
    sessions,
    workers: 1,
  });
  expect(report.sessionsFolded).toBe(300);
  expect(report.cases.length).toBeGreaterThan(8);
  expect(report.cases.map((c) => c.sessions.length)).toEqual(report.cases.map(() => 300));
  const checks = report.cases.flatMap((c) => c.sessions.flatMap((s) => s.checks));
  expect(checks.length).toBeGreaterThan(6000);
  const setAside = new Set(checks.filter((c) => c.verdict === "error").map((c) => c.message));
  expect([...setAside].filter((m) => !/no measured value|no price for model/.test(m))).toEqual([]);
  expect(checks.every((c) => typeof c.message === "string" && c.message.length > 0)).toBe(true);
});
