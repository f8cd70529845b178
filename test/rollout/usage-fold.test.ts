/** The usage fold: requests and responses per model, counted as the trace pairs them. */
import { expect, test } from "bun:test";
import { costOf } from "../../src/eval/assertions/outcome.ts";
import type { RolloutEvent } from "../../src/rollout/events.ts";
import { buildTrace } from "../../src/rollout/folds/trace.ts";
import { createUsageFold, priceFor, usageOf } from "../../src/rollout/folds/usage.ts";

const events = (...es: Record<string, unknown>[]) =>
  es.map((e, i) => ({ id: `e${i + 1}`, seq: i + 1, timestamp: 1_700_000_000_000 + i, ...e }) as RolloutEvent);

/** An OpenAI request for `asked` in turn `t`, and its answer naming `model`. */
const openai = (asked: string, model: string, inputTokens: number, outputTokens?: number) => [
  { type: "model.request", turnId: "t", provider: "openai", model: asked },
  { type: "model.response", turnId: "t", provider: "openai", model, inputTokens, outputTokens },
];

test("regression: usage counts a request answered under the model's dated id on the row that answered, as the trace pairs them (a gpt-4o row showed a request never answered)", () => {
  const log = events(
    { type: "turn.started", turnId: "t" },
    ...openai("gpt-4o", "gpt-4o-2024-08-06", 1000, 100),
    ...openai("gpt-4o-mini", "gpt-4o-mini", 5),
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

test("regression: usage and eval's cost price a response at the model it named, a dated id at its model's price (usage said cost unknown, eval priced the request's model)", () => {
  const log = events(
    { type: "turn.started", turnId: "t" },
    ...openai("gpt-4o", "gpt-4o-2024-08-06", 1_000_000, 1_000_000),
    ...openai("gpt-4o", "gpt-4o-mini-2024-07-18", 1_000_000, 0),
  );
  const prices = {
    "openai/gpt-4o": { input: 2.5, output: 10 },
    "gpt-4o-mini": { input: 0.15, output: 0.6 },
  };
  const u = usageOf("s", log, prices);
  const usd = u.models.reduce((n, m) => n + (m.costUsd ?? 0), 0);
  expect(Math.round(usd * 1e6) / 1e6).toBe(12.65);
  const trace = buildTrace("s", log);
  expect(trace.modelSpans.map((m) => m.responseModel)).toEqual([
    "gpt-4o-2024-08-06",
    "gpt-4o-mini-2024-07-18",
  ]);
  const c = costOf(trace, prices);
  expect(Math.round((c.usd ?? 0) * 1e6) / 1e6).toBe(12.65);
  expect(priceFor(prices, "openai", "gpt-4o-2024-08-06")).toEqual(prices["openai/gpt-4o"]);
  expect(priceFor(prices, "openai", "gpt-4o-minimal")).toBeUndefined();
});

test("regression: out-of-order stamps give no negative durations; a stray first token stays in its turn; responses differing in cache reads are not copies", () => {
  const neg = events(
    { type: "turn.started", turnId: "t0", timestamp: 1_700_000_010_000 },
    { type: "model.request", turnId: "t0", provider: "p", model: "m", timestamp: 1_700_000_010_000 },
    {
      type: "model.response",
      turnId: "t0",
      provider: "p",
      model: "m",
      inputTokens: 5,
      timestamp: 1_700_000_009_000,
    },
    { type: "function.call", turnId: "t0", tool: "Read", callId: "a", timestamp: 1_700_000_010_000 },
    { type: "function.output", turnId: "t0", tool: "Read", callId: "a", timestamp: 1_700_000_008_000 },
  );
  const t = buildTrace("s", neg);
  expect([t.model_ms, t.tool_ms, t.modelSpans[0]!.duration_ms, t.toolSpans[0]!.duration_ms]).toEqual([
    0, 0, 0, 0,
  ]);
  const stray = events(
    { type: "turn.started", turnId: "t0", timestamp: 1_700_000_000_000 },
    {
      type: "model.request",
      turnId: "t0",
      provider: "o",
      model: "a",
      streamed: true,
      timestamp: 1_700_000_000_100,
    },
    { type: "turn.started", turnId: "t1", timestamp: 1_700_000_100_000 },
    {
      type: "model.request",
      turnId: "t1",
      provider: "x",
      model: "b",
      streamed: true,
      timestamp: 1_700_000_100_000,
    },
    {
      type: "model.response",
      turnId: "t1",
      provider: "x",
      model: "b",
      inputTokens: 1,
      timestamp: 1_700_000_101_000,
    },
    { type: "model.first_token", turnId: "t1", ttft_ms: 300, timestamp: 1_700_000_100_300 },
  );
  const first = buildTrace("s", stray, { now: 1_700_000_102_000 }).modelSpans[0]!;
  expect([first.model, first.ttft_ms, first.stalledBeforeFirstToken]).toEqual(["a", undefined, true]);
  const resp = (cacheReadTokens: number) =>
    events(
      { type: "turn.started", turnId: "t0" },
      { type: "model.request", turnId: "t0", provider: "ollama", model: "llama3" },
      {
        type: "model.response",
        turnId: "t0",
        provider: "ollama",
        model: "llama3",
        responseId: "chatcmpl-7",
        inputTokens: 10,
        outputTokens: 20,
        cacheReadTokens,
      },
    );
  const counted = new Map<string, string>();
  const fold = (id: string, log: RolloutEvent[]) => {
    const f = createUsageFold(id, {}, counted);
    for (const e of log) f.push(e);
    return f.finish();
  };
  const a = fold("a", resp(2000));
  const b = fold("b", resp(5000));
  expect([a.models[0]!.responses, b.models[0]!.responses, b.copiedResponses]).toEqual([1, 1, 0]);
});
