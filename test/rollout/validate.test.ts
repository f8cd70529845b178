/** The compiled predicate must agree with valibot on every event shape, valid and broken. */
import { describe, expect, test } from "bun:test";
import * as v from "valibot";
import { eventNumberProblem } from "../../src/rollout/event-numbers.ts";
import { EVENT_TYPES, RolloutEventSchema } from "../../src/rollout/events.ts";
import {
  BODY_FIELDS,
  checkEvent,
  draftProblem,
  EventDraftSchema,
  isValidDraft,
  isValidEvent,
} from "../../src/rollout/validate.ts";
import { FIXTURE_SOURCE, readRollout } from "./_events.ts";

const MUTATIONS: ((e: Record<string, unknown>, key: string) => unknown)[] = [
  (e, k) => {
    delete e[k];
  },
  (e, k) => void (e[k] = null),
  (e, k) => void (e[k] = 42),
  (e, k) => void (e[k] = "text"),
  (e, k) => void (e[k] = [1]),
  (e, k) => void (e[k] = Number.NaN),
  // Regression: ±Infinity passed `v.number()` and was written as null, leaving an unreadable line.
  (e, k) => void (e[k] = Number.POSITIVE_INFINITY),
  (e, k) => void (e[k] = Number.NEGATIVE_INFINITY),
  (e, k) => void (e[k] = ""),
  (e, k) => void (e[k] = 1.5),
  (e, k) => void (e[k] = -1),
];

describe("compiled validator", () => {
  test("every catalogue type is covered by the fixture or the samples below", () => {
    expect(EVENT_TYPES.length).toBe(24);
  });

  test("agrees with v.is on every field mutation of every fixture event", async () => {
    let checked = 0;
    for await (const event of readRollout(FIXTURE_SOURCE)) {
      for (const key of Object.keys(event)) {
        for (const mutate of MUTATIONS) {
          const copy = structuredClone(event) as Record<string, unknown>;
          mutate(copy, key);
          expect(isValidEvent(copy)).toBe(v.is(RolloutEventSchema, copy));
          expect(isValidDraft(copy)).toBe(v.is(EventDraftSchema, copy));
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThan(1000);
  });

  test("agrees on non-objects and on the picklists", () => {
    for (const x of [null, 1, "s", [], [{}], {}, { type: "turn.started" }]) {
      expect(isValidEvent(x)).toBe(v.is(RolloutEventSchema, x));
    }
    const denied = { type: "function.denied", id: "i", seq: 1, aggregateID: "s", timestamp: 1, tool: "Bash" };
    for (const source of ["hook", "mode", "rule", "permission", "permission-hook", "user", "role", "admin"]) {
      expect(isValidEvent({ ...denied, source })).toBe(source !== "admin");
    }
  });

  test("checkEvent names the field; newer types with a good envelope are 'unknown', not invalid", () => {
    const base = { id: "i", seq: 1, aggregateID: "s", timestamp: 1 };
    expect(checkEvent({ ...base, type: "model.first_token", turnId: "t" })).toMatchObject({
      kind: "invalid",
      field: "ttft_ms",
    });
    expect(checkEvent({ ...base, type: "poke.triggered" })).toEqual({
      kind: "unknown",
      type: "poke.triggered",
    });
    expect(checkEvent({ ...base, seq: 0, type: "poke.triggered" })).toMatchObject({
      kind: "invalid",
      field: "seq",
    });
    expect(checkEvent([1])).toMatchObject({ kind: "invalid" });
  });

  test("numbers are finite and ids non-empty, in the compiled check as in the schema", () => {
    const first = { type: "model.first_token", id: "i", seq: 1, aggregateID: "s", timestamp: 1, turnId: "t" };
    for (const bad of [
      { ttft_ms: Number.POSITIVE_INFINITY },
      { ttft_ms: JSON.parse("1e309"), timestamp: 1 },
      { ttft_ms: 1, timestamp: -Infinity },
      { ttft_ms: 1, id: "" },
    ]) {
      const event = { ...first, ...bad };
      expect(isValidEvent(event)).toBe(false);
      expect(v.is(RolloutEventSchema, event)).toBe(false);
      expect(isValidDraft(event)).toBe(false);
    }
    expect(isValidEvent({ ...first, ttft_ms: 300 })).toBe(true);
  });

  test("regression: a new event's counts are whole and ≥ 0 and its times ≥ 0, while a log holding others still reads; a pipe inside a pipe keeps its checks (a cost of 1e999 passed the compiled check)", () => {
    const response = {
      type: "model.response",
      id: "i",
      seq: 1,
      aggregateID: "s",
      timestamp: 1,
      turnId: "t",
      provider: "p",
      model: "m",
    };
    for (const bad of [
      { inputTokens: -2_000_000 },
      { outputTokens: 1.5 },
      { cacheReadTokens: -1 },
      { textChars: 0.5 },
      { duration_ms: -5 },
      { ttft_ms: -1 },
    ]) {
      const event = { ...response, ...bad };
      // Written by an older version: read as it is.
      expect([bad, isValidEvent(event), v.is(RolloutEventSchema, event)]).toEqual([bad, true, true]);
      // Given as a new event: refused, naming the field.
      expect([bad, eventNumberProblem(event)?.field]).toEqual([bad, Object.keys(bad)[0]]);
    }
    for (const good of [
      { inputTokens: 0, outputTokens: 12 },
      { duration_ms: 12.5, ttft_ms: 0 },
      { costUsd: 0.25 },
    ]) {
      const event = { ...response, ...good };
      expect([good, isValidEvent(event), eventNumberProblem(event)]).toEqual([good, true, undefined]);
    }
    for (const cost of [JSON.parse("1e999"), -1]) {
      const event = { ...response, costUsd: cost };
      expect([cost, isValidEvent(event), v.is(RolloutEventSchema, event)]).toEqual([cost, false, false]);
    }
    const compaction = { type: "compact.occurred", id: "c", seq: 2, aggregateID: "s", timestamp: 2 };
    expect(eventNumberProblem({ ...compaction, beforeTokens: 100, afterTokens: -1 })?.field).toBe(
      "afterTokens",
    );
    expect(eventNumberProblem({ ...compaction, beforeTokens: 100, afterTokens: 20 })).toBeUndefined();
  });
});

describe("no message bodies in the rollout", () => {
  test("a writer's event with a body field is refused, naming it; other extra fields pass; readers accept any", () => {
    const response = {
      type: "model.response",
      id: "i",
      timestamp: 1,
      turnId: "t",
      provider: "p",
      model: "m",
    };
    expect(isValidDraft(response)).toBe(true);
    expect(isValidDraft({ ...response, costUsd: 0.01 })).toBe(true);
    for (const field of BODY_FIELDS) {
      const e = { ...response, [field]: "SECRET model-written text" };
      expect(isValidDraft(e)).toBe(false);
      expect(draftProblem(e)).toEqual({
        message: `rollout events hold no message bodies or model-written text: field "${field}" is refused (the text belongs in the session's messages)`,
        field,
      });
      // A log written by something else still reads: the rule is the writers'.
      expect(checkEvent({ ...e, seq: 1, aggregateID: "s" }).kind).toBe("event");
    }
  });
});
