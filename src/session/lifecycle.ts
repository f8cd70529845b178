/**
 * The session lifecycle over any storage adapter: lazy create, get, list, append, rename, soft
 * delete / restore, purge, archive / unarchive, pin / unpin, fork (whole or at a message).
 * Status is one enum (see docs/readme/sessions.md): `idle | running | interrupted | archived |
 * deleted`; archive and delete remember the status they replaced so unarchive/restore put it back.
 */
import * as v from "valibot";
import { badInput, conflict, notFound } from "../errors.ts";
import { foldMessagesIntoMeta } from "../storage/_meta-fold.ts";
import { checkId } from "../storage/_validate.ts";
import type { ListPage, ListQuery, PurgeOptions, StorageAdapter } from "../storage/contract.ts";
import {
  checkProjectPath,
  comparableProjectPath,
  isWindowsPath,
  sameProject,
} from "../storage/project-key.ts";
import type { SessionMeta, SessionStatus, StoredMessage } from "../storage/records.ts";
import { refuseRepeats } from "../storage/repeated-messages.ts";
import { unreadableLog } from "../storage/unreadable-log.ts";
import { charCount, cutText, headOfChars } from "../util/cut-text.ts";
import { nonFinitePath } from "../util/number-schemas.ts";
import { summaryOf } from "./_compaction-plan.ts";
import { newMessageId, newSessionId } from "./ids.ts";
import { type MessageInput, MessageInputSchema, UsageInputSchema } from "./schema.ts";
import { ownerIsGone } from "./status.ts";
import { normalizeTags } from "./tag-rules.ts";

/** Titles from the first prompt are cut here (seed 002). */
export const TITLE_FROM_PROMPT_CHARS = 50;

export interface NewSession {
  projectPath: string;
  id?: string;
  title?: string;
  provider?: string;
  model?: string;
  tags?: string[];
}

/** Fill in id/timestamp of caller-given messages and validate them; `index` names a bad one. */
export function toStoredMessages(inputs: unknown[], now = Date.now()): StoredMessage[] {
  return inputs.map((input, i) => {
    const r = v.safeParse(MessageInputSchema, input);
    if (!r.success) {
      const path = v.getDotPath(r.issues[0]);
      throw badInput(`invalid message: ${r.issues[0].message}`, { line: i + 1, field: path ?? undefined });
    }
    const m = r.output as MessageInput;
    // Anywhere in it (a tool's args or result too): stored, NaN and ±Infinity would become null.
    const bad = nonFinitePath(input);
    if (bad !== undefined)
      throw badInput("invalid message: a number JSON cannot hold (NaN or ±Infinity)", {
        line: i + 1,
        field: bad,
      });
    return { ...m, id: m.id ?? newMessageId(now), timestamp: m.timestamp ?? now + i } as StoredMessage;
  });
}

/**
 * The token counts of messages a library caller hands over whole (`createSession`,
 * `appendMessages`): whole numbers ≥ 0, as `toStoredMessages` holds them (the store does not check
 * them, so a -5 was added to the session's totals, exported, and the export then refused).
 */
function checkUsage(messages: StoredMessage[]): void {
  for (const [i, m] of messages.entries()) {
    if (m.usage === undefined) continue;
    const r = v.safeParse(UsageInputSchema, m.usage);
    if (!r.success) {
      const path = v.getDotPath(r.issues[0]);
      throw badInput(`invalid message: ${r.issues[0].message}`, {
        field: `[${i}].usage${path ? `.${path}` : ""}`,
      });
    }
  }
}

/** The text of a message's text parts, joined. */
export function messageText(m: StoredMessage): string {
  return m.parts
    .filter((p) => p.type === "text" || p.type === "code")
    .map((p) => p.content ?? "")
    .join("\n");
}

function titleFrom(first: StoredMessage | undefined): string {
  const text = (first ? messageText(first) : "").replace(/\s+/g, " ").trim();
  if (!text) return "Untitled session";
  return cutText(text, TITLE_FROM_PROMPT_CHARS);
}

/**
 * Create a session with its first messages in one atomic step (there is no empty session: a
 * session exists once its first message is written). The title is the user's, else the first prompt.
 */
export async function createSession(
  store: StorageAdapter,
  init: NewSession,
  first: StoredMessage[],
): Promise<SessionMeta> {
  if (first.length === 0)
    throw badInput("a session starts with its first message (nothing to create)", { field: "messages" });
  checkUsage(first);
  const now = Date.now();
  const id = init.id === undefined ? newSessionId(now) : checkId(init.id);
  // A Windows path is kept as given (resolved here it would become `<cwd>/C:\…`).
  const projectPath = comparableProjectPath(checkProjectPath(init.projectPath));
  const base: SessionMeta = {
    id,
    title: init.title === undefined ? titleFrom(first.find((m) => m.role === "user")) : userTitle(init.title),
    titleSource: init.title === undefined ? "prompt" : "user",
    projectPath,
    status: "idle",
    createdAt: now,
    updatedAt: now,
    turnCount: 0,
    messageCount: 0,
    ...(init.provider ? { provider: init.provider } : {}),
    ...(init.model ? { model: init.model } : {}),
    ...(init.tags ? { tags: normalizeTags(init.tags) } : {}),
  };
  const meta = foldMessagesIntoMeta(base, first);
  await store.createSession(meta, first);
  return { ...meta, messageCount: first.length };
}

/**
 * A session that does not exist yet: it has an id, and its first `append` creates it together with
 * those messages (so an abandoned start leaves nothing behind). Later appends just append.
 */
export interface LazySession {
  readonly id: string;
  readonly created: boolean;
  append(messages: StoredMessage[]): Promise<void>;
}

/** Start a session lazily (see `LazySession`). */
export function startSession(store: StorageAdapter, init: NewSession): LazySession {
  const id = init.id === undefined ? newSessionId() : checkId(init.id);
  let created = false;
  /** The creation in flight: a second append waits for it (two first appends both created, and
   * the second failed with a conflict, its messages lost). */
  let creating: Promise<unknown> | undefined;
  return {
    id,
    get created() {
      return created;
    },
    async append(messages) {
      if (messages.length === 0) return;
      if (creating) await creating.catch(() => undefined);
      if (created) return appendMessages(store, id, messages);
      const making = createSession(store, { ...init, id }, messages);
      creating = making;
      try {
        await making;
        created = true;
      } finally {
        creating = undefined;
      }
    },
  };
}

/** The meta of a session, or `not_found`. */
export async function getSession(store: StorageAdapter, id: string): Promise<SessionMeta> {
  const meta = await store.getMeta(checkId(id));
  if (!meta) throw notFound(`no session ${id}`);
  return meta;
}

/** List sessions (pinned first unless told otherwise). */
export async function listSessions(store: StorageAdapter, query: ListQuery = {}): Promise<ListPage> {
  const wanted = query.projectPath;
  if (wanted === undefined) return store.listSessions({ pinnedFirst: true, ...query });
  // Resolved as `createSession` stores it (`.`, a relative path, a trailing `/`): the very string a
  // session was created with found none.
  if (!isWindowsPath(wanted))
    return store.listSessions({ pinnedFirst: true, ...query, projectPath: comparableProjectPath(wanted) });
  // A Windows path is stored as its agent wrote it (`C:\a`, `C:/a`, `c:\a\`): the store matches
  // exactly, so the sessions are filtered here, then paged.
  const { projectPath: _, limit, offset = 0, ...rest } = query;
  const all = await store.listSessions({ pinnedFirst: true, ...rest });
  const matched = all.items.filter((m) => sameProject(m.projectPath, wanted));
  const from = Math.max(0, offset);
  const items = matched.slice(from, limit === undefined ? undefined : from + Math.max(0, limit));
  return { items, total: matched.length };
}

/** Append messages to an existing session (all or nothing). */
export async function appendMessages(
  store: StorageAdapter,
  id: string,
  messages: StoredMessage[],
): Promise<void> {
  if (messages.length === 0) return;
  checkUsage(messages);
  await store.appendMessages(checkId(id), messages);
}

/**
 * Append messages some of which carry ids their callers gave (`chosen[i]`): one the session holds,
 * or the batch repeats, is refused (`bad_input`, field `[i].id`) by the adapter, under the lock of
 * the append itself (`storage/_given-ids.ts`). Token counts are checked as `appendMessages` checks
 * them.
 */
export async function appendGivenMessages(
  store: StorageAdapter,
  id: string,
  messages: StoredMessage[],
  chosen: readonly boolean[],
): Promise<void> {
  if (messages.length === 0) return;
  checkUsage(messages);
  await store.appendMessages(checkId(id), messages, { given: chosen });
}

/**
 * A title a user gives (create, rename): trimmed, not empty, at most 500 characters, one line —
 * line breaks and tabs become spaces (a listing shows one row per session). Other control
 * characters stay as given; listings escape them.
 */
export function userTitle(title: string): string {
  const t = title.replace(/[\r\n\t]+/g, " ").trim();
  if (!t) throw badInput("title must not be empty", { field: "title" });
  const chars = charCount(t);
  if (chars > MAX_TITLE)
    throw badInput(`title must be at most ${MAX_TITLE} characters (got ${chars})`, { field: "title" });
  return t;
}

const MAX_TITLE = 500;
/** What a fork's default title adds to its parent's. */
const FORK = " (fork)";

/** Set a user title (it wins over generated and prompt titles from now on). */
export function renameSession(store: StorageAdapter, id: string, title: string): Promise<SessionMeta> {
  const t = userTitle(title);
  return store.updateMeta(checkId(id), (m) => ({ ...m, title: t, titleSource: "user" }));
}

/**
 * Move to `status`, remembering the previous one (for archive/delete). A running session keeps its
 * owner and is remembered as running: brought back while that process still works on it, it is
 * running again (it came back `interrupted`, and a second process could take it over). A session
 * in the trash is not archived (it left the trash, and `restore` then refused it): restore it first.
 */
function moveTo(status: SessionStatus) {
  return (m: SessionMeta): SessionMeta => {
    if (m.status === status) return m;
    if (status === "archived" && m.status === "deleted")
      throw conflict(`session ${m.id} is deleted: restore it first (\`freecode session restore ${m.id}\`)`);
    // Deleting an archived session keeps the status it had before the archive, for after `restore`
    // and `unarchive` (an interrupted session came back idle).
    if (m.status === "archived" && status === "deleted" && m.previousStatus !== undefined)
      return { ...m, status, previousStatus: "archived", archivedFrom: m.previousStatus };
    return { ...m, status, previousStatus: m.status };
  };
}

/** Back from `from` to the remembered status; `conflict` if the session is not in `from`. */
function backFrom(from: SessionStatus, verb: string) {
  return (m: SessionMeta): SessionMeta => {
    if (m.status !== from) throw conflict(`session ${m.id} is ${m.status}, not ${from}: nothing to ${verb}`);
    const { previousStatus, archivedFrom, ...rest } = m;
    if (previousStatus === "archived" && from === "deleted" && archivedFrom !== undefined)
      return { ...rest, status: "archived", previousStatus: archivedFrom };
    // No status remembered (put away twice: archived, then deleted and restored): an owner still
    // recorded says it was running (a run that ends drops it, as crash recovery does).
    const back = previousStatus && previousStatus !== from ? previousStatus : m.owner ? "running" : "idle";
    // Running when it was put away: still, if its process is; else its run was cut off.
    if (back === "running" && ownerIsGone(m)) {
      const { owner: _, ...free } = rest;
      return { ...free, status: "interrupted" };
    }
    return { ...rest, status: back };
  };
}

/** Soft delete: the session is hidden from listings, its files stay; `restoreSession` undoes it. */
/** `meta` moved to the trash, remembering what `restore` (and then `unarchive`) gives back; gc's claim uses it too. */
export const deletedMeta: (meta: SessionMeta) => SessionMeta = moveTo("deleted");

export const deleteSession = (s: StorageAdapter, id: string) => s.updateMeta(checkId(id), deletedMeta);
export const restoreSession = (s: StorageAdapter, id: string) =>
  s.updateMeta(checkId(id), backFrom("deleted", "restore"));
export const archiveSession = (s: StorageAdapter, id: string) =>
  s.updateMeta(checkId(id), moveTo("archived"));
export const unarchiveSession = (s: StorageAdapter, id: string) =>
  s.updateMeta(checkId(id), backFrom("archived", "unarchive"));
export const pinSession = (s: StorageAdapter, id: string, pinned = true) =>
  s.updateMeta(checkId(id), (m) => ({ ...m, pinned }));

/** Erase a session's files (meta, messages, context cache, rollout). Not recoverable. */
export async function purgeSession(store: StorageAdapter, id: string, options?: PurgeOptions): Promise<void> {
  if (!(await store.purgeSession(checkId(id), options))) throw notFound(`no session ${id}`);
}

/**
 * Fork: a new session holding a full copy of the messages (or those up to and including `at`), with
 * `parentId`, the same provider and model, and the turn count of what was copied. Token totals
 * are not copied: the fork has not spent anything yet. Nor is the copied messages' `usage` (their
 * `responseId` stays): that cost is the parent's, and a plain sum of usage over every session must
 * stay the true cost. The rollout log is not copied either.
 */
/**
 * The turns of `parent` its compaction summary stands for: what it counts beyond the turns of the
 * messages it holds (0 when it was never compacted). A fork `--at` a message carries them with the
 * summary, so its turns are numbered as the parent's (it counted 3 where the parent said 224).
 */
function summarizedTurns(parent: SessionMeta, messages: StoredMessage[]): number {
  if (!summaryOf(parent, messages)) return 0;
  const held = foldMessagesIntoMeta(
    { ...parent, turnCount: 0, messageCount: 0, tokens: undefined },
    messages,
  );
  return Math.max(0, parent.turnCount - held.turnCount);
}

export async function forkSession(
  store: StorageAdapter,
  id: string,
  options: { at?: string; title?: string; newId?: string } = {},
): Promise<SessionMeta> {
  const parent = await getSession(store, id);
  const title = options.title === undefined ? undefined : userTitle(options.title);
  const { messages, issues } = await store.readMessages(parent.id);
  // A full copy, or none: a line it could not read would be left out of the fork for good.
  if (issues.length > 0) throw unreadableLog(parent.id, issues, "message");
  refuseRepeats(parent.id, messages, "fork");
  let copied = messages;
  if (options.at !== undefined) {
    const at = messages.findIndex((m) => m.id === options.at);
    if (at === -1) throw notFound(`session ${id} has no message ${options.at}`);
    copied = messages.slice(0, at + 1);
  }
  if (copied.length === 0) throw badInput(`session ${id} has no messages to fork`);
  copied = copied.map((m) => {
    if (m.usage === undefined) return m;
    const { usage: _, ...rest } = m;
    return rest;
  });
  const now = Date.now();
  const newId = options.newId === undefined ? newSessionId(now) : checkId(options.newId);
  const full = options.at === undefined;
  // Counted afresh from what is copied: turns, and the last turn's time (a fork taken earlier
  // had the parent's later one).
  const { lastTurnAt: _l, ...fresh } = parent;
  const counted = foldMessagesIntoMeta(
    { ...fresh, turnCount: 0, messageCount: 0, tokens: undefined },
    copied,
  );
  // A compaction the parent left half done (`pendingCompaction`) is the parent's to finish; the
  // summary that goes with the log as it is now comes along (its plan's, once the log was
  // rewritten: the old one left the fork the kept messages alone). Where the parent was forked at,
  // or imported from, is the parent's: the fork's own are its `parentId` and `forkedAt`.
  const summary = summaryOf(parent, messages);
  const {
    tokens: _t,
    usageResponseId: _u,
    summary: _s,
    owner: _o,
    previousStatus: _p,
    archivedFrom: _a,
    pendingCompaction: _c,
    forkedAt: _f,
    copiedFrom: _i,
    ...rest
  } = counted;
  const meta: SessionMeta = {
    ...rest,
    id: newId,
    title: title ?? `${headOfChars(parent.title, MAX_TITLE - FORK.length)}${FORK}`,
    titleSource: title === undefined ? parent.titleSource : "user",
    status: "idle",
    parentId: parent.id,
    createdAt: now,
    updatedAt: now,
    turnCount: full ? parent.turnCount : summarizedTurns(parent, messages) + counted.turnCount,
    pinned: false,
    ...(full ? {} : { forkedAt: options.at }),
  };
  if (summary) meta.summary = summary;
  await store.createSession(meta, copied);
  return { ...meta, messageCount: copied.length };
}
