/**
 * A session as one portable document, and back. `exportSession` gathers what a session is — its
 * meta (counters, token totals, title and its source, timestamps, summary, goal), its messages as
 * stored, its context cache and, when asked, its rollout log with event ids and timestamps — into a
 * versioned JSON document. `importSessionDocument` checks every part of such a document before it
 * writes anything and recreates it as a new session (a new id unless one is given), which records
 * where it came from in `copiedFrom`. A failure after the session was created (a disk error while
 * appending its events) purges it: an import is whole or absent. A process killed meanwhile cannot
 * purge: the session is made marked `copiedFrom.incomplete` until its log is whole, so `store
 * verify` names it and an import again under its id replaces it (it was refused as existing, and
 * looked whole with 32,000 of 40,000 events).
 */
import * as v from "valibot";
import { badInput, conflict, FreecodeError } from "../errors.ts";
import { checkEvent } from "../rollout/validate.ts";
import { checkStorableEvent } from "../storage/_events.ts";
import { checkId, checkMessage, checkNewMeta } from "../storage/_validate.ts";
import type { ReadIssue, StorageAdapter } from "../storage/contract.ts";
import { hasEventLog } from "../storage/has-event-log.ts";
import { importAtWork, startImport } from "../storage/import-at-work.ts";
import { checkProjectPath } from "../storage/project-key.ts";
import {
  type EventDraft,
  type EventRecord,
  type SessionMeta,
  SessionMetaSchema,
  type StoredMessage,
} from "../storage/records.ts";
import { refuseRepeats } from "../storage/repeated-messages.ts";
import { unreadableLog } from "../storage/unreadable-log.ts";
import { MAX_JSON_DEPTH, nestsAtMost } from "../util/json-depth.ts";
import { thisProcess } from "../util/lock.ts";
import { isCount, nonFinitePath } from "../util/number-schemas.ts";
import { pendingCompaction } from "./_compaction-plan.ts";
import { messageAsCommandsMake, metaAsCommandsMake } from "./_export-checks.ts";
import { newSessionId } from "./ids.ts";
import { getSession } from "./lifecycle.ts";

export const EXPORT_FORMAT = "freecode.session";
/** The document version this build writes and the newest it reads. */
export const EXPORT_VERSION = 1;

export interface ExportDocument {
  format: typeof EXPORT_FORMAT;
  version: number;
  /** When it was written (ms since the epoch). */
  exportedAt: number;
  meta: SessionMeta;
  messages: StoredMessage[];
  /** The session's context cache (files requested across turns), when it has one. */
  contextCache?: unknown;
  /** The rollout log as stored (`seq` order), when the export asked for it. */
  rollout?: EventRecord[];
}

/** Events are appended in batches this big on import (a long log is never one write). */
const EVENT_BATCH = 1000;

/** The bytes a JSON value takes in a line. */
const jsonBytes = (x: unknown) => Buffer.byteLength(JSON.stringify(x));

/**
 * The document for session `id`. A log line that cannot be read fails the export rather than
 * leaving it out silently (`store verify --repair` cuts a torn tail); so does a compaction a crash
 * left half done (`session compact` finishes it).
 */
export async function exportSession(
  store: StorageAdapter,
  id: string,
  options: { rollout?: boolean; now?: number } = {},
): Promise<ExportDocument> {
  const meta = await getSession(store, id);
  if (pendingCompaction(meta))
    throw conflict(
      `session ${meta.id} has a compaction in progress: run \`freecode session compact ${meta.id}\` first`,
    );
  // A copy whose import was cut off lacks part of its log: exported, it would pass for whole.
  const copied = meta.copiedFrom;
  if (copied?.incomplete) {
    if (importAtWork(meta.id, copied.by))
      throw conflict(
        `session ${meta.id} is being imported by process ${copied.by?.pid}: wait for it to finish`,
      );
    throw new FreecodeError(
      "check_failed",
      `session ${meta.id} is an import of session ${copied.id} that was stopped half way: it lacks part of its log; import the document again with --id ${meta.id} (it replaces this copy)`,
    );
  }
  const { messages, issues } = await store.readMessages(meta.id);
  if (issues.length > 0) throw unreadableLog(meta.id, issues, "message");
  refuseRepeats(meta.id, messages, "export");
  // A session has a message from its creation on: none is a log lost outside freecode (emptied, a
  // power cut under `fsync: never`), and the document would be one no import takes.
  if (messages.length === 0)
    throw new FreecodeError(
      "check_failed",
      meta.messageCount > 0
        ? `session ${meta.id} holds no message (its log was lost: its meta counts ${meta.messageCount}; \`freecode store verify\` reports it): a session export holds at least one, so no import would take this one`
        : `session ${meta.id} holds no message (its log was lost): a session export holds at least one, so no import would take this one; \`freecode session delete ${meta.id} --purge\` removes it`,
    );
  const contextCache = await store.getContextCache(meta.id);
  const doc: ExportDocument = {
    format: EXPORT_FORMAT,
    version: EXPORT_VERSION,
    exportedAt: options.now ?? Date.now(),
    meta,
    messages,
    ...(contextCache !== undefined ? { contextCache } : {}),
  };
  if (options.rollout) {
    const events: EventRecord[] = [];
    const bad: ReadIssue[] = [];
    for await (const r of store.readEvents(meta.id)) {
      if (r.event) events.push(r.event);
      else if (r.issue) bad.push(r.issue);
    }
    if (bad.length > 0) throw unreadableLog(meta.id, bad, "rollout");
    doc.rollout = events;
  }
  return doc;
}

/** The envelope, checked before the parts (which are checked one by one, to name the bad one). */
const Envelope = v.looseObject({
  format: v.string(),
  version: v.pipe(v.number(), v.integer(), v.minValue(1)),
  exportedAt: v.pipe(v.number(), v.finite()),
  meta: v.unknown(),
  messages: v.array(v.unknown()),
  contextCache: v.optional(v.unknown()),
  rollout: v.optional(v.array(v.unknown())),
});

/**
 * A checked document: every message, the meta and every event valid. `file` names it in errors.
 * `id` is the session id the document will be imported under (by default a new one's), for the
 * size of each event's line there.
 */
export function parseExportDocument(
  raw: unknown,
  file?: string,
  options: { id?: string } = {},
): ExportDocument {
  const at = (field: string) => ({ file, field });
  if (typeof raw !== "object" || raw === null || Array.isArray(raw))
    throw badInput("not a freecode session export: the document must be a JSON object", { file });
  // Before any check that recurses (valibot, the store's own): a hostile nesting overflows them.
  if (!nestsAtMost(raw, MAX_JSON_DEPTH + 4))
    throw badInput(`invalid session export: nested more than ${MAX_JSON_DEPTH} levels deep`, { file });
  const env = v.safeParse(Envelope, raw);
  if (!env.success) {
    const issue = env.issues[0];
    throw badInput(`invalid session export: ${issue.message}`, at(v.getDotPath(issue) ?? ""));
  }
  const d = env.output;
  if (d.format !== EXPORT_FORMAT)
    throw badInput(
      `not a freecode session export (format "${d.format}", expected "${EXPORT_FORMAT}")`,
      at("format"),
    );
  if (d.version > EXPORT_VERSION)
    throw badInput(
      `session export version ${d.version} is newer than this freecode reads (${EXPORT_VERSION}): upgrade freecode`,
      at("version"),
    );
  const meta = v.safeParse(SessionMetaSchema, d.meta);
  if (!meta.success) {
    const issue = meta.issues[0];
    throw badInput(`invalid session meta: ${issue.message}`, at(`meta.${v.getDotPath(issue) ?? ""}`));
  }
  // What the store would refuse on import, refused here: an upload is then a 400, not a link that
  // fails on every import.
  try {
    checkProjectPath(meta.output.projectPath);
  } catch (error) {
    throw badInput(`invalid session meta: ${(error as Error).message}`, at("meta.projectPath"));
  }
  // An empty title lists as nothing. (A relative project path is taken: an earlier importer stored
  // some, and their exports must import; importers now give such a transcript its folder.)
  if (meta.output.title.trim() === "")
    throw badInput("invalid session meta: title must not be empty", at("meta.title"));
  try {
    checkNewMeta(meta.output);
  } catch (error) {
    const field = (error as FreecodeError).source?.field;
    throw badInput(`invalid session meta: ${(error as Error).message}`, at(`meta.${field ?? ""}`));
  }
  const messages = d.messages.map((m, i) => {
    const bad = nonFinitePath(m);
    if (bad !== undefined)
      throw badInput(
        "invalid message: a number JSON cannot hold (NaN or ±Infinity)",
        at(`messages[${i}].${bad}`),
      );
    let stored: StoredMessage;
    try {
      stored = checkMessage(m, i);
    } catch (error) {
      if (!(error instanceof FreecodeError)) throw error;
      // The store's check names the field from the message's index: `[3].parts.0.type`.
      throw badInput(error.message, at(`messages${error.source?.field ?? `[${i}]`}`));
    }
    return messageAsCommandsMake(stored, i, at);
  });
  if (messages.length === 0)
    throw badInput(
      "a session export holds at least one message (there are no empty sessions)",
      at("messages"),
    );
  const ids = new Set<string>();
  const usageOf = new Set<string>();
  for (const [i, m] of messages.entries()) {
    if (ids.has(m.id)) throw badInput(`duplicate message id "${m.id}"`, at(`messages[${i}].id`));
    ids.add(m.id);
    // The store's rule, checked here so the error names the document: one usage per response.
    if (m.usage !== undefined && m.responseId !== undefined) {
      if (usageOf.has(m.responseId))
        throw badInput(
          `provider response ${m.responseId} already has usage on an earlier message`,
          at(`messages[${i}].usage`),
        );
      usageOf.add(m.responseId);
    }
  }
  countersOk(meta.output, at);
  let rollout: EventRecord[] | undefined;
  if (d.rollout) {
    let lastSeq = 0;
    const idBytes = jsonBytes(options.id ?? newSessionId());
    rollout = d.rollout.map((e, i) => {
      const checked = checkEvent(e);
      if (checked.kind === "invalid")
        throw badInput(checked.message, at(`rollout[${i}]${checked.field ? `.${checked.field}` : ""}`));
      const record = e as EventRecord;
      // What the store would refuse on import, refused here (an upload then took it, and its link
      // never imported): a time past a date's range (an older version stored some), a line too long.
      // Its line there holds the session id it is imported under and its seq there (i + 1) in
      // place of its own: the bytes those add, or take away, to its line as it is here.
      try {
        const restamp = idBytes + jsonBytes(i + 1) - jsonBytes(record.aggregateID) - jsonBytes(record.seq);
        checkStorableEvent(record, "", restamp);
      } catch (error) {
        if (!(error instanceof FreecodeError)) throw error;
        throw badInput(error.message, at(`rollout[${i}]${error.source?.field ?? ""}`));
      }
      if (record.seq <= lastSeq)
        throw badInput(`events out of order: seq ${record.seq} after ${lastSeq}`, at(`rollout[${i}].seq`));
      lastSeq = record.seq;
      return record;
    });
  }
  return {
    format: EXPORT_FORMAT,
    version: d.version,
    exportedAt: d.exportedAt,
    meta: metaAsCommandsMake(meta.output, at),
    messages,
    ...(d.contextCache !== undefined ? { contextCache: d.contextCache } : {}),
    ...(rollout ? { rollout } : {}),
  };
}

/** The meta's counters and token totals are whole numbers ≥ 0 (the store adds to them). */
function countersOk(meta: SessionMeta, at: (field: string) => { file?: string; field: string }): void {
  const counts: [string, unknown][] = [
    ["turnCount", meta.turnCount],
    ["messageCount", meta.messageCount],
    ...Object.entries(meta.tokens ?? {}).map(([k, n]): [string, unknown] => [`tokens.${k}`, n]),
  ];
  for (const [field, n] of counts)
    if (n !== undefined && !isCount(n))
      throw badInput(
        `invalid session meta: ${field} must be a whole number ≥ 0 (got ${String(n)})`,
        at(`meta.${field}`),
      );
}

/**
 * Recreate `doc` (checked with `parseExportDocument` first) as a new session: id `options.id`, or a
 * new one; `conflict` if that id is taken. Meta, messages, context cache and rollout events (ids
 * and timestamps; `seq` numbered again from 1, in order) come through as exported; a `running`
 * session arrives `idle` (its process is on the other machine).
 */
export async function importSessionDocument(
  store: StorageAdapter,
  raw: unknown,
  options: { id?: string; file?: string; now?: number } = {},
): Promise<SessionMeta> {
  const doc = parseExportDocument(raw, options.file, options.id !== undefined ? { id: options.id } : {});
  // Made by an older version from a copy whose import was cut off: imported, it would pass for whole.
  if (doc.meta.copiedFrom?.incomplete)
    throw new FreecodeError(
      "check_failed",
      `the document is an export of session ${doc.meta.id}, an import of ${doc.meta.copiedFrom.id} that was stopped half way: it lacks part of its log; export the original session again`,
      options.file ? { source: { file: options.file, field: "meta.copiedFrom.incomplete" } } : {},
    );
  const id = options.id === undefined ? newSessionId(options.now) : checkId(options.id);
  const cur = await store.getMeta(id);
  // An import of this id cut off by a killed process: made again from the start. One still at work
  // (a second import of the same document under the same id) is left to finish.
  const by = cur?.copiedFrom?.incomplete ? cur.copiedFrom.by : undefined;
  if (by && importAtWork(id, by))
    throw conflict(`session ${id} is being imported by process ${by.pid}: wait for it to finish`);
  if (cur?.copiedFrom?.incomplete) await store.purgeSession(id);
  else if (cur) throw conflict(`session ${id} already exists`);
  // Taken by a log with no session (a rollout-only recording), whether the document carries a log
  // or not: without one, the new session took over events that were never its own.
  if (await hasEventLog(store, id))
    throw conflict(`a rollout log for ${id} already exists (its events are not this document's)`);
  const { owner: _o, pendingCompaction: _p, ...rest } = doc.meta;
  const copiedFrom = { id: doc.meta.id, exportedAt: doc.exportedAt };
  const more = doc.contextCache !== undefined || (doc.rollout?.length ?? 0) > 0;
  const meta: SessionMeta = {
    ...rest,
    id,
    status: rest.status === "running" ? "idle" : rest.status,
    copiedFrom: more ? { ...copiedFrom, incomplete: true, by: thisProcess() } : copiedFrom,
  };
  await store.createSession(meta, doc.messages);
  const done = startImport(id);
  try {
    if (doc.contextCache !== undefined) await store.putContextCache(id, doc.contextCache);
    const events = doc.rollout ?? [];
    for (let i = 0; i < events.length; i += EVENT_BATCH) {
      const batch = events
        .slice(i, i + EVENT_BATCH)
        .map(({ seq: _s, aggregateID: _a, ...e }) => e as EventDraft);
      try {
        await store.appendEvents(id, batch);
      } catch (error) {
        // The store names an event by its place in the batch (`[500]`): named in the document.
        if (!(error instanceof FreecodeError) || error.code !== "bad_input") throw error;
        const place = /^\[(\d+)\](.*)$/s.exec(error.source?.field ?? "");
        if (!place) throw error;
        throw badInput(error.message, {
          ...(options.file ? { file: options.file } : {}),
          field: `rollout[${i + Number(place[1])}]${place[2]}`,
        });
      }
    }
    if (more) await store.updateMeta(id, (m) => ({ ...m, copiedFrom }));
  } catch (error) {
    await store.purgeSession(id).catch(() => false);
    throw error;
  } finally {
    done();
  }
  return (await store.getMeta(id)) ?? meta;
}
