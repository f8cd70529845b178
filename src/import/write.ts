/**
 * Persisting imported sessions through the storage contract. Everything merges by stable id: a
 * message already stored is skipped (or patched when it changed — a tool result arrived after its
 * call was imported), an event already in the rollout is not appended again. So re-importing is a
 * no-op, a crash between two writes heals on the next run, and a lost import state costs a re-read,
 * never a duplicate.
 */

import { dirname, isAbsolute } from "node:path";
import * as v from "valibot";
import { EventDraftSchema, isValidDraft } from "../rollout/validate.ts";
import { checkStorableEvent } from "../storage/_events.ts";
import { checkMessageSize, isValidMessage } from "../storage/_message-check.ts";
import { foldMessagesIntoMeta, usageRepeatMessage, usageRepeats } from "../storage/_meta-fold.ts";
import type { StorageAdapter } from "../storage/contract.ts";
import { isWindowsPath } from "../storage/project-key.ts";
import { type EventRecord, MessageSchema, type SessionMeta, type StoredMessage } from "../storage/records.ts";
import { readForRewrite } from "../storage/rewrite-read.ts";
import { messageIdFor } from "./ids.ts";
import { normalizeProjectPath } from "./project-path.ts";
import { redactDeep } from "./redact.ts";
import { saysLess } from "./says-less.ts";
import type { ImportedSession } from "./types.ts";

/**
 * What storage holds of a session: message ids (with a content hash once one was needed — hashing
 * every message of a large import would cost as much as writing it), and event ids.
 */
export interface Known {
  messages: Map<string, string | null>;
  events: Set<string>;
  hashed?: boolean;
  /** The highest event `seq` seen in storage (0: none): what another process appended since is
   * read from there. */
  seq: number;
}

/** `gone`: a session this read had written, or had to find stored, was deleted meanwhile (see
 * `writeSession`'s `mustExist`): nothing was written. */
export type WriteStatus = "created" | "updated" | "unchanged" | "empty" | "gone";

export interface WriteOutcome {
  status: WriteStatus;
  messages: number;
  events: number;
  /** Records derived from entries of a shape the importer did not foresee that are not valid
   * records: left out (the rest of the session is written), with what is wrong with each. */
  rejected: { what: string; message: string }[];
  /** What was written other than as derived (a repeated message id renamed, a folder standing in for a missing project), said once each. */
  notes: string[];
}

/**
 * Two messages of one derivation with one id (a transcript that names two entries alike, or ids
 * damaged into the same value) would make the store refuse the batch: the later one is stored under
 * `<id>+2` (then `+3`, …), the same way on every run, and a note says so.
 */
function distinctIds(messages: StoredMessage[]): string[] {
  const notes: string[] = [];
  const ids = new Set<string>();
  for (const [i, m] of messages.entries()) {
    if (!ids.has(m.id)) {
      ids.add(m.id);
      continue;
    }
    let n = 2;
    while (ids.has(messageIdFor(`${m.id}+${n}`))) n++;
    const id = messageIdFor(`${m.id}+${n}`);
    ids.add(id);
    messages[i] = { ...m, id };
    notes.push(`message id ${m.id} repeats: the later message is stored as ${id}`);
  }
  return notes;
}

/**
 * The store's rule, kept rather than failing the session: a provider response carries usage on one
 * message. A transcript that names one response twice (a damaged id) would break it; the later
 * message keeps its content and loses the usage, and the note says so.
 */
function oneUsagePerResponse(
  messages: StoredMessage[],
  stored: string | undefined,
  rejected: WriteOutcome["rejected"],
): void {
  for (const i of usageRepeats({ usageResponseId: stored }, messages)) {
    const { usage: _, ...rest } = messages[i]!;
    rejected.push({ what: `usage of message ${rest.id}`, message: usageRepeatMessage(rest.responseId!) });
    messages[i] = rest;
  }
}

/** Keep `x` if `valid`; else note what is wrong with it (the schema's first issue) and drop it. */
function keepValid(
  x: unknown,
  valid: (x: unknown) => boolean,
  schema: v.GenericSchema,
  what: string,
  rejected: WriteOutcome["rejected"],
): boolean {
  if (valid(x)) return true;
  const r = v.safeParse(schema, x);
  if (r.success) return true;
  const field = v.getDotPath(r.issues[0]);
  rejected.push({ what, message: `${r.issues[0].message}${field ? ` (field ${field})` : ""}` });
  return false;
}

/**
 * Whether `check` (the store's own, for one record) passes; else the record is left out and
 * reported, and the rest of the session is written. The store checks a batch whole: a message over
 * its line limit (a tool output of megabytes) made it refuse the whole batch, and an event over its
 * size or depth (a tool's arguments nested a thousand levels), refused when the events were
 * appended after the session was made, left a session without its rollout log for good.
 */
function storable(check: () => void, what: string, rejected: WriteOutcome["rejected"]): boolean {
  try {
    check();
    return true;
  } catch (error) {
    rejected.push({ what, message: (error as Error).message });
    return false;
  }
}

const digest = (m: StoredMessage) => Bun.hash(JSON.stringify(m)).toString(36);

async function loadKnown(adapter: StorageAdapter, id: string, exists: boolean): Promise<Known> {
  const known: Known = { messages: new Map(), events: new Set(), seq: 0 };
  if (exists) await hashStored(adapter, id, known);
  await readNewEvents(adapter, id, known);
  return known;
}

/** Add the ids of events stored after `known.seq` (all of them at first). */
async function readNewEvents(adapter: StorageAdapter, id: string, known: Known): Promise<void> {
  for await (const read of adapter.readEvents(id, { fromSeq: known.seq + 1 })) {
    if (!read.event) continue;
    known.events.add(read.event.id);
    known.seq = Math.max(known.seq, read.event.seq);
  }
}

/**
 * A cache kept across watch passes may be behind storage: another import (or a second watch) may
 * have written the session since. Its messages are loaded again when their count moved, and events
 * stored past the last known `seq` are read, so ids another process wrote are not written twice.
 * Only when this write has events to append: a pass that changes nothing reads nothing.
 */
async function catchUp(
  adapter: StorageAdapter,
  id: string,
  known: Known,
  cur: SessionMeta | undefined,
  s: ImportedSession,
): Promise<void> {
  if (cur && cur.messageCount !== known.messages.size) await hashStored(adapter, id, known);
  if (s.events.some((e) => e.id === undefined || !known.events.has(e.id)))
    await readNewEvents(adapter, id, known);
}

async function hashStored(adapter: StorageAdapter, id: string, known: Known): Promise<void> {
  const { messages } = await adapter.readMessages(id);
  known.messages.clear();
  for (const m of messages) known.messages.set(m.id, digest(m));
  known.hashed = true;
}

/** Events just appended: their ids (when the cache outlives the pass) and the last `seq`. */
function noteStored(known: Known, stored: EventRecord[], record: boolean): void {
  if (record) for (const e of stored) known.events.add(e.id);
  for (const e of stored) known.seq = Math.max(known.seq, e.seq);
}

function newMeta(s: ImportedSession): SessionMeta {
  const m = s.meta;
  return {
    id: m.id,
    title: m.title,
    titleSource: m.titleSource,
    projectPath: normalizeProjectPath(m.projectPath),
    ...(m.provider ? { provider: m.provider } : {}),
    ...(m.model ? { model: m.model } : {}),
    status: "idle",
    createdAt: m.createdAt,
    updatedAt: m.updatedAt,
    turnCount: 0,
    messageCount: 0,
    ...(m.parentId ? { parentId: m.parentId } : {}),
    source: { ...m.source, title: m.title },
  };
}

/**
 * The project a new session is stored under: the recorded working directory, or the transcript's
 * folder (said in `said`) where that is none a store can key or `--project` can find: none at all
 * (the files store refused an empty one: the session was lost), a relative path (to a directory the
 * transcript does not name), or one holding a NUL (a damaged byte: the store refuses it).
 */
function projectOf(recorded: string, transcript: string, said: string[]): string {
  const folder = dirname(transcript);
  if (!recorded) {
    said.push(`no working directory recorded: the transcript's folder stands in as its project (${folder})`);
    return folder;
  }
  if (recorded.includes("\0")) {
    said.push(
      `working directory ${JSON.stringify(recorded)} holds a NUL byte: the transcript's folder stands in as its project (${folder})`,
    );
    return folder;
  }
  if (!isAbsolute(recorded) && !isWindowsPath(recorded)) {
    said.push(
      `working directory "${recorded}" is not an absolute path: the transcript's folder stands in as its project (${folder})`,
    );
    return folder;
  }
  return recorded;
}

/**
 * Fold in what an import learned, without undoing a rename the user made in freecode. `createdAt`
 * moves back to the earliest time read (a clock set back mid-session times a later line first),
 * so a transcript read in parts or in several imports gives what one read of it gives (a read
 * that met no time at all says 0: nothing known).
 */
function mergeMeta(cur: SessionMeta, s: ImportedSession): SessionMeta {
  const m = s.meta;
  const renamedHere = cur.title !== (cur.source as { title?: string } | undefined)?.title;
  const next: SessionMeta = {
    ...cur,
    ...(renamedHere ? {} : { title: m.title, titleSource: m.titleSource }),
    ...(m.model ? { model: m.model } : {}),
    ...(m.provider ? { provider: m.provider } : {}),
    ...(m.parentId ? { parentId: m.parentId } : {}),
    createdAt: m.createdAt > 0 ? Math.min(cur.createdAt, m.createdAt) : cur.createdAt,
    updatedAt: Math.max(cur.updatedAt, m.updatedAt),
    source: { ...m.source, title: m.title },
  };
  if (!cur.projectPath && m.projectPath) next.projectPath = normalizeProjectPath(m.projectPath);
  return next;
}

/**
 * A whole document that recorded messages a rewind then dropped (Gemini's `$rewindTo`): the
 * session's turns and tokens are counted over those and `messages` (the conversation as it
 * stands) — what its events say was done and spent, whenever the recording was imported. Counted
 * from scratch each time, so an import before the rewind (which stored them) and one after (which
 * never did) agree. Nothing when the document dropped nothing.
 */
function withdrawnCounters(
  s: ImportedSession,
  messages: StoredMessage[],
): Pick<SessionMeta, "turnCount" | "lastTurnAt" | "tokens"> | undefined {
  if (s.mode !== "full" || !s.withdrawn?.length) return undefined;
  const zero = { turnCount: 0, updatedAt: 0, tokens: undefined, lastTurnAt: undefined } as const;
  const all = [...s.withdrawn, ...messages].sort((a, b) => a.timestamp - b.timestamp);
  const { turnCount, lastTurnAt, tokens } = foldMessagesIntoMeta({ ...newMeta(s), ...zero }, all);
  return { turnCount, ...(lastTurnAt !== undefined ? { lastTurnAt } : {}), ...(tokens ? { tokens } : {}) };
}

/** `m`, marked interrupted when its id is in `marks` (a new object; `m` itself when nothing changes). */
const interrupted = (m: StoredMessage, marks: Set<string>): StoredMessage =>
  marks.has(m.id) && m.interrupted !== true ? { ...m, interrupted: true } : m;

type Totals = NonNullable<SessionMeta["tokens"]>;
const usageTotals = (ms: StoredMessage[]): Totals => {
  const t: Totals = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, reasoning: 0 };
  for (const m of ms) {
    const u = m.usage;
    if (!u) continue;
    t.input += u.inputTokens ?? 0;
    t.output += u.outputTokens ?? 0;
    t.cacheRead += u.cacheReadInputTokens ?? 0;
    t.cacheWrite += u.cacheCreationInputTokens ?? 0;
    t.reasoning = (t.reasoning ?? 0) + (u.reasoningTokens ?? 0);
  }
  return t;
};

/** Usage present in `after` but not in `before` (a streamed response that got its final usage). */
function usageGain(before: StoredMessage[], after: StoredMessage[]): Totals | undefined {
  const a = usageTotals(before);
  const b = usageTotals(after);
  const gain: Totals = {
    input: b.input - a.input,
    output: b.output - a.output,
    cacheRead: b.cacheRead - a.cacheRead,
    cacheWrite: b.cacheWrite - a.cacheWrite,
    reasoning: (b.reasoning ?? 0) - (a.reasoning ?? 0),
  };
  return Object.values(gain).some((n) => n !== 0) ? gain : undefined;
}

function addTokens(meta: SessionMeta, g: Totals): SessionMeta {
  const t = meta.tokens ?? { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };
  return {
    ...meta,
    tokens: {
      input: t.input + g.input,
      output: t.output + g.output,
      cacheRead: t.cacheRead + g.cacheRead,
      cacheWrite: t.cacheWrite + g.cacheWrite,
      ...(t.reasoning !== undefined || g.reasoning
        ? { reasoning: (t.reasoning ?? 0) + (g.reasoning ?? 0) }
        : {}),
    },
  };
}

/**
 * A session compacted here (it has a summary) no longer holds the messages its compaction dropped,
 * which came before every message it kept. Read again — a whole document, as OpenCode and Gemini
 * write one, or a transcript re-read from its start — a message the log lacks that comes before one
 * it holds is one of those: not new. Taken as new, they were appended after the kept ones, the
 * summary still in place, and their turns and tokens counted twice. Removed from `derived` in place.
 */
function leaveCompactedOut(derived: StoredMessage[], stored: Map<string, unknown>): void {
  const last = derived.findLastIndex((m) => stored.has(m.id));
  if (last <= 0) return;
  let kept = 0;
  for (const [i, m] of derived.entries()) if (i > last || stored.has(m.id)) derived[kept++] = m;
  derived.length = kept;
}

/**
 * What `writeSession` notes down in its cache of what it wrote: `all` (watch mode, whose cache
 * outlives a pass: anything may be derived again) or `message-ids` (the parts of one pass: a
 * message may come back changed — a patch, so its id must be known — but is never hashed, and an
 * event never comes twice; a large import would pay for hashing and indexing for nothing).
 */
export type WriteNotes = "all" | "message-ids";

/**
 * Write one imported session (or a part of it). `cache` keeps what storage holds between calls,
 * so neither a grown transcript in watch mode nor the next part of a long one re-reads the whole
 * stored session.
 */
export async function writeSession(
  adapter: StorageAdapter,
  s: ImportedSession,
  cache?: Map<string, Known>,
  notes: WriteNotes = "all",
  /** The session was read with `--redact` (a shorter copy is then judged masked alike). */
  redacted = false,
  /**
   * The session must be stored: an earlier part of this read wrote it, or the read goes on from
   * where an earlier one stopped. Missing, it was deleted (`--purge`, gc) while this import ran;
   * made again from this part, it held only the rest of the transcript, for good (the file counted
   * as read). So nothing is written (`gone`).
   */
  mustExist = false,
): Promise<WriteOutcome> {
  const record = cache !== undefined && notes === "all";
  const id = s.meta.id;
  const cur = await adapter.getMeta(id);
  if (!cur && mustExist) {
    cache?.delete(id);
    return { status: "gone", messages: 0, events: 0, rejected: [], notes: [] };
  }
  let known = cache?.get(id);
  if (!known) {
    known = await loadKnown(adapter, id, cur !== undefined);
    cache?.set(id, known);
  } else if (record) await catchUp(adapter, id, known, cur, s);
  const rejected: WriteOutcome["rejected"] = [];
  const derived = [...s.changed, ...s.messages].filter(
    (m) =>
      keepValid(m, isValidMessage, MessageSchema, `message ${String(m.id)}`, rejected) &&
      storable(() => checkMessageSize(m), `message ${m.id}`, rejected),
  );
  const said = distinctIds(derived);
  if (cur?.summary !== undefined) leaveCompactedOut(derived, known.messages);
  // A message derived again (a full document, or a re-read after a lost state) is compared by
  // content; that needs the stored messages' hashes, loaded once.
  if (!known.hashed && s.messages.some((m) => known!.messages.has(m.id)))
    await hashStored(adapter, id, known);
  const fresh: StoredMessage[] = [];
  const patched = new Map<string, StoredMessage>();
  for (const m of derived) {
    const d = known.messages.get(m.id);
    if (d === undefined) fresh.push(m);
    else if (d === null || d !== digest(m)) patched.set(m.id, m);
  }
  oneUsagePerResponse(fresh, cur?.usageResponseId, rejected);
  // A full document that dropped messages (a rewind) replaces the log; the rollout keeps history.
  const derivedIds = new Set(derived.map((m) => m.id));
  const dropped = s.mode === "full" && [...known.messages.keys()].some((k) => !derivedIds.has(k));
  const events = s.events.filter(
    (e) =>
      (e.id === undefined || !known.events.has(e.id)) &&
      // Checked as a draft: the store stamps `seq` and the session id.
      keepValid(e, isValidDraft, EventDraftSchema, `event ${e.id}`, rejected) &&
      // What the store adds to the line: `seq` (at most 32 bytes) and the session's id.
      storable(() => checkStorableEvent(e, `event ${e.id}`, 64 + id.length), `event ${e.id}`, rejected),
  );
  let status: WriteStatus = "unchanged";

  if (!cur) {
    // Nothing to store yet: a part of a transcript before its first message (its events wait in the
    // log for the session the next part makes). A whole document is all there is: one whose every
    // message a rewind took back is still a session, with its events (as an import made before the
    // rewind left it), not a log no session names.
    if (fresh.length === 0 && (s.mode !== "full" || events.length === 0)) {
      if (events.length > 0) noteStored(known, await adapter.appendEvents(id, events), record);
      return { status: "empty", messages: 0, events: events.length, rejected, notes: said };
    }
    const meta = newMeta(s);
    meta.projectPath = projectOf(meta.projectPath, s.meta.source.path, said);
    // A rewind's messages count in the turns and tokens, as their events do (see `withdrawnCounters`).
    await adapter.createSession(
      { ...foldMessagesIntoMeta(meta, fresh), ...withdrawnCounters(s, fresh) },
      fresh,
    );
    status = "created";
  } else {
    const marks = new Set(s.interrupted ?? []);
    if (patched.size > 0 || dropped || marks.size > 0) {
      const { messages: stored } = await readForRewrite(adapter, id, "update");
      // A message read again from an older, shorter copy of the transcript is not a change; nor
      // is one read with --redact from such a copy (less than the stored one, masked alike).
      const patchOf = (m: StoredMessage) => {
        const p = patched.get(m.id);
        if (!p || s.mode === "full") return p ?? m;
        if (saysLess(p, m)) return m;
        if (!redacted) return p;
        const masked = redactDeep(m);
        return saysLess(p, masked) && JSON.stringify(p) !== JSON.stringify(masked) ? m : p;
      };
      const next = dropped
        ? derived.filter((m) => !fresh.includes(m))
        : stored.map((m) => interrupted(patchOf(m), marks));
      if (dropped || next.some((m, i) => m !== stored[i])) {
        await adapter.replaceMessages(id, next, { ifMessageCount: stored.length });
        // A replace keeps the token totals as history: add the usage the patched messages gained.
        const gained = usageGain(stored, next);
        if (gained) {
          // And the last response with usage is what the one-usage-per-response rule checks against.
          const last = next.findLast((m) => m.usage && m.responseId !== undefined)?.responseId;
          await adapter.updateMeta(id, (meta) => ({
            ...addTokens(meta, gained),
            ...(last !== undefined ? { usageResponseId: last } : {}),
          }));
        }
        if (record) {
          known.messages.clear();
          for (const m of next) known.messages.set(m.id, digest(m));
          known.hashed = true;
        } else if (cache) {
          // What is stored now: a later part may change these messages again (or back).
          for (const [i, m] of next.entries())
            if (m !== stored[i]) known.messages.set(m.id, known.hashed ? digest(m) : null);
        }
        status = "updated";
      }
    }
    if (fresh.length > 0) {
      await adapter.appendMessages(id, fresh);
      status = "updated";
    }
    // A part of a longer read leaves the meta to the read's last write (one meta rewrite, not one
    // per part: its `updatedAt` moves with every part).
    const latest = s.partial ? undefined : ((await adapter.getMeta(id)) ?? cur);
    const merged = (m: SessionMeta) => ({ ...mergeMeta(m, s), ...withdrawnCounters(s, derived) });
    if (latest && JSON.stringify(merged(latest)) !== JSON.stringify(latest)) {
      await adapter.updateMeta(id, merged);
      status = "updated";
    }
  }
  if (record) for (const m of fresh) known.messages.set(m.id, known.hashed ? digest(m) : null);
  else if (cache) for (const m of fresh) known.messages.set(m.id, null);
  if (events.length > 0) {
    noteStored(known, await adapter.appendEvents(id, events), record);
    status = status === "created" ? "created" : "updated";
  }
  return {
    status,
    messages: fresh.length + patched.size,
    events: events.length,
    rejected,
    notes: said,
  };
}
