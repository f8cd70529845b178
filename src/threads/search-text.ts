/**
 * What search sees of a thread — its title, each message's text, each tool call's name and
 * arguments, each call's output (`output-text.ts`), one row each — the query (validated: it comes
 * from outside) and the filters both engines apply the same way. Words and their folding are in words.ts, the scan in scan.ts.
 */
import * as v from "valibot";
import { badInput } from "../errors.ts";
import { isWindowsPath, windowsForm } from "../storage/project-key.ts";
import type { StoredMessage } from "../storage/records.ts";
import { messageText } from "./derive.ts";
import { argumentsText, outputText } from "./output-text.ts";
import type { DerivedThread } from "./types.ts";
import { MARK_CLOSE, MARK_OPEN, queryTerms } from "./words.ts";

export { queryTerms };

export const ROW_KINDS = ["title", "message", "tool", "output"] as const;
export type RowKind = (typeof ROW_KINDS)[number];

export interface SearchRow {
  threadId: string;
  kind: RowKind;
  /** The turn the row belongs to (0 for the title and messages before the first prompt). */
  turn: number;
  role?: string;
  tool?: string;
  timestamp: number;
  text: string;
}

const time = v.pipe(v.number(), v.finite());

export const SearchQuerySchema = v.object({
  text: v.string(),
  /** Only threads of this project (the path itself or below it). */
  projectPath: v.optional(v.string()),
  /** Only rows at or after this time (epoch ms). */
  since: v.optional(time),
  /** Only rows at or before this time (epoch ms). */
  until: v.optional(time),
  /** Only the calls of this tool and their outputs (case-insensitive). */
  tool: v.optional(v.string()),
  /** Include soft-deleted sessions. */
  all: v.optional(v.boolean()),
  /** At most this many hits (default 20; 0 counts the matches and returns none). */
  limit: v.optional(v.pipe(v.number(), v.safeInteger(), v.minValue(0))),
});
export type SearchQuery = v.InferOutput<typeof SearchQuerySchema>;

/** A query from outside, checked: a one-line `bad_input` naming the field otherwise. */
export function checkSearchQuery(query: unknown): SearchQuery {
  const r = v.safeParse(SearchQuerySchema, query);
  if (!r.success) {
    const issue = r.issues[0];
    throw badInput(`invalid search query: ${issue.message}`, { field: v.getDotPath(issue) ?? "query" });
  }
  return r.output;
}

export interface SearchHit {
  sessionId: string;
  title: string;
  projectPath: string;
  kind: RowKind;
  turn: number;
  role?: string;
  tool?: string;
  timestamp: number;
  /** Higher is better (BM25). */
  score: number;
  /** The text around the match; matches between \u0002 and \u0003 (see `renderSnippet`). */
  snippet: string;
}

export interface SearchResult {
  query: string;
  engine: "fts5" | "scan";
  /** Matching rows in all (hits holds the best `limit`). */
  total: number;
  hits: SearchHit[];
  /** Sessions left out: their stored data cannot be read (a damaged meta.json), with why. */
  unreadable?: { id: string; message: string }[];
}

// The match markers, were they left in recorded text, would show as highlights.
const MARKERS = /[\u0002\u0003]/g;
/**
 * Terminal escape sequences (colours, cursor moves, titles, charset choices like `tput sgr0`'s
 * `ESC(B`, `ESC7`/`ESC8`): coloured command output pasted into a
 * prompt or printed by a tool glued `[31m` to the next word (`31mFAILED`), and `FAILED` was not found.
 */
const ESCAPES =
  /\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[()*+\-./#%][ -~]|[@-Z\\-_0-9<=>])/g;

/** Recorded text as search reads it: without escape sequences, match markers made spaces. */
const searchable = (text: string): string => text.replace(ESCAPES, "").replace(MARKERS, " ");

/** The search rows of one derived thread (a rollout-only thread's placeholder title is not one). */
export function searchRows(derived: DerivedThread, messages: StoredMessage[]): SearchRow[] {
  const { thread, turns } = derived;
  /** A row of recorded text, made searchable (`clean`: it is already). */
  const row = (r: Omit<SearchRow, "threadId">, clean = false): SearchRow => ({
    threadId: thread.id,
    ...r,
    text: clean ? r.text : searchable(r.text),
  });
  const rows: SearchRow[] = derived.untitled
    ? []
    : [row({ kind: "title", turn: 0, timestamp: thread.updatedAt, text: thread.title })];
  const turnOf = new Map<string, number>();
  for (const t of turns) for (const id of t.messageIds) turnOf.set(id, t.number);
  for (const m of messages) {
    // An image's alt text is words `session show` prints: searched with the message's text.
    const alts = m.parts.flatMap((p) =>
      p.type === "image" && typeof (p as { altText?: unknown }).altText === "string"
        ? [(p as { altText: string }).altText]
        : [],
    );
    const text = [messageText(m), ...alts].filter(Boolean).join("\n");
    if (text)
      rows.push(
        row({ kind: "message", turn: turnOf.get(m.id) ?? 0, role: m.role, timestamp: m.timestamp, text }),
      );
  }
  for (const t of turns) {
    // The provider error a turn ended on (a rate limit): found as the turn's `error`.
    if (t.error)
      rows.push(row({ kind: "message", turn: t.number, role: "error", timestamp: t.endedAt, text: t.error }));
    for (const c of t.toolCalls) {
      const args = c.args === undefined ? "" : ` ${argumentsText(c.args)}`;
      rows.push(
        row({ kind: "tool", turn: t.number, tool: c.name, timestamp: c.timestamp, text: `${c.name}${args}` }),
      );
      // Blank once cleaned (markers, escapes): no row.
      const output = c.result === undefined ? "" : searchable(outputText(c.result));
      if (output.trim())
        rows.push(
          row({ kind: "output", turn: t.number, tool: c.name, timestamp: c.timestamp, text: output }, true),
        );
    }
  }
  return rows;
}

/** Whether a row passes the filters that do not need the thread (time, tool). */
export function rowPasses(row: Pick<SearchRow, "tool" | "timestamp">, q: SearchQuery): boolean {
  if (q.since !== undefined && row.timestamp < q.since) return false;
  if (q.until !== undefined && row.timestamp > q.until) return false;
  if (q.tool !== undefined && (row.tool === undefined || row.tool.toLowerCase() !== q.tool.toLowerCase()))
    return false;
  return true;
}

/** The project filter, normalised once for both engines. */
export interface ProjectScope {
  /** The wanted path, without trailing separators (`/` for the root, `C:/` for a drive). */
  path: string;
  /** `path` followed by one separator: what a path below it starts with. */
  prefix: string;
  /** A Windows path: `\` and `/` are both separators, the drive letter in either case (`windowsForm`). */
  windows: boolean;
}

/** The scope of a `projectPath` filter: `C:\a\`, `c:/a` and `C:/a` are the same; `/a/` is `/a`. */
export function projectScope(wanted: string): ProjectScope {
  const windows = isWindowsPath(wanted);
  const slashed = windows ? windowsForm(wanted) : wanted;
  const trimmed = slashed.replace(/\/+$/, "");
  const path = trimmed === "" || /^[A-Za-z]:$/.test(trimmed) ? `${trimmed}/` : trimmed;
  return { path, prefix: path.endsWith("/") ? path : `${path}/`, windows };
}

/** Whether a thread's project path is the scope's path or below it. */
export function inProject(path: string, scope: ProjectScope | undefined): boolean {
  if (!scope) return true;
  const p = scope.windows ? windowsForm(path) : path;
  return p === scope.path || p.startsWith(scope.prefix);
}

/** Render a snippet: bold yellow matches on a colour terminal, `[match]` otherwise; one line. */
export function renderSnippet(snippet: string, color: boolean): string {
  const open = color ? "\x1b[1;33m" : "[";
  const close = color ? "\x1b[0m" : "]";
  return snippet.replace(/\s+/g, " ").replaceAll(MARK_OPEN, open).replaceAll(MARK_CLOSE, close).trim();
}
