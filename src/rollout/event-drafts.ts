/**
 * Events a writer hands over to be appended (`freecode rollout append`'s stdin, `rollout.append`
 * over JSON-RPC), checked by one rule: an object, no `seq` (the store assigns it), an
 * `aggregateID` only if it is this session, a known event type, every field valid; `id` and
 * `timestamp` filled in when missing. One bad event rejects them all; `where` says how to name it
 * (a stdin line, or `events[i]`).
 */
import { badInput, type ErrorSource } from "../errors.ts";
import { MAX_DRAFT_BYTES, MAX_EVENT_BYTES } from "../storage/_events.ts";
import type { EventDraft } from "../storage/records.ts";
import { MAX_JSON_DEPTH, nestsAtMost } from "../util/json-depth.ts";
import { jsonBytesOver, mib } from "../util/json-size.ts";
import { isTimeMs, nonFinitePath, TIMESTAMP_RULE } from "../util/number-schemas.ts";
import { eventNumberProblem } from "./event-numbers.ts";
import { newEventId } from "./ids.ts";
import { bodyField, bodyProblem, checkEvent } from "./validate.ts";

/** The drafts to append to `sessionId`'s log, or `bad_input` at `where(i, field)` for the first bad one. */
export function eventDrafts(
  values: unknown[],
  sessionId: string,
  where: (index: number, field?: string) => ErrorSource,
  now = Date.now(),
): EventDraft[] {
  return values.map((raw, i) => {
    if (typeof raw !== "object" || raw === null || Array.isArray(raw))
      throw badInput("event is not a JSON object", where(i));
    if (!nestsAtMost(raw)) throw badInput(`event nests more than ${MAX_JSON_DEPTH} levels deep`, where(i));
    const e = raw as Record<string, unknown>;
    if (e.seq !== undefined) throw badInput("seq is assigned by the store: leave it out", where(i, "seq"));
    if (e.aggregateID !== undefined && e.aggregateID !== sessionId)
      throw badInput(
        `aggregateID "${String(e.aggregateID)}" is not the session "${sessionId}"`,
        where(i, "aggregateID"),
      );
    const draft = { ...e, id: e.id ?? newEventId(), aggregateID: sessionId, timestamp: e.timestamp ?? now };
    // The store's own rule (`checkStorableEvent`), said here with the line: the store named none.
    if (!isTimeMs(draft.timestamp)) throw badInput(`invalid event: ${TIMESTAMP_RULE}`, where(i, "timestamp"));
    const r = checkEvent({ ...draft, seq: 1 });
    if (r.kind === "unknown") throw badInput(`unknown event type "${r.type}"`, where(i, "type"));
    if (r.kind === "invalid") throw badInput(r.message, where(i, r.field));
    const numbers = eventNumberProblem(draft);
    if (numbers) throw badInput(numbers.message, where(i, numbers.field));
    // The shape was just checked: only the body fields are left to look at.
    const body = bodyField(draft);
    if (body !== undefined) throw badInput(bodyProblem(body).message, where(i, body));
    // A number past a double's range (`1e999`) parses as Infinity, which JSON would store as null.
    const huge = nonFinitePath(draft);
    if (huge !== undefined)
      throw badInput("a number too large for a double (stored, it would become null)", where(i, huge));
    // The store takes no line longer than readers read; `seq` is added to it.
    const bytes = jsonBytesOver(draft, MAX_DRAFT_BYTES);
    if (bytes !== undefined && bytes !== "too deep")
      throw badInput(
        `event is ${bytes} bytes as a line: over the ${mib(MAX_EVENT_BYTES)} a log line may take`,
        where(i),
      );
    return draft as unknown as EventDraft;
  });
}
