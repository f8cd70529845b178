/**
 * The thread store's readers: full-text search, the turn-by-turn view, thread listing and goal
 * tracking. Each opens the store under the home, refreshes it from the adapter (incrementally), and
 * answers from it; the adapter stays the source of truth (goals are written to `meta.goal`).
 */
import { badInput, notFound } from "../errors.ts";
import type { StorageAdapter } from "../storage/contract.ts";
import type { SessionMeta } from "../storage/records.ts";
import { deriveFromAdapter, refreshThreads } from "./refresh.ts";
import {
  createScan,
  inProject,
  queryTerms,
  rowPasses,
  type SearchQuery,
  type SearchResult,
} from "./search-text.ts";
import { openThreadStore, type ThreadStore } from "./store.ts";
import type { GoalStatus, Thread, ThreadFilter, TurnItem } from "./types.ts";

/** Open the thread store for `adapter` under `home` and bring it up to date. */
export async function openThreads(adapter: StorageAdapter, home: string): Promise<ThreadStore> {
  const store = await openThreadStore(home, { inMemory: !adapter.capabilities.persistent });
  try {
    await refreshThreads(adapter, store);
  } catch (error) {
    store.close();
    throw error;
  }
  return store;
}

/** Search without an index: derive every session's rows and rank them the way FTS5 would. */
export async function scanSearch(
  adapter: StorageAdapter,
  query: SearchQuery,
  terms: string[],
): Promise<SearchResult> {
  const metas = new Map((await adapter.listSessions({ all: true })).items.map((m) => [m.id, m]));
  const ids = new Set([...metas.keys(), ...(await adapter.listEventLogs())]);
  const threads = new Map<string, Thread>();
  const scan = createScan(terms, (row) => {
    const t = threads.get(row.threadId)!;
    return (
      rowPasses(row, query) &&
      inProject(t.projectPath, query.projectPath) &&
      (query.all || t.status !== "deleted")
    );
  });
  for (const id of ids) {
    const { derived, rows } = await deriveFromAdapter(adapter, id, metas.get(id));
    threads.set(id, derived.thread);
    for (const row of rows) scan.add(row);
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
 * Full-text search over titles, message text, tool names and arguments: FTS5 when the thread store
 * has it, else a scan with the same results shape. `engine` in the result says which ran.
 */
export async function searchThreads(
  adapter: StorageAdapter,
  home: string,
  query: SearchQuery,
  options: { engine?: "fts5" | "scan" } = {},
): Promise<SearchResult> {
  const terms = queryTerms(query.text);
  if (terms.length === 0) throw badInput("search query has no words to look for", { field: "query" });
  if (options.engine !== "scan") {
    const store = await openThreads(adapter, home);
    try {
      if (store.search) return store.search(query, terms);
    } finally {
      store.close();
    }
  }
  return scanSearch(adapter, query, terms);
}

/** Turn by turn: prompt, tool calls, response and outcome (the last `limit` turns when given). */
export async function turnItemsView(
  adapter: StorageAdapter,
  home: string,
  sessionId: string,
  limit?: number,
): Promise<TurnItem[]> {
  const store = await openThreads(adapter, home);
  try {
    if (!store.getThread(sessionId)) throw notFound(`session ${sessionId} not found`);
    const turns = store.getTurns(sessionId);
    return (limit === undefined ? turns : turns.slice(-limit)).map((t) => ({
      number: t.number,
      prompt: t.prompt,
      tools: t.toolCalls.map((c) => ({
        name: c.name,
        ...(c.args !== undefined ? { args: c.args } : {}),
        ...(c.failed ? { failed: true } : {}),
        ...(c.deniedBy ? { deniedBy: c.deniedBy } : {}),
        ...(c.durationMs !== undefined ? { durationMs: c.durationMs } : {}),
      })),
      ...(t.response !== undefined ? { response: t.response } : {}),
      outcome: t.outcome,
      startedAt: t.startedAt,
      durationMs: t.endedAt - t.startedAt,
    }));
  } finally {
    store.close();
  }
}

/** Threads (sessions as the thread store sees them: with turn and tool-call counts, goals). */
export async function listThreads(
  adapter: StorageAdapter,
  home: string,
  filter?: ThreadFilter,
): Promise<Thread[]> {
  const store = await openThreads(adapter, home);
  try {
    return store.listThreads(filter);
  } finally {
    store.close();
  }
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
