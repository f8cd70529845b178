/**
 * The files adapter (the default): SPEC.md's layout under the home —
 * `sessions/<project-key>/<id>/{meta.json, messages.jsonl, context-cache.json}` and
 * `rollout/sessions/<id>/events.jsonl` — with a derived listing index in `state/`. Creation is lazy
 * and atomic (the session directory is built aside and renamed into place with its first messages),
 * appends are one write under a lease on the session's lock, rewrites are temp + fsync + rename.
 */

import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { badInput, conflict, notFound } from "../../errors.ts";
import { keepsState } from "../../home.ts";
import { DIR_MODE, ensureDir, writeFileAtomic } from "../../util/atomic.ts";
import { withLockSync } from "../../util/lock.ts";
import { refusingWhenClosed } from "../_closed.ts";
import { checkUsageRule } from "../_meta-fold.ts";
import {
  checkId,
  checkListQuery,
  checkMessages,
  checkNewMeta,
  checkSessionId,
  contextCacheText,
} from "../_validate.ts";
import { acknowledgedSize } from "../batch-mark.ts";
import type { AdapterFactory, StorageAdapter } from "../contract.ts";
import { checkProjectPath } from "../project-key.ts";
import { withJsonLines } from "./_files-encode.ts";
import { eventsPath, eventsStamp, FilesEvents, readEventsFile } from "./_files-events.ts";
import { type IndexBackend, SessionIndex } from "./_files-index.ts";
import { appendJournal } from "./_files-journal.ts";
import { releaseAllLeases, releaseLease, releaseLeasesOf } from "./_files-lease.ts";
import { syncPending } from "./_files-log.ts";
import { readMessagesFile } from "./_files-messages.ts";
import { filesLayout, SessionLocator, sessionFiles } from "./_files-paths.ts";
import { FilesSession, healCounters, readMetaFile } from "./_files-session.ts";

let tmpCounter = 0;

const factory: AdapterFactory = (options) => {
  const layout = filesLayout(options.home);
  const fsync = options.fsync ?? "batch";
  const locator = new SessionLocator(layout);
  const sessions = new Map<string, FilesSession>();
  const events = new Map<string, FilesEvents>();
  let index: SessionIndex | undefined;
  // Read at construction: tests and hosts without SQLite can ask for the JSON index.
  const jsonIndex = process.env.FREECODE_FILES_INDEX === "json";

  const journal = (id: string, dir: string) => {
    try {
      appendJournal(layout.journal, id, basename(dirname(dir)));
    } catch (error) {
      // The state directory is made on first need, not looked for before every line.
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
      ensureDir(layout.state);
      appendJournal(layout.journal, id, basename(dirname(dir)));
    }
  };

  /** The handle of an existing session (`not_found` otherwise). */
  const session = (id: string): FilesSession => {
    const held = sessions.get(id);
    if (held?.cachedMeta()) return held; // holding the lease: the directory is known to exist
    checkId(id);
    const dir = locator.find(id);
    if (!dir) throw notFound(`no session ${id}`);
    let s = sessions.get(id);
    if (!s || s.files.dir !== dir) {
      s = new FilesSession(id, sessionFiles(dir), { fsync, lockPath: locator.lockPath("s", id), journal });
      sessions.set(id, s);
    }
    return s;
  };

  // The lock directory exists before the first lock is taken: a missing one costs the lock's
  // retry sleep (1 ms) on every first write to a fresh home.
  let locksReady = false;
  const readyLocks = () => {
    if (!locksReady) ensureDir(layout.locks);
    locksReady = true;
  };

  const eventLog = (id: string): FilesEvents => {
    checkId(id);
    let e = events.get(id);
    if (!e) {
      readyLocks();
      e = new FilesEvents(id, eventsPath(layout.rollout, id), locator.lockPath("e", id), fsync);
      events.set(id, e);
    }
    return e;
  };

  const openIndex = async (): Promise<SessionIndex> => {
    if (index) return index;
    let backend: IndexBackend;
    // A home that cannot be written (a read-only mount, another user's files), or none at all: an
    // index in memory, so reading needs no write (listing failed with EACCES or EROFS, and a
    // mistyped --home was made).
    if (!keepsState(options.home)) {
      const { memorySqliteIndex } = await import("./_files-index-sqlite.ts");
      index = new SessionIndex(layout, memorySqliteIndex(), true);
      return index;
    }
    ensureDir(layout.state);
    try {
      if (jsonIndex) throw new Error("JSON index requested");
      const { openSqliteIndex } = await import("./_files-index-sqlite.ts");
      try {
        backend = openSqliteIndex(layout.indexDb);
      } catch {
        // A corrupt index file: it is derived data, so set it aside and build a new one.
        if (existsSync(layout.indexDb)) renameSync(layout.indexDb, `${layout.indexDb}.corrupt-${Date.now()}`);
        for (const ext of ["-wal", "-shm"]) rmSync(layout.indexDb + ext, { force: true });
        backend = openSqliteIndex(layout.indexDb);
      }
    } catch {
      // SQLite cannot start here (or is corrupt beyond opening): the JSON index always works.
      const { openJsonIndex } = await import("./_files-index-json.ts");
      backend = openJsonIndex(layout.indexJson, join(layout.locks, "index.lock"));
    }
    index = new SessionIndex(layout, backend);
    return index;
  };

  const adapter: StorageAdapter = {
    name: "files",
    location: options.home,
    capabilities: { crossProcess: true, fullTextSearch: false, persistent: true },

    async createSession(meta, messages) {
      const m = checkNewMeta(meta);
      checkProjectPath(m.projectPath);
      const msgs = checkMessages(messages);
      checkUsageRule({}, msgs);
      const dir = locator.dirFor(m.projectPath, m.id);
      readyLocks();
      const tmp = join(dirname(dir), `.tmp-${m.id}-${process.pid}-${++tmpCounter}`);
      const files = sessionFiles(tmp);
      mkdirSync(tmp, { recursive: true, mode: DIR_MODE });
      try {
        const fsyncOn = fsync !== "never";
        const size = withJsonLines(msgs, (bytes) =>
          writeFileAtomic(files.messages, bytes, { fsync: fsyncOn }),
        );
        const stored = { ...m, messageCount: msgs.length, messagesBytes: size };
        writeFileAtomic(files.meta, `${JSON.stringify(stored, null, 2)}\n`, { fsync: fsyncOn });
        const handle = new FilesSession(m.id, sessionFiles(dir), {
          fsync,
          lockPath: locator.lockPath("s", m.id),
          journal,
        });
        handle.exclusive(() => {
          if (locator.find(m.id)) throw conflict(`session ${m.id} already exists`);
          try {
            renameSync(tmp, dir);
          } catch (error) {
            const code = (error as NodeJS.ErrnoException).code;
            if (code === "ENOTEMPTY" || code === "EEXIST") throw conflict(`session ${m.id} already exists`);
            throw error;
          }
          // Journaled before the lock is let go: a process that takes it next finds the session.
          journal(m.id, dir);
        });
        locator.remember(m.id, dir);
      } finally {
        rmSync(tmp, { recursive: true, force: true });
      }
    },

    async getMeta(id) {
      checkId(id);
      const cached = sessions.get(id)?.cachedMeta();
      if (cached) return structuredClone(cached);
      const dir = locator.find(id);
      if (!dir) return undefined;
      const files = sessionFiles(dir);
      const read = readMetaFile(files.meta);
      if (!read) return undefined;
      const size = acknowledgedSize(files.messages) ?? 0;
      return healCounters(read.meta, files.messages, read.messagesBytes, size);
    },

    updateMeta: async (id, update) => session(id).update(update),

    async listSessions(query) {
      checkListQuery(query);
      releaseAllLeases(); // write back counters this process holds, so the listing sees them
      return (await openIndex()).list(query);
    },

    async purgeSession(id, options) {
      checkId(id);
      const dir = locator.find(id);
      const rolloutDir = dirname(eventsPath(layout.rollout, id));
      const had = dir !== undefined || existsSync(rolloutDir);
      // The rollout log first: a purge killed half way then leaves the session without its log,
      // still listed (and a gc that marked it deleted finds it again), not a log whose session is
      // gone, which every listing, gc and verify took for a rollout-only session and kept.
      // Under the log's own lock, which its writers take: a process appending to it (a server, a
      // recorder) went on writing, acknowledged, into the file this erased, until its lease ended;
      // its next batch began a new log at seq 1. Now its next append, after the purge, does that.
      const dropLog = () => {
        const lock = locator.lockPath("e", id);
        releaseLease(lock); // this process's own writer of the log (the lock would look alive)
        ensureDir(dirname(lock));
        withLockSync(lock, () => {
          events.get(id)?.reset();
          events.delete(id);
          rmSync(rolloutDir, { recursive: true, force: true });
        });
      };
      if (!dir) dropLog();
      else {
        const handle = session(id);
        handle.exclusive(() => {
          // The meta as it is under the session's lock (its appends acknowledged), which nothing
          // can move before the erase below: an append is either counted here or refused after.
          const read = options?.unless ? readMetaFile(handle.files.meta) : undefined;
          if (read) {
            const size = acknowledgedSize(handle.files.messages) ?? 0;
            const why = options?.unless?.(
              healCounters(read.meta, handle.files.messages, read.messagesBytes, size),
            );
            if (why) throw conflict(why);
          }
          dropLog();
          handle.log.close();
          rmSync(dir, { recursive: true, force: true });
        });
        sessions.delete(id);
        locator.forget(id);
        journal(id, dir);
      }
      return had;
    },

    appendMessages: async (id, messages, options) => session(id).append(messages, options),

    async readMessages(id) {
      return readMessagesFile(session(id).files.messages);
    },

    replaceMessages: async (id, messages, options) => session(id).replace(messages, options?.ifMessageCount),

    async appendEvents(sessionId, drafts) {
      return eventLog(checkSessionId(sessionId)).append(drafts);
    },

    readEvents(sessionId, opts = {}) {
      checkId(sessionId);
      return readEventsFile(eventsPath(layout.rollout, sessionId), opts.fromSeq);
    },

    async eventLogStamp(sessionId) {
      checkId(sessionId);
      return eventsStamp(eventsPath(layout.rollout, sessionId));
    },

    async listEventLogs() {
      let ids: string[];
      try {
        ids = readdirSync(layout.rollout);
      } catch {
        return [];
      }
      // An empty file is no log (a repair that cut back a first append that never finished): the
      // other adapters hold none, and `store migrate` found it missing from its copy.
      const nonEmpty = (id: string) =>
        (statSync(join(layout.rollout, id, "events.jsonl"), { throwIfNoEntry: false })?.size ?? 0) > 0;
      return ids.filter(nonEmpty).sort();
    },

    async getContextCache(id) {
      const file = session(id).files.cache;
      let text: string;
      try {
        text = readFileSync(file, "utf8");
      } catch {
        return undefined;
      }
      try {
        return JSON.parse(text) as unknown;
      } catch (error) {
        throw badInput(`context cache is not JSON: ${(error as Error).message}`, { file }, error);
      }
    },

    async putContextCache(id, cache) {
      const text = contextCacheText(cache);
      writeFileAtomic(session(id).files.cache, text, { fsync: fsync !== "never" });
    },

    async reindex() {
      const idx = await openIndex();
      return { sessions: idx.rebuild() };
    },

    async close() {
      for (const s of sessions.values()) {
        releaseLeasesOf(s);
        s.log.close();
      }
      for (const e of events.values()) {
        releaseLeasesOf(e);
        e.log.close();
      }
      syncPending();
      index?.backend.close();
      index = undefined;
      sessions.clear();
      events.clear();
    },
  };
  return refusingWhenClosed(adapter);
};

export default factory;
