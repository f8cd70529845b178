/**
 * `usage` over every session and `trace` with no id on a store that streams its logs (sqlite): the
 * logs are listed once, and the newest is picked by each log's last event, not by folding them all.
 * Each session asked for the whole list of logs (4,000 sessions: 7-11 s), and `trace` read every
 * event of every log to pick one.
 */
import { expect, test } from "bun:test";
import { openStore } from "../../src/storage/select.ts";
import { runCli, tempHome } from "../_helpers.ts";

test("regression: usage over 4,000 logs and trace with no id stay quick on the sqlite store", async () => {
  await using home = await tempHome();
  const { adapter } = await openStore("sqlite", { home: home.path, fsync: "never" });
  for (let i = 0; i < 4000; i++)
    await adapter.appendEvents(`log-${String(i).padStart(4, "0")}`, [
      { type: "turn.started", turnId: "t", timestamp: 1_700_000_000_000 + i },
      {
        type: "model.response",
        turnId: "t",
        provider: "p",
        model: "m",
        inputTokens: 10,
        outputTokens: 5,
        timestamp: 1_700_000_000_000 + i,
      },
    ]);
  // A long log that is not the newest: `trace` must not read it to know that.
  await adapter.appendEvents(
    "long",
    Array.from({ length: 20_000 }, (_, i) => ({
      type: "turn.started",
      turnId: `t${i}`,
      timestamp: 1_600_000_000_000,
    })),
  );
  await adapter.close();
  const opts = { home: home.path, env: { FREECODE_STORE: "sqlite" } };
  let started = performance.now();
  const usage = runCli(["usage", "--json"], opts);
  const usageMs = performance.now() - started;
  expect(usage.code).toBe(0);
  expect((JSON.parse(usage.stdout) as { totals: { inputTokens: number } }).totals.inputTokens).toBe(40_000);
  started = performance.now();
  const trace = runCli(["trace"], opts);
  const traceMs = performance.now() - started;
  expect(trace.stdout.split("\n")[0]).toStartWith("session log-3999 ");
  // Generous (a process start included): about 0.5 s and 0.2 s here; 9 s and more before.
  expect([usageMs < 2_500, traceMs < 2_500]).toEqual([true, true]);
}, 120_000);
