/**
 * Search without an index: a streaming BM25 scan over search rows that returns what the FTS5
 * index returns. Same words (words.ts), each term a word prefix, FTS5's own BM25 formula over the
 * same statistics (row count, average length and rows per term cover every row fed, as FTS5's
 * cover the whole table), and the same order: score, then time, then thread id, then the row's
 * place in its thread (the index's rowid order).
 */
import type { SearchRow } from "./search-text.ts";
import { foldedWords, snippet, termCounts } from "./words.ts";

interface Matched {
  row: SearchRow;
  /** Feeding order: within a thread, the row's place (rows are fed a thread at a time). */
  order: number;
  tf: number[];
  length: number;
}

export interface ScanResult {
  total: number;
  results: { row: SearchRow; score: number; snippet: string }[];
}

/** Feed every row (`add`), then take the best `limit` (`top`). */
export function createScan(terms: string[], keep: (row: SearchRow) => boolean) {
  let rows = 0;
  let wordsTotal = 0;
  const df = terms.map(() => 0);
  const matched: Matched[] = [];
  return {
    add(row: SearchRow): void {
      const words = foldedWords(row.text);
      rows++;
      wordsTotal += words.length;
      const tf = termCounts(words, terms);
      tf.forEach((n, i) => {
        if (n > 0) df[i]!++;
      });
      if (tf.every((n) => n > 0) && keep(row)) matched.push({ row, order: rows, tf, length: words.length });
    },
    top(limit: number): ScanResult {
      const avg = wordsTotal / Math.max(1, rows);
      const idf = df.map((d) => Math.max(1e-6, Math.log((rows - d + 0.5) / (d + 0.5))));
      const k1 = 1.2;
      const b = 0.75;
      const scored = matched.map((m) => ({
        m,
        score: m.tf.reduce(
          (sum, tf, i) => sum + (idf[i]! * tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * m.length) / avg)),
          0,
        ),
      }));
      scored.sort(
        (x, y) =>
          y.score - x.score ||
          x.m.row.timestamp - y.m.row.timestamp ||
          (x.m.row.threadId < y.m.row.threadId ? -1 : x.m.row.threadId > y.m.row.threadId ? 1 : 0) ||
          x.m.order - y.m.order,
      );
      return {
        total: matched.length,
        results: scored
          .slice(0, limit)
          .map(({ m, score }) => ({ row: m.row, score, snippet: snippet(m.row.text, terms) })),
      };
    },
  };
}
