/**
 * The thread store's readers: full-text search, the turn-by-turn view, thread listing and goal
 * tracking. Each opens the store under the home, refreshes it from the adapter (incrementally), and
 * answers from it (open.ts); the adapter stays the source of truth (goals are written to
 * `meta.goal`). Inputs come from outside and are checked: a bad one is a `bad_input`.
 */
import * as v from "valibot";
import { badInput, notFound } from "../errors.ts";
import { checkId } from "../storage/_validate.ts";
import type { StorageAdapter } from "../storage/contract.ts";
import type { SessionMeta } from "../storage/records.ts";
import { withThreads } from "./open.ts";
import { deriveUnlessGone, type RefreshStats } from "./refresh.ts";
import { createScan } from "./scan.ts";
import {
  checkSearchQuery,
  inProject,
  projectScope,
  queryTerms,
  rowPasses,
  type SearchQuery,
  type SearchResult,
} from "./search-text.ts";
import {
  type GoalStatus,
  type Thread,
  type ThreadFilter,
  ThreadFilterSchema,
  type TurnItem,
} from "./types.ts";

/** Search without an index: derive every session's rows and rank them the way FTS5 would. */
export async function scanSearch(
  adapter: StorageAdapter,
  searched: SearchQuery,
  terms: string[],
): Promise<SearchResult> {
  const query = checkSearchQuery(searched);
  const metas = new Map((await adapter.listSessions({ all: true })).items.map((m) => [m.id, m]));
  const ids = new Set([...metas.keys(), ...(await adapter.listEventLogs())]);
  const threads = new Map<string, Thread>();
  const scope = query.projectPath === undefined ? undefined : projectScope(query.projectPath);
  const scan = createScan(terms, (row) => {
    const t = threads.get(row.threadId)!;
    return rowPasses(row, query) && inProject(t.projectPath, scope) && (query.all || t.status !== "deleted");
  });
  for (const id of ids) {
    // A session purged while this reads is left out, as the index leaves it out.
    const d = await deriveUnlessGone(adapter, id, metas.get(id));
    if (!d) continue;
    threads.set(id, d.derived.thread);
    for (const row of d.rows) scan.add(row);
  }
  const { total, results } = scan.top(query.limit ?? 20);
  const hits = results.map(({ row, score, snippet }) => {
    const t = threads.get(row.threadId)!;
    return {
      sessionId: t.id,
      title: t.title,
      projectPath: t.projectPath,
      kind: row.kind,
      turn: row.turn,
      ...(row.role !== undefined ? { role: row.role } : {}),
      ...(row.tool !== undefined ? { tool: row.tool } : {}),
      timestamp: row.timestamp,
      score,
      snippet,
    };
  });
  return { query: query.text, engine: "scan", total, hits };
}

/**
 * Bring the thread store up to date now: after a purge, what it held of the session leaves the
 * index at once, not at the next search (a log recorded again under the id meanwhile, with the same
 * event ids, kept the purged text searchable: its stamp told no change).
 */
export async function refreshThreadStore(adapter: StorageAdapter, home: string): Promise<void> {
  await withThreads(adapter, home, () => undefined);
}

/**
 * Full-text search over titles, message text, tool names and arguments: FTS5 when the thread store
 * has it, else a scan with the same hits in the same order. `engine` in the result says which ran.
 * Every word of `query.text` must match (each as a word prefix); `limit` 0 counts without hits.
 */
export async function searchThreads(
  adapter: StorageAdapter,
  home: string,
  query: SearchQuery,
  options: { engine?: "fts5" | "scan" } = {},
): Promise<SearchResult> {
  const q = checkSearchQuery(query);
  if (options.engine !== undefined && options.engine !== "fts5" && options.engine !== "scan")
    throw badInput(`unknown search engine ${JSON.stringify(options.engine)} (fts5 or scan)`, {
      field: "engine",
    });
  const terms = queryTerms(q.text);
  if (terms.length === 0) throw badInput("search query has no words to look for", { field: "query" });
  if (options.engine !== "scan") {
    const indexed = await withThreads(
      adapter,
      home,
      async (store, stats) => {
        const found = await store.search!(q, terms);
        return stats.unreadable.length > 0 ? { ...found, unreadable: stats.unreadable } : found;
      },
      { when: (store) => store.search !== undefined },
    );
    if (indexed) return indexed;
  }
  return scanSearch(adapter, q, terms);
}

const TurnLimitSchema = v.optional(v.pipe(v.number(), v.safeInteger(), v.minValue(0)));

/**
 * Turn by turn: prompt, tool calls, response and outcome — the last `limit` turns when given (0:
 * none; a whole number).
 */
export async function turnItemsView(
  adapter: StorageAdapter,
  home: string,
  sessionId: string,
  limit?: number,
): Promise<TurnItem[]> {
  checkId(sessionId);
  const checked = v.safeParse(TurnLimitSchema, limit);
  if (!checked.success)
    throw badInput(`invalid turn limit: ${checked.issues[0].message}`, { field: "limit" });
  const items = await withThreads(adapter, home, (store) => {
    if (!store.getThread(sessionId)) throw notFound(`no session ${sessionId}`);
    const turns = store.getTurns(sessionId);
    return (limit === undefined ? turns : limit === 0 ? [] : turns.slice(-limit)).map((t) => ({
      number: t.number,
      prompt: t.prompt,
      tools: t.toolCalls.map((c) => ({
        name: c.name,
        ...(c.args !== undefined ? { args: c.args } : {}),
        ...(c.failed ? { failed: true } : {}),
        ...(c.deniedBy ? { deniedBy: c.deniedBy } : {}),
        ...(c.durationMs !== undefined ? { durationMs: c.durationMs } : {}),
        ...(c.result === undefined && c.durationMs === undefined && !c.failed && !c.deniedBy
          ? { pending: true }
          : {}),
      })),
      ...(t.response !== undefined ? { response: t.response } : {}),
      outcome: t.outcome,
      ...(t.error !== undefined ? { error: t.error } : {}),
      startedAt: t.startedAt,
      durationMs: t.endedAt - t.startedAt,
    }));
  });
  return items!;
}

/** Threads (sessions as the thread store sees them: with turn and tool-call counts, goals). */
export async function listThreads(
  adapter: StorageAdapter,
  home: string,
  filter?: ThreadFilter,
): Promise<Thread[]> {
  const checked = v.safeParse(v.optional(ThreadFilterSchema), filter);
  if (!checked.success) {
    const issue = checked.issues[0];
    throw badInput(`invalid thread filter: ${issue.message}`, { field: v.getDotPath(issue) ?? "filter" });
  }
  return (await withThreads(adapter, home, (store) => store.listThreads(checked.output)))!;
}

/**
 * Rebuild the thread store (`store reindex`): a file failing its integrity check is set aside and
 * built afresh; otherwise every thread is re-derived and replaced in place, the gone ones removed
 * last, so searches running meanwhile never see a half-built store.
 */
export async function rebuildThreads(
  adapter: StorageAdapter,
  home: string,
): Promise<RefreshStats & { engine: "sqlite" | "json" }> {
  const rebuilt = await withThreads(adapter, home, (store, stats) => ({ engine: store.engine, ...stats }), {
    full: true,
  });
  return rebuilt!;
}

export interface GoalUpdate {
  text?: string;
  status?: GoalStatus;
  /** Remove the goal. */
  clear?: boolean;
}

/**
 * Set (or clear) a session's goal: text and status, stored in `meta.goal` (the source of truth;
 * the thread store follows at its next refresh). A new goal without a status starts `active`.
 */
export async function setGoal(
  adapter: StorageAdapter,
  sessionId: string,
  update: GoalUpdate,
): Promise<SessionMeta> {
  if (!update.clear && update.text === undefined && update.status === undefined) {
    throw badInput("nothing to set: give a goal text, a status, or clear", { field: "goal" });
  }
  return adapter.updateMeta(sessionId, (meta) => {
    const { goal, ...rest } = meta;
    if (update.clear) return rest as SessionMeta;
    const text = update.text ?? goal?.text;
    if (text === undefined)
      throw badInput(`session ${sessionId} has no goal yet: give its text`, { field: "text" });
    return { ...rest, goal: { text, status: update.status ?? goal?.status ?? "active" } } as SessionMeta;
  });
}
