/**
 * Input checks every adapter applies before writing: ids, messages and meta are validated with the
 * record schemas, and a failure is a one-line `bad_input` naming the field — nothing is written.
 */
import * as v from "valibot";
import { badInput } from "../errors.ts";
import { isTimeMs, MAX_TIME_MS } from "../util/number-schemas.ts";
import { checkMessageSize, isValidId, isValidMessage } from "./_message-check.ts";
import type { ListQuery } from "./contract.ts";
import {
  IdSchema,
  MessageSchema,
  type SessionMeta,
  SessionMetaSchema,
  type StoredMessage,
} from "./records.ts";

function fail(what: string, issues: [v.BaseIssue<unknown>, ...v.BaseIssue<unknown>[]], prefix = ""): never {
  const issue = issues[0];
  const path = v.getDotPath(issue);
  throw badInput(`${what}: ${issue.message}`, { field: path ? `${prefix}${path}` : prefix || undefined });
}

/** Check a session (or message) id: no `/`, no `..`, no NUL, at most 128 characters. */
export function checkId(id: unknown, what = "session id"): string {
  if (isValidId(id)) return id as string;
  const r = v.safeParse(IdSchema, id);
  if (!r.success) {
    const shown =
      typeof id === "string" ? JSON.stringify(id.length > 40 ? `${id.slice(0, 40)}…` : id) : typeof id;
    throw badInput(`invalid ${what} ${shown}: ${r.issues[0].message}`, { field: "id" });
  }
  return r.output;
}

/**
 * The id of a session something new is written under (a rollout log's events too): an id, and not
 * starting with `.`, as `SessionIdSchema` holds a session's (a `.x` log was written, and listed by
 * `trace --list`, where every adapter refused a `.x` session).
 */
export function checkSessionId(id: unknown): string {
  checkId(id);
  if ((id as string).startsWith("."))
    throw badInput(
      `invalid session id ${JSON.stringify(id)}: session id must not start with '.' (dot-names are reserved)`,
      { field: "id" },
    );
  return id as string;
}

const TIME_RULE = `a time must be milliseconds a date can hold (at most ±${MAX_TIME_MS})`;

/**
 * A new record's times within what a `Date` holds (9e15 was stored, then every listing, trace and
 * search of it threw). Only where records enter: one an older version stored still reads.
 */
function checkTimes(record: Record<string, unknown>, fields: readonly string[], prefix = ""): void {
  for (const f of fields) {
    const t = record[f];
    if (t !== undefined && !isTimeMs(t)) throw badInput(`${f}: ${TIME_RULE}`, { field: `${prefix}${f}` });
  }
}

/**
 * The first `seq` a `readEvents({ fromSeq })` reads, the same in every adapter: events from it on
 * (`2.5` reads from 3; sqlite and sqljs read from 2). Not a number is bad input (`NaN` read nothing
 * here and everything there).
 */
export function firstSeq(fromSeq: unknown): number {
  if (fromSeq === undefined) return 1;
  if (typeof fromSeq !== "number" || Number.isNaN(fromSeq))
    throw badInput("fromSeq must be a number", { field: "fromSeq" });
  return Math.max(1, Math.ceil(fromSeq));
}

/** Validate one message (as stored), its size included; `index` names it in the error. */
export function checkMessage(message: unknown, index?: number): StoredMessage {
  const prefix = () => (index === undefined ? "" : `[${index}].`); // made only for an error
  let m: StoredMessage;
  if (isValidMessage(message))
    m = message as StoredMessage; // the fast path; the schema explains failures
  else {
    const r = v.safeParse(MessageSchema, message);
    if (!r.success) fail("invalid message", r.issues, prefix());
    m = r.output;
  }
  if (!isTimeMs(m.timestamp)) checkTimes(m, ["timestamp"], prefix());
  return checkMessageSize(m, index);
}

/** Validate a batch of messages and reject duplicate ids inside it. */
export function checkMessages(messages: unknown[]): StoredMessage[] {
  const seen = new Set<string>();
  return messages.map((m, i) => {
    const ok = checkMessage(m, i);
    if (seen.has(ok.id)) throw badInput(`duplicate message id ${ok.id}`, { field: `[${i}].id` });
    seen.add(ok.id);
    return ok;
  });
}

/** Validate a session meta (as stored: one read back, or changed by an update). */
export function checkMeta(meta: unknown): SessionMeta {
  const r = v.safeParse(SessionMetaSchema, meta);
  if (!r.success) fail("invalid session meta", r.issues);
  return r.output;
}

/** The times a new session's meta gives (`createdAt`…) must be ones a `Date` holds. */
const META_TIMES = ["createdAt", "updatedAt", "lastTurnAt"] as const;

/** Validate the meta of a session being created: `checkMeta`, and its times (see `checkTimes`). */
export function checkNewMeta(meta: unknown, prefix = ""): SessionMeta {
  const m = checkMeta(meta);
  checkTimes(m, META_TIMES, prefix);
  return m;
}

/** The largest message line the store accepts (a 10 MB line is refused, not written). */
export { MAX_MESSAGE_BYTES } from "./_message-check.ts";

/**
 * A listing query as every adapter takes it: `limit` and `offset` whole numbers ≥ 0 (SQLite refused
 * 1.5 with a raw "datatype mismatch", the others rounded it; -1 gave nothing, silently).
 */
export function checkListQuery(query: ListQuery): ListQuery {
  for (const key of ["limit", "offset"] as const) {
    const n = query[key];
    if (n !== undefined && !(Number.isSafeInteger(n) && n >= 0))
      throw badInput(`${key} must be a whole number ≥ 0 (got ${String(n)})`, { field: key });
  }
  return query;
}

/**
 * A context cache as the JSON text every adapter stores: `bad_input` for what JSON cannot hold
 * (`undefined`, a function, a BigInt, a cycle), in every adapter alike.
 */
export function contextCacheText(cache: unknown): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(cache);
  } catch (error) {
    throw badInput(`context cache must be JSON: ${(error as Error).message}`, { field: "cache" }, error);
  }
  if (text === undefined) throw badInput("context cache must be JSON", { field: "cache" });
  return text;
}
