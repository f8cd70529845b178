/** The usage fold: requests and responses per model, counted as the trace pairs them. */
import { expect, test } from "bun:test";
import type { RolloutEvent } from "../../src/rollout/events.ts";
import { buildTrace } from "../../src/rollout/folds/trace.ts";
import { usageOf } from "../../src/rollout/folds/usage.ts";

const events = (...es: Record<string, unknown>[]) =>
  es.map((e, i) => ({ id: `e${i + 1}`, seq: i + 1, timestamp: 1_700_000_000_000 + i, ...e }) as RolloutEvent);

test("regression: usage counts a request answered under the model's dated id on the row that answered, as the trace pairs them (a gpt-4o row showed a request never answered)", () => {
  const log = events(
    { type: "turn.started", turnId: "t" },
    { type: "model.request", turnId: "t", provider: "openai", model: "gpt-4o" },
    {
      type: "model.response",
      turnId: "t",
      provider: "openai",
      model: "gpt-4o-2024-08-06",
      inputTokens: 1000,
      outputTokens: 100,
    },
    { type: "model.request", turnId: "t", provider: "openai", model: "gpt-4o-mini" },
    { type: "model.response", turnId: "t", provider: "openai", model: "gpt-4o-mini", inputTokens: 5 },
    { type: "model.request", turnId: "t", provider: "openai", model: "gpt-4o" },
  );
  const u = usageOf("s", log);
  expect(u.models.map((m) => [m.model, m.requests, m.responses])).toEqual([
    ["gpt-4o", 1, 0],
    ["gpt-4o-2024-08-06", 1, 1],
    ["gpt-4o-mini", 1, 1],
  ]);
  expect(buildTrace("s", log).modelSpans.filter((m) => m.status === "ok").length).toBe(2);
});
