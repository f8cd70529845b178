/** Building events for fold tests: `seq` and timestamps counted for you, envelope filled in. */
import type { EventInput, RolloutEvent } from "../../src/rollout/events.ts";
import { loadReplay, loadTrace, loadUsage, readRollout } from "../../src/rollout/load.ts";

export const FIXTURE = `${import.meta.dir}/fixtures/session.jsonl`;
export const FIXTURE_SOURCE = { file: FIXTURE, sessionId: "fixture-session" };

/** A log builder: `at(ms)` moves the clock, `add(event)` appends with the next seq. */
export function logBuilder(sessionId = "s", t0 = 1_700_000_000_000) {
  const events: RolloutEvent[] = [];
  let now = t0;
  return {
    events,
    at(ms: number) {
      now = t0 + ms;
      return this;
    },
    add(e: EventInput) {
      const seq = events.length + 1;
      // `type` first, as the store writes a line (file readers recognise some lines by their start).
      const { type, ...fields } = e;
      events.push({
        type,
        id: `e${seq}`,
        seq,
        aggregateID: sessionId,
        timestamp: now,
        ...fields,
      } as RolloutEvent);
      return this;
    },
  };
}

export { loadReplay, loadTrace, loadUsage, readRollout };
