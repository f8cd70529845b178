/**
 * Regression: a case's own `prices` lost to config.json's. The merged table put config first and
 * `priceFor` takes an exact key before any glob and the first matching glob after that, so config's
 * `claude-*` ($3) beat the case's `claude-sonnet-*` ($300), and config's exact `claude-sonnet-5` beat
 * the case's `anthropic/claude-sonnet-5`. The session is the bundled fix-login-1 recording: 4
 * responses of anthropic/claude-sonnet-5, 31 600 input, 1 060 output and 21 600 cache-read tokens,
 * so $0.1755 at $3/$15 and $17.55 at $300/$1 500.
 */
import { describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runEval } from "../../src/eval/runner.ts";
import { ROOT, runCli, tempDir, tempHome } from "../_helpers.ts";

const SESSION = join(ROOT, "examples", "rollouts", "fix-login-1");
const cheap = { input: 3, output: 15 };
const dear = { input: 300, output: 1500 };

/** Cases that differ only in their own prices, each with a $1 budget. */
const CASES = {
  "case-glob": { "claude-sonnet-*": dear },
  "case-provider-model": { "anthropic/claude-sonnet-5": dear },
  "case-prices-another-model": { "gpt-*": dear },
  "no-case-prices": undefined,
};

function writeCases(dir: string): string {
  const file = join(dir, "prices.json");
  const cases = Object.entries(CASES).map(([id, prices]) => ({
    id,
    sessions: "all",
    ...(prices ? { prices } : {}),
    expect: [{ cost: { maxUsd: 1 } }],
  }));
  writeFileSync(file, JSON.stringify(cases));
  return file;
}

describe("regression: a case's own prices are looked up before config.json's", () => {
  for (const [name, config] of [
    ["a config glob", { "claude-*": cheap }],
    ["a config exact id", { "claude-sonnet-5": cheap, "claude-*": cheap }],
  ] as const) {
    test(`the case's price beats ${name}; models the case does not price keep config's`, async () => {
      await using dir = await tempDir();
      const r = await runEval({ cases: [writeCases(dir.path)], sessions: SESSION, prices: config });
      const byId = Object.fromEntries(r.cases.map((c) => [c.id, c]));
      expect(Object.fromEntries(r.cases.map((c) => [c.id, c.verdict]))).toEqual({
        "case-glob": "fail",
        "case-provider-model": "fail",
        "case-prices-another-model": "pass",
        "no-case-prices": "pass",
      });
      expect(byId["case-glob"]!.sessions[0]!.checks[0]!.message).toBe("cost $17.5500 > budget $1");
      expect(byId["no-case-prices"]!.sessions[0]!.checks[0]!.message).toBe("cost $0.1755 within $1");
    });
  }

  test("one model id under two providers: the case's provider/model price applies to that provider only", async () => {
    await using dir = await tempDir();
    // One million input tokens from each provider, so the cost reads as the sum of the input prices.
    let seq = 0;
    const ev = (type: string, f: Record<string, unknown>) =>
      JSON.stringify({ type, id: `e${++seq}`, seq, aggregateID: "two", timestamp: 1_000 + seq, ...f });
    const lines = [ev("turn.started", { turnId: "t" })];
    for (const provider of ["anthropic", "bedrock"]) {
      const model = { turnId: "t", provider, model: "claude-x" };
      lines.push(ev("model.request", model), ev("model.response", { ...model, inputTokens: 1e6 }));
    }
    lines.push(ev("session.ended", { reason: "exit" }));
    mkdirSync(join(dir.path, "two"));
    writeFileSync(join(dir.path, "two", "events.jsonl"), `${lines.join("\n")}\n`);
    const file = join(dir.path, "two.json");
    const prices = { "anthropic/claude-x": { input: 100, output: 0 } };
    writeFileSync(file, JSON.stringify({ id: "two", prices, expect: [{ cost: { maxUsd: 1000 } }] }));
    const r = await runEval({
      cases: [file],
      sessions: dir.path,
      prices: { "claude-x": { input: 1, output: 0 } },
    });
    expect(r.cases[0]!.sessions[0]!.checks[0]!.message).toBe("cost $101.0000 within $1000");
  });

  test("through the CLI: config.json's glob loses to the case's (exit 1)", async () => {
    await using home = await tempHome();
    writeFileSync(join(home.path, "config.json"), JSON.stringify({ prices: { "claude-*": cheap } }));
    const r = runCli(["eval", writeCases(home.path), "--sessions", SESSION, "--json"], { home: home.path });
    expect(r.code).toBe(1);
    const report = JSON.parse(r.stdout) as { cases: { id: string; verdict: string }[] };
    expect(report.cases.find((c) => c.id === "case-glob")!.verdict).toBe("fail");
    expect(report.cases.find((c) => c.id === "no-case-prices")!.verdict).toBe("pass");
  });
});
