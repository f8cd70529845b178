/** Turning event drafts into stored records: `seq` continues from the last one stored. */
import { badInput } from "../errors.ts";
import type { EventDraft, EventRecord } from "./records.ts";

/** Stamp `drafts` with seq `lastSeq+1…`, the session id as `aggregateID`, and an id/timestamp if missing. */
export function stampEvents(sessionId: string, lastSeq: number, drafts: EventDraft[]): EventRecord[] {
  const now = Date.now();
  return drafts.map((d, i) => {
    if (d === null || typeof d !== "object" || typeof d.type !== "string" || d.type === "") {
      throw badInput("invalid event: type must be a non-empty string", { field: `[${i}].type` });
    }
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
