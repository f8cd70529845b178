/**
 * The memory adapter: everything in maps, gone with the process. For tests and for embedding
 * freecode where nothing should touch the disk. Values are cloned in and out, so a caller mutating
 * what it got back cannot change the store.
 */

import { conflict, notFound } from "../../errors.ts";
import { refusingWhenClosed } from "../_closed.ts";
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
import type { AdapterFactory, EventRead, StorageAdapter } from "../contract.ts";
import type { EventRecord, SessionMeta, StoredMessage } from "../records.ts";

interface Entry {
  meta: SessionMeta;
  messages: StoredMessage[];
  cache?: unknown;
}

const clone = <T>(value: T): T => structuredClone(value);

const factory: AdapterFactory = () => {
  const sessions = new Map<string, Entry>();
  const events = new Map<string, EventRecord[]>();
  const entry = (id: string): Entry => {
    const e = sessions.get(checkId(id));
    if (!e) throw notFound(`no session ${id}`);
    return e;
  };

  const adapter: StorageAdapter = {
    name: "memory",
    location: ":memory:",
    capabilities: { crossProcess: false, fullTextSearch: false, persistent: false },

    async createSession(meta, messages) {
      const m = checkNewMeta(meta);
      const msgs = checkMessages(messages);
      checkUsageRule({}, msgs);
      if (sessions.has(m.id)) throw conflict(`session ${m.id} already exists`);
      sessions.set(m.id, { meta: clone({ ...m, messageCount: msgs.length }), messages: clone(msgs) });
    },
    async getMeta(id) {
      const e = sessions.get(checkId(id));
      return e ? clone(e.meta) : undefined;
    },
    async updateMeta(id, update) {
      const e = entry(id);
      const next = checkMeta(update(clone(e.meta)));
      e.meta = clone({ ...next, id: e.meta.id });
      return clone(e.meta);
    },
    async listSessions(query) {
      checkListQuery(query);
      return clone(
        applyListQuery(
          [...sessions.values()].map((e) => e.meta),
          query,
        ),
      );
    },
    async purgeSession(id, options) {
      const key = checkId(id);
      const meta = sessions.get(key)?.meta;
      const why = meta && options?.unless?.(clone(meta));
      if (why) throw conflict(why);
      const had = sessions.delete(key);
      return events.delete(key) || had;
    },
    async appendMessages(id, messages, options) {
      const e = entry(id);
      const msgs = checkMessages(messages);
      if (wantsIdCheck(options))
        refuseGivenIds(
          id,
          e.messages.map((m) => m.id),
          msgs,
          options,
        );
      checkUsageRule(e.meta, msgs);
      e.meta = foldMessagesIntoMeta(e.meta, msgs);
      e.messages.push(...clone(msgs));
    },
    async readMessages(id) {
      return { messages: clone(entry(id).messages), issues: [] };
    },
    async replaceMessages(id, messages, options = {}) {
      const e = entry(id);
      if (options.ifMessageCount !== undefined && options.ifMessageCount !== e.messages.length) {
        throw conflict(`session ${id} changed while it was being rewritten`);
      }
      const msgs = checkMessages(messages);
      e.messages = clone(msgs);
      e.meta = metaAfterReplace(e.meta, msgs);
    },
    async appendEvents(sessionId, drafts) {
      const list = events.get(checkSessionId(sessionId)) ?? [];
      const records = stampEvents(sessionId, list.at(-1)?.seq ?? 0, drafts);
      list.push(...clone(records));
      events.set(sessionId, list);
      return records;
    },
    async *readEvents(sessionId, options = {}): AsyncIterable<EventRead> {
      const from = firstSeq(options.fromSeq);
      for (const event of events.get(checkId(sessionId)) ?? []) {
        if (event.seq >= from) yield { event: clone(event) };
      }
    },
    async eventLogStamp(sessionId) {
      const list = events.get(checkId(sessionId)) ?? [];
      if (list.length === 0) return undefined;
      return `${list.at(-1)!.seq}:${list.length}:${list[0]!.id}`;
    },
    async lastEventAt(sessionId) {
      return events.get(checkId(sessionId))?.at(-1)?.timestamp;
    },
    async listEventLogs() {
      return [...events.keys()].filter((k) => (events.get(k)?.length ?? 0) > 0);
    },
    async getContextCache(id) {
      return clone(entry(id).cache);
    },
    async putContextCache(id, cache) {
      // Through JSON, as every other adapter stores it.
      entry(id).cache = JSON.parse(contextCacheText(cache)) as unknown;
    },
    async close() {
      sessions.clear();
      events.clear();
    },
  };
  return refusingWhenClosed(adapter);
};
export default factory;
