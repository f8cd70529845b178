/** Turning event drafts into stored records: `seq` continues from the last one stored. */
import { badInput } from "../errors.ts";
import { MAX_JSON_DEPTH } from "../util/json-depth.ts";
import { jsonBytesOver, mib } from "../util/json-size.ts";
import { isTimeMs, TIMESTAMP_RULE } from "../util/number-schemas.ts";
import type { EventDraft, EventRecord } from "./records.ts";

/**
 * The largest event a store takes: its JSON line, in UTF-8 bytes. Readers of log files skip a longer
 * line as unreadable (`rollout/_jsonl.ts`), so an event over it would be stored, then read as
 * damage by some readers and whole by others (a 40 MiB tool output failed an eval read from the
 * file and passed one read through the store).
 */
export const MAX_EVENT_BYTES = 32 * 1024 * 1024;

/**
 * The longest line a writer's draft may make (its `id`, session and time filled in): the store adds
 * `,"seq":N` (at most 32 bytes) and keeps the line shorter than `MAX_EVENT_BYTES`. The recorder and
 * `rollout append` refuse a longer one themselves, so a batch the store would refuse never forms.
 */
export const MAX_DRAFT_BYTES = MAX_EVENT_BYTES - 1 - 32;

/**
 * `bad_input` naming `field` when the store would refuse `d` (a draft, or an event as exported): its
 * type, id and time, and — with `lineBytes`, the bytes its stored line will take beyond `d`'s own
 * JSON — its size. `session import` and a sync upload check an export's events so (an upload the
 * store would refuse on import was taken, and its link never imported).
 */
export function checkStorableEvent(d: EventDraft, field: string, lineBytes?: number): void {
  if (d === null || typeof d !== "object" || typeof d.type !== "string" || d.type === "") {
    throw badInput("invalid event: type must be a non-empty string", { field: `${field}.type` });
  }
  // What every adapter reads back: a line with another id or time would be stored, then be an
  // unreadable line for one adapter and an event for the others.
  if (d.id !== undefined && (typeof d.id !== "string" || d.id === ""))
    throw badInput("invalid event: id must be a non-empty string", { field: `${field}.id` });
  if (d.timestamp !== undefined && !isTimeMs(d.timestamp))
    throw badInput(`invalid event: ${TIMESTAMP_RULE}`, { field: `${field}.timestamp` });
  if (lineBytes !== undefined) checkEventBytes(d, field, MAX_EVENT_BYTES - 1 - lineBytes);
}

/** `bad_input` naming `field` when `record`'s JSON line is over `max` bytes or nests too deep. */
function checkEventBytes(record: EventDraft, field: string, max: number): void {
  const bytes = jsonBytesOver(record, max);
  if (bytes === "too deep")
    throw badInput(`invalid event: ${record.type} nests more than ${MAX_JSON_DEPTH} levels deep`, { field });
  if (bytes !== undefined)
    throw badInput(
      `invalid event: ${record.type} is ${bytes} bytes as a line: a log line must be shorter than ${mib(MAX_EVENT_BYTES)} (${MAX_EVENT_BYTES} bytes), as readers skip longer ones`,
      { field },
    );
}

/** Stamp `drafts` with seq `lastSeq+1…`, the session id as `aggregateID`, and an id/timestamp if missing. */
export function stampEvents(sessionId: string, lastSeq: number, drafts: EventDraft[]): EventRecord[] {
  const now = Date.now();
  return drafts.map((d, i) => {
    checkStorableEvent(d, `[${i}]`);
    const record = {
      ...d,
      type: d.type,
      id: d.id ?? crypto.randomUUID(),
      seq: lastSeq + i + 1,
      aggregateID: sessionId,
      timestamp: d.timestamp ?? now,
    } as EventRecord;
    // Shorter than the limit: a reader skips a line that fills it before its newline.
    checkEventBytes(record, `[${i}]`, MAX_EVENT_BYTES - 1);
    return record;
  });
}
