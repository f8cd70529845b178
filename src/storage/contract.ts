/**
 * The storage adapter contract: the one interface through which everything is persisted. Adapters
 * (`adapters/<name>.ts`) are factories returning a plain object; the conformance suite in
 * `test/storage/` runs unmodified against each. Methods are async so that one contract covers files,
 * SQLite, sql.js and a single JSON file.
 */
import type { AppendOptions } from "./_given-ids.ts";
import type { EventDraft, EventRecord, SessionMeta, SessionStatus, StoredMessage } from "./records.ts";

/** A line that could not be read; the rest of the file still loads. */
export interface ReadIssue {
  file?: string;
  line?: number;
  message: string;
  /** A final line without its newline: a crash mid-append, not corruption. */
  torn: boolean;
  /** The line holds bytes that are not UTF-8; it was read with U+FFFD in their place. */
  badUtf8?: boolean;
}

export interface ListQuery {
  projectPath?: string;
  status?: SessionStatus | SessionStatus[];
  /** Include soft-deleted sessions (hidden by default). */
  all?: boolean;
  limit?: number;
  offset?: number;
  /** Sort pinned sessions before the others (then `updatedAt` descending). */
  pinnedFirst?: boolean;
}

export interface ListPage {
  items: SessionMeta[];
  /** How many sessions match the filter in all. */
  total: number;
}

export interface MessagesRead {
  messages: StoredMessage[];
  issues: ReadIssue[];
}

/** One item of an event stream: an event, or a line that could not be read. */
export type EventRead = { event: EventRecord; issue?: undefined } | { event?: undefined; issue: ReadIssue };

export interface AdapterCapabilities {
  /** Several processes may use the same store at once. */
  crossProcess: boolean;
  /** The adapter has an indexed full-text search (else callers scan). */
  fullTextSearch: boolean;
  /** Data survives the process. */
  persistent: boolean;
  /**
   * `true` when an append does its work after its call returns (sqljs writes its image
   * asynchronously): an exit handler cannot wait for it, so what such an append was given at exit
   * is reported lost. Absent: the work is done before the call returns.
   */
  asyncAppend?: boolean;
}

/** See `StorageAdapter.purgeSession`. */
export interface PurgeOptions {
  unless?: (meta: SessionMeta) => string | undefined;
}

export interface StorageAdapter {
  /** The registry key (file name of the adapter). */
  readonly name: string;
  /** Where the data lives (a path, or `:memory:`). */
  readonly location: string;
  readonly capabilities: AdapterCapabilities;

  /**
   * Create a session with its first messages in one atomic step; `conflict` if the id exists.
   * The meta is stored as given except `messageCount`, which becomes `messages.length` (callers fold
   * counters with `foldMessagesIntoMeta` from `_meta-fold.ts`; a fork copies its parent's).
   */
  createSession(meta: SessionMeta, messages: StoredMessage[]): Promise<void>;
  getMeta(id: string): Promise<SessionMeta | undefined>;
  /** Read-modify-write of the meta under the session's lock; `not_found` if absent. */
  updateMeta(id: string, update: (meta: SessionMeta) => SessionMeta): Promise<SessionMeta>;
  /** Sorted by `updatedAt` descending (ties by id); `pinnedFirst` puts pinned sessions first. */
  listSessions(query: ListQuery): Promise<ListPage>;
  /**
   * Erase a session's meta, messages and events; false if there was nothing. `unless` is asked of
   * the meta under the same lock or transaction as the erase: a reason it gives refuses the purge
   * (`conflict`), nothing erased (gc: an append acknowledged after its plan must not be erased).
   */
  purgeSession(id: string, options?: PurgeOptions): Promise<boolean>;

  /**
   * Append messages to an existing session (all or nothing; `not_found` if absent). The meta's
   * counters follow through `foldMessagesIntoMeta` (messageCount, turnCount, lastTurnAt, tokens,
   * updatedAt = max(updatedAt, newest timestamp)); it throws `bad_input` when a message would put a
   * second `usage` on one provider response, and then nothing is written. `options.given` names the
   * messages whose ids callers chose: one the session holds, or the batch repeats, is refused
   * (`bad_input`), checked under the same lock as the append (`_given-ids.ts`).
   */
  appendMessages(id: string, messages: StoredMessage[], options?: AppendOptions): Promise<void>;
  readMessages(id: string): Promise<MessagesRead>;
  /**
   * Atomically replace the whole message log (compaction). `messageCount` becomes the new length;
   * turnCount and token totals are history and stay. With `ifMessageCount`, the replace happens
   * only if the log still holds that many messages (else `conflict`): a reader that decided what
   * to keep cannot silently drop a message appended since it read.
   */
  replaceMessages(
    id: string,
    messages: StoredMessage[],
    options?: { ifMessageCount?: number },
  ): Promise<void>;

  /**
   * Append rollout events (all or nothing). `seq` is assigned under the session's lock from what is
   * already stored, so it is strictly increasing across processes. Events may exist for a session
   * with no meta (a recorder for a foreign agent). Returns the stored records.
   */
  appendEvents(sessionId: string, events: EventDraft[]): Promise<EventRecord[]>;
  /** Stream the events of a session in `seq` order, from `fromSeq` (inclusive) when given. */
  readEvents(sessionId: string, options?: { fromSeq?: number }): AsyncIterable<EventRead>;
  /** Ids of every session that has a rollout log. */
  listEventLogs(): Promise<string[]>;
  /**
   * The time of a log's last event (undefined: no log, or its last line does not read), without
   * reading the rest: `trace` with no id picks the newest log by it (it folded every event of
   * every log for it). Optional: a reader without it folds the log.
   */
  lastEventAt?(sessionId: string): Promise<number | undefined>;
  /**
   * A cheap value that changes whenever the session's rollout log changes (undefined: no log), so
   * a reader that folded the log can tell it is unchanged without reading it — a log purged and
   * recorded again under its id included, whose new events may be no more than the old ones were
   * (the thread store kept the purged log's calls in search). Optional: a reader without it asks
   * for events past the last `seq` it saw.
   */
  eventLogStamp?(sessionId: string): Promise<string | undefined>;

  /** The per-session context cache (files requested across turns); free-form JSON. */
  getContextCache(id: string): Promise<unknown | undefined>;
  putContextCache(id: string, cache: unknown): Promise<void>;

  /**
   * Rebuild derived indexes from the source data (`freecode store reindex`). Optional: adapters
   * without a derived index leave it out.
   */
  reindex?(): Promise<{ sessions: number }>;

  /** Flush and release everything; the adapter is unusable afterwards. */
  close(): Promise<void>;
}

/** Options every adapter factory takes. */
export interface AdapterOptions {
  /** The freecode home (data lives below it). */
  home: string;
  /**
   * Durability of appends (default `batch`): `always` syncs before an append returns; `batch`
   * syncs within ~100 ms of an append (group commit) and on close; `never` leaves it to the OS.
   * A process crash loses nothing acknowledged in any mode; `batch` bounds what a power loss loses.
   * Atomic rewrites (meta, compaction) sync unless the mode is `never`.
   */
  fsync?: "never" | "batch" | "always";
}

export type AdapterFactory = (options: AdapterOptions) => StorageAdapter;
