/**
 * Search pairs a rollout-only session's calls with their outputs and refusals as the trace does, on
 * the random logs the folds are compared on (`rollout/folds-agree.test.ts`): resumes that number
 * turns from turn-0 again, turn ids reused, calls with and without ids, outputs and refusals with no
 * call, outputs written ahead of their calls. Each output carries its own seq as its duration, so a
 * call's duration says which output answered it; calls are known by their time (one event a ms).
 */
import { expect, test } from "bun:test";
import type { RolloutEvent } from "../../src/rollout/events.ts";
import { buildTrace } from "../../src/rollout/folds/trace.ts";
import type { EventRecord } from "../../src/storage/records.ts";
import { deriveThread } from "../../src/threads/derive.ts";
import { randomLog } from "../rollout/_random-log.ts";

const byTime = (a: [number, number], b: [number, number]) => a[0] - b[0] || a[1] - b[1];

test("on 300 random logs search and the trace agree on which output answers which call, which calls are open and how many were refused", () => {
  for (let seed = 1; seed <= Number(process.env.AGREE_SEEDS ?? 300); seed++) {
    const events = randomLog(seed, 20 + (seed % 7) * 30).map((e) =>
      e.type === "function.output" ? { ...e, duration_ms: e.seq } : e,
    ) as RolloutEvent[];
    const at = new Map(events.map((e) => [e.seq, e.timestamp]));
    const trace = buildTrace("s", events);
    const calls = deriveThread("s", undefined, [], events as unknown as EventRecord[]).turns.flatMap(
      (t) => t.toolCalls,
    );
    const where = `seed ${seed}`;
    const answered = calls
      .filter((c) => c.durationMs !== undefined)
      .map((c): [number, number] => [c.timestamp, c.durationMs!])
      .sort(byTime);
    // A call is known by when it started: a paired call's or a refused call's that ran anyway; an
    // output no call waited for, by its own time (the trace starts it its duration earlier).
    const started = (s: (typeof trace.toolSpans)[number]) =>
      s.unpaired && s.startedAt === at.get(s.outputSeq)! - s.duration_ms ? at.get(s.outputSeq)! : s.startedAt;
    const spans = trace.toolSpans.map((s): [number, number] => [started(s), s.outputSeq]).sort(byTime);
    expect([where, answered]).toEqual([where, spans]);
    const open = calls
      .filter((c) => c.durationMs === undefined && c.deniedBy === undefined)
      .map((c) => c.timestamp)
      .sort((a, b) => a - b);
    expect([where, open]).toEqual([where, trace.pendingCalls.map((c) => c.at)]);
    expect([where, calls.filter((c) => c.deniedBy !== undefined).length]).toEqual([
      where,
      trace.deniedSpans.length,
    ]);
  }
});
