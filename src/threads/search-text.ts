/**
 * What search sees of a thread — its title, each message's text, each tool call's name and
 * arguments, one row each — and the scan fallback over those rows. The scan tokenizes like SQLite
 * FTS5's `unicode61 remove_diacritics 2`, matches each query term as a token prefix (like `"term"*`)
 * and ranks with FTS5's own BM25 formula, so both engines return the same hits in the same shape.
 */
import type { StoredMessage } from "../storage/records.ts";
import { messageText } from "./derive.ts";
import type { DerivedThread } from "./types.ts";

export const ROW_KINDS = ["title", "message", "tool"] as const;
export type RowKind = (typeof ROW_KINDS)[number];

export interface SearchRow {
  threadId: string;
  kind: RowKind;
  /** The turn the row belongs to (0 for the title). */
  turn: number;
  role?: string;
  tool?: string;
  timestamp: number;
  text: string;
}

export interface SearchQuery {
  text: string;
  /** Only threads of this project (the path itself or below it). */
  projectPath?: string;
  since?: number;
  until?: number;
  /** Only tool-call rows of this tool (case-insensitive). */
  tool?: string;
  /** Include soft-deleted sessions. */
  all?: boolean;
  limit?: number;
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
}

export const MARK_OPEN = "\u0002";
export const MARK_CLOSE = "\u0003";

/** Fold a token the way unicode61 with remove_diacritics does: decompose, drop marks, lower-case. */
export const foldToken = (s: string) =>
  s
    .normalize("NFKD")
    .replace(/\p{M}+/gu, "")
    .toLowerCase();

const TOKEN = /[\p{L}\p{N}]+/gu;

/** The query's terms (empty when it has no letters or digits). */
export function queryTerms(text: string): string[] {
  return [...new Set((text.match(TOKEN) ?? []).map(foldToken).filter(Boolean))];
}

/** The FTS5 MATCH expression for terms: every term, each as a token prefix. */
export const ftsExpression = (terms: string[]) => terms.map((t) => `"${t}"*`).join(" AND ");

/** The search rows of one derived thread. */
export function searchRows(derived: DerivedThread, messages: StoredMessage[]): SearchRow[] {
  const { thread, turns } = derived;
  const rows: SearchRow[] = [
    { threadId: thread.id, kind: "title", turn: 0, timestamp: thread.updatedAt, text: thread.title },
  ];
  const turnOf = new Map<string, number>();
  for (const t of turns) for (const id of t.messageIds) turnOf.set(id, t.number);
  for (const m of messages) {
    const text = messageText(m);
    if (text)
      rows.push({
        threadId: thread.id,
        kind: "message",
        turn: turnOf.get(m.id) ?? 0,
        role: m.role,
        timestamp: m.timestamp,
        text,
      });
  }
  for (const t of turns) {
    for (const c of t.toolCalls) {
      const args =
        c.args === undefined ? "" : ` ${typeof c.args === "string" ? c.args : JSON.stringify(c.args)}`;
      rows.push({
        threadId: thread.id,
        kind: "tool",
        turn: t.number,
        tool: c.name,
        timestamp: c.timestamp,
        text: `${c.name}${args}`,
      });
    }
  }
  return rows;
}

/** Whether a row passes the filters that do not need the thread (time, tool). */
export function rowPasses(row: Pick<SearchRow, "kind" | "tool" | "timestamp">, q: SearchQuery): boolean {
  if (q.since !== undefined && row.timestamp < q.since) return false;
  if (q.until !== undefined && row.timestamp > q.until) return false;
  if (q.tool !== undefined && (row.kind !== "tool" || row.tool?.toLowerCase() !== q.tool.toLowerCase()))
    return false;
  return true;
}

/** The project filter: the path itself or anything below it. */
export const inProject = (path: string, wanted: string | undefined) =>
  wanted === undefined || path === wanted || path.startsWith(wanted.endsWith("/") ? wanted : `${wanted}/`);

interface Scored {
  row: SearchRow;
  hits: number[];
  tokens: { start: number; end: number; norm: string }[];
}

/**
 * A streaming BM25 scan: feed every row (`add`), then `top(limit)`. Statistics (row count, average
 * length, rows per term) cover every row fed, as FTS5's cover the whole table.
 */
export function createScan(terms: string[], keep: (row: SearchRow) => boolean) {
  let rows = 0;
  let tokensTotal = 0;
  const df = terms.map(() => 0);
  const matched: Scored[] = [];
  return {
    add(row: SearchRow) {
      const tokens = [...row.text.matchAll(TOKEN)].map((m) => ({
        start: m.index,
        end: m.index + m[0].length,
        norm: foldToken(m[0]),
      }));
      rows++;
      tokensTotal += tokens.length;
      const tf = terms.map((t) => tokens.reduce((n, tok) => n + (tok.norm.startsWith(t) ? 1 : 0), 0));
      tf.forEach((n, i) => {
        if (n > 0) df[i]!++;
      });
      if (tf.every((n) => n > 0) && keep(row)) matched.push({ row, hits: tf, tokens });
    },
    top(limit: number): { total: number; results: { row: SearchRow; score: number; snippet: string }[] } {
      const avg = tokensTotal / Math.max(1, rows);
      const idf = df.map((d) => Math.max(1e-6, Math.log((rows - d + 0.5) / (d + 0.5))));
      const k1 = 1.2;
      const b = 0.75;
      const scored = matched.map((s) => {
        const len = s.tokens.length;
        const score = s.hits.reduce(
          (sum, tf, i) => sum + (idf[i]! * tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * len) / avg)),
          0,
        );
        return { s, score };
      });
      scored.sort((a, b2) => b2.score - a.score || a.s.row.timestamp - b2.s.row.timestamp);
      return {
        total: matched.length,
        results: scored
          .slice(0, limit)
          .map(({ s, score }) => ({ row: s.row, score, snippet: snippetOf(s, terms) })),
      };
    },
  };
}

const SNIPPET_TOKENS = 12;

/** Up to 12 tokens around the first match, matches marked, "…" where text was cut. */
function snippetOf(s: Scored, terms: string[]): string {
  const { tokens, row } = s;
  const isHit = (i: number) => terms.some((t) => tokens[i]!.norm.startsWith(t));
  const first = Math.max(
    0,
    tokens.findIndex((_, i) => isHit(i)),
  );
  const from = Math.max(0, Math.min(first - 3, tokens.length - SNIPPET_TOKENS));
  const to = Math.min(tokens.length, from + SNIPPET_TOKENS);
  let out = from > 0 ? "…" : "";
  let cursor = from > 0 ? tokens[from]!.start : 0;
  for (let i = from; i < to; i++) {
    const t = tokens[i]!;
    out += row.text.slice(cursor, t.start);
    out += isHit(i)
      ? `${MARK_OPEN}${row.text.slice(t.start, t.end)}${MARK_CLOSE}`
      : row.text.slice(t.start, t.end);
    cursor = t.end;
  }
  out += to < tokens.length ? "…" : row.text.slice(cursor);
  return out;
}

/** Render a snippet: bold yellow matches on a colour terminal, `[match]` otherwise; one line. */
export function renderSnippet(snippet: string, color: boolean): string {
  const open = color ? "\x1b[1;33m" : "[";
  const close = color ? "\x1b[0m" : "]";
  return snippet.replace(/\s+/g, " ").replaceAll(MARK_OPEN, open).replaceAll(MARK_CLOSE, close).trim();
}
