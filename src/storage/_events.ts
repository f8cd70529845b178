/** Turning event drafts into stored records: `seq` continues from the last one stored. */
import { badInput } from "../errors.ts";
import { isTimeMs, MAX_TIME_MS } from "../util/number-schemas.ts";
import type { EventDraft, EventRecord } from "./records.ts";

/** Stamp `drafts` with seq `lastSeq+1…`, the session id as `aggregateID`, and an id/timestamp if missing. */
export function stampEvents(sessionId: string, lastSeq: number, drafts: EventDraft[]): EventRecord[] {
  const now = Date.now();
  return drafts.map((d, i) => {
    if (d === null || typeof d !== "object" || typeof d.type !== "string" || d.type === "") {
      throw badInput("invalid event: type must be a non-empty string", { field: `[${i}].type` });
    }
    // What every adapter reads back: a line with another id or time would be stored, then be an
    // unreadable line for one adapter and an event for the others.
    if (d.id !== undefined && (typeof d.id !== "string" || d.id === ""))
      throw badInput("invalid event: id must be a non-empty string", { field: `[${i}].id` });
    if (d.timestamp !== undefined && !isTimeMs(d.timestamp))
      throw badInput(
        `invalid event: timestamp must be milliseconds a date can hold (at most ±${MAX_TIME_MS})`,
        { field: `[${i}].timestamp` },
      );
    return {
      ...d,
      type: d.type,
      id: d.id ?? crypto.randomUUID(),
      seq: lastSeq + i + 1,
      aggregateID: sessionId,
      timestamp: d.timestamp ?? now,
    } as EventRecord;
  });
}
