/**
 * The json adapter: everything in one `state/store.json`, the slow fallback that always works (no
 * native code, no WASM, one readable file). The file is rewritten atomically; between rewrites each
 * write lands as one line in `store.json.journal`, and a lock with reload-on-change keeps several
 * processes from losing each other's updates (`_image.ts`). Listing and search scan: unindexed.
 */
import { join } from "node:path";
import * as v from "valibot";
import { badInput, conflict, notFound } from "../../errors.ts";
import { homePaths } from "../../home.ts";
import { stampEvents } from "../_events.ts";
import { refuseGivenIds, wantsIdCheck } from "../_given-ids.ts";
import { applyListQuery } from "../_list.ts";
import { checkUsageRule, foldMessagesIntoMeta, metaAfterReplace } from "../_meta-fold.ts";
import {
  checkId,
  checkListQuery,
  checkMessages,
  checkMeta,
  checkNewMeta,
  checkSessionId,
  contextCacheText,
  firstSeq,
} from "../_validate.ts";
import type { AdapterFactory, ReadIssue, StorageAdapter } from "../contract.ts";
import {
  type EventRecord,
  MessageSchema,
  type SessionMeta,
  SessionMetaSchema,
  type StoredMessage,
} from "../records.ts";
import { type ImageFormat, JournaledImage } from "./_image.ts";
import { checkCount } from "./_sql-core.ts";

/** The file of the json adapter under `home`. */
export const jsonStorePath = (home: string) => join(homePaths(home).state, "store.json");

const SessionEntrySchema = v.object({
  meta: v.optional(SessionMetaSchema),
  messages: v.array(v.unknown()),
  events: v.array(v.looseObject({ seq: v.number() })),
  contextCache: v.optional(v.unknown()),
});
/**
 * The store's envelope; its `sessions` are checked entry by entry (`decode`): a valibot record
 * leaves out keys such as `__proto__` and `constructor`, valid session ids whose sessions would
 * vanish on the next read.
 */
const StoreSchema = v.object({
  version: v.literal(1),
  gen: v.number(),
  sessions: v.custom<Record<string, unknown>>(
    (x) => typeof x === "object" && x !== null && !Array.isArray(x),
    "sessions must be an object",
  ),
});
type Entry = v.InferOutput<typeof SessionEntrySchema> & { events: EventRecord[] };
type Store = { version: 1; gen: number; sessions: Record<string, Entry> };

/** One journaled change; replaying them in order rebuilds the store. */
type Op =
  | ["meta", string, SessionMeta]
  | ["append" | "replace", string, StoredMessage[]]
  | ["events", string, EventRecord[]]
  | ["cache", string, unknown]
  | ["purge", string];

/** What each operation carries: a journal line that is not one of these does not apply. */
const OP_PAYLOADS: Record<string, (x: unknown) => boolean> = {
  meta: (x) => typeof x === "object" && x !== null && !Array.isArray(x),
  append: Array.isArray,
  replace: Array.isArray,
  events: Array.isArray,
  cache: () => true,
  purge: () => true,
};

/**
 * Apply one journalled operation. One of another kind or shape (a damaged byte: `["oeta", …]`) is
 * refused, so the journal line is reported as corrupt: ignored, it dropped a session's meta unsaid,
 * and the next write folded the loss into the store for good.
 */
function apply(store: Store, op: Op): void {
  const valid = Array.isArray(op) && typeof op[1] === "string" && OP_PAYLOADS[op[0]]?.(op[2]) === true;
  if (!valid) throw new Error(`an operation freecode does not write: ${JSON.stringify(op).slice(0, 80)}`);
  const id = op[1];
  const entry = (store.sessions[id] ??= { messages: [], events: [] });
  switch (op[0]) {
    case "meta":
      entry.meta = op[2];
      break;
    case "append":
      entry.messages.push(...op[2]);
      break;
    case "replace":
      entry.messages = op[2];
      break;
    case "events":
      entry.events.push(...op[2]);
      break;
    case "cache":
      entry.contextCache = op[2];
      break;
    case "purge":
      delete store.sessions[id];
      break;
  }
}

const format: ImageFormat<Store> = {
  // Sessions are keyed by id in an object without a prototype: `sessions["toString"]` or
  // `sessions["__proto__"]` of a plain object is Object.prototype's, not a session.
  empty: () => ({ version: 1, gen: 0, sessions: Object.create(null) }),
  decode(bytes, file) {
    let raw: unknown;
    try {
      raw = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
    } catch (error) {
      throw badInput(`not a JSON store: ${(error as Error).message}`, { file }, error);
    }
    const fail = (issue: v.BaseIssue<unknown>, at = "") => {
      const path = v.getDotPath(issue);
      throw badInput(`invalid JSON store: ${issue.message}`, {
        file,
        field: [at, path].filter(Boolean).join(".") || undefined,
      });
    };
    const r = v.safeParse(StoreSchema, raw);
    if (!r.success) return fail(r.issues[0]);
    const sessions: Record<string, Entry> = Object.create(null);
    // `Object.keys` of a parsed object lists an own `__proto__` like any other key.
    for (const id of Object.keys(r.output.sessions)) {
      const entry = v.safeParse(SessionEntrySchema, r.output.sessions[id]);
      if (!entry.success) return fail(entry.issues[0], `sessions.${id}`);
      sessions[id] = entry.output as Entry;
    }
    return { version: 1, gen: r.output.gen, sessions };
  },
  encode(store, gen) {
    store.gen = gen;
    return Buffer.from(JSON.stringify(store));
  },
  gen: (store) => store.gen,
  replay(store, entries) {
    for (const op of entries as Op[]) apply(store, op);
  },
};

const clone = <T>(value: T): T => (value === undefined ? value : structuredClone(value));

const factory: AdapterFactory = (options) => {
  const file = jsonStorePath(options.home);
  const image = new JournaledImage(file, format, options.fsync ?? "batch");
  let closed = false;
  const read = async <T>(fn: (s: Store) => T) => image.read(fn);
  /** Compute the ops from the current store, journal them, then apply them. */
  const write = async <T>(fn: (s: Store) => { ops: Op[]; result: T }) =>
    image.write((store, commit) => {
      const { ops, result } = fn(store);
      if (ops.length) {
        commit(ops);
        // Copies: the state must not share objects with callers, who may mutate theirs later.
        for (const op of structuredClone(ops)) apply(store, op);
      }
      return result;
    });
  const metaOf = (s: Store, id: string) => {
    const meta = s.sessions[id]?.meta;
    if (!meta) throw notFound(`no session ${id}`);
    return meta;
  };

  const adapter: StorageAdapter = {
    name: "json",
    location: file,
    capabilities: { crossProcess: true, fullTextSearch: false, persistent: true },

    async createSession(metaIn, messagesIn) {
      const messages = checkMessages(messagesIn);
      const meta = { ...checkNewMeta(metaIn), messageCount: messages.length };
      checkUsageRule({}, messages);
      await write((s) => {
        if (s.sessions[meta.id]?.meta) throw conflict(`session ${meta.id} already exists`);
        return {
          ops: [
            ["meta", meta.id, meta],
            ["replace", meta.id, messages],
          ],
          result: undefined,
        };
      });
    },

    getMeta: (id) => read((s) => clone(s.sessions[checkId(id)]?.meta)),

    async updateMeta(id, update) {
      checkId(id);
      return write((s) => {
        // The id is not the callback's to change.
        const next = checkMeta({ ...update(structuredClone(metaOf(s, id))), id });
        return { ops: [["meta", id, next]], result: next };
      });
    },

    listSessions: (query) =>
      read((s) => {
        checkListQuery(query);
        const page = applyListQuery(
          Object.values(s.sessions).flatMap((e) => (e.meta ? [e.meta] : [])),
          query,
        );
        return { ...page, items: page.items.map((m) => structuredClone(m)) };
      }),

    async purgeSession(id, options) {
      checkId(id);
      return write((s) => {
        const meta = s.sessions[id]?.meta;
        const why = meta && options?.unless?.(structuredClone(meta));
        if (why) throw conflict(why);
        return s.sessions[id] ? { ops: [["purge", id]], result: true } : { ops: [], result: false };
      });
    },

    async appendMessages(id, messagesIn, options) {
      checkId(id);
      await write((s) => {
        // A missing session first, then the messages: the order every adapter reports them in.
        const meta = metaOf(s, id);
        const messages = checkMessages(messagesIn);
        // Only when a caller gave ids: listed for every append, the ids made each one cost the
        // session's length.
        if (wantsIdCheck(options)) {
          const stored = (s.sessions[id]?.messages ?? []).map((m) =>
            String((m as { id?: unknown } | null)?.id),
          );
          refuseGivenIds(id, stored, messages, options);
        }
        checkUsageRule(meta, messages);
        const ops: Op[] = [
          ["append", id, messages],
          ["meta", id, foldMessagesIntoMeta(meta, messages)],
        ];
        return { ops, result: undefined };
      });
    },

    async readMessages(id) {
      checkId(id);
      return read((s) => {
        metaOf(s, id);
        const messages: StoredMessage[] = [];
        const issues: ReadIssue[] = [];
        (s.sessions[id]?.messages ?? []).forEach((m, i) => {
          const r = v.safeParse(MessageSchema, m);
          if (r.success) messages.push(r.output);
          else
            issues.push({
              file,
              line: i + 1,
              message: `messages[${i}]: ${r.issues[0].message}`,
              torn: false,
            });
        });
        return { messages, issues };
      });
    },

    async replaceMessages(id, messagesIn, options = {}) {
      checkId(id);
      await write((s) => {
        const meta = metaOf(s, id);
        checkCount(meta, options.ifMessageCount);
        const messages = checkMessages(messagesIn);
        const ops: Op[] = [
          ["replace", id, messages],
          ["meta", id, metaAfterReplace(meta, messages)],
        ];
        return { ops, result: undefined };
      });
    },

    // Not `async`: the write's own promise, settled as soon as it is done or refused (see _sql-core.ts).
    appendEvents(sessionId, drafts) {
      try {
        checkSessionId(sessionId);
      } catch (error) {
        return Promise.reject(error);
      }
      return write((s) => {
        const events = s.sessions[sessionId]?.events ?? [];
        const records = stampEvents(sessionId, events[events.length - 1]?.seq ?? 0, drafts);
        return { ops: records.length ? [["events", sessionId, records]] : [], result: records };
      });
    },

    async *readEvents(sessionId, options = {}) {
      checkId(sessionId);
      const from = firstSeq(options.fromSeq);
      // A snapshot of the array: later appends by this process do not shift the iteration.
      const events = await read((s) => structuredClone(s.sessions[sessionId]?.events ?? []));
      for (const event of events) if (event.seq >= from) yield { event };
    },

    eventLogStamp: (sessionId) =>
      read((s) => {
        const events = s.sessions[checkId(sessionId)]?.events ?? [];
        if (events.length === 0) return undefined;
        return `${events.at(-1)!.seq}:${events.length}:${events[0]!.id}`;
      }),

    lastEventAt: (sessionId) =>
      read((s) => {
        const t: unknown = s.sessions[checkId(sessionId)]?.events.at(-1)?.timestamp;
        return typeof t === "number" ? t : undefined;
      }),

    listEventLogs: () =>
      read((s) =>
        Object.entries(s.sessions)
          .filter(([, e]) => e.events.length > 0)
          .map(([id]) => id)
          .sort(),
      ),

    getContextCache: (id) =>
      read((s) => {
        metaOf(s, checkId(id));
        return clone(s.sessions[id]?.contextCache);
      }),

    async putContextCache(id, cache) {
      checkId(id);
      // Through JSON once, so what is stored is exactly what a reload will read back.
      const copy = JSON.parse(contextCacheText(cache)) as unknown;
      await write((s) => {
        metaOf(s, id);
        return { ops: [["cache", id, copy]], result: undefined };
      });
    },

    async close() {
      if (closed) return;
      closed = true;
      image.close();
    },
  };
  return adapter;
};

export default factory;
