/** Human output of `freecode import`: one paragraph per source, warnings after it. */
import type { ImportReport } from "../../../import/import.ts";
import { keepStrongest, outcomesIn, type SourceSummary, sessionCounts } from "../../../import/run.ts";
import type { WriteStatus } from "../../../import/write.ts";

function topSkipped(skipped: Record<string, number>): string {
  const entries = Object.entries(skipped).sort((a, b) => b[1] - a[1]);
  if (entries.length === 0) return "";
  const shown = entries.slice(0, 6).map(([k, n]) => `${k} ${n}`);
  return ` (${shown.join(", ")}${entries.length > 6 ? ", …" : ""})`;
}

/** `auto`'s files per agent: ` (3 claude, 1 codex)`. */
function byAgent(s: SourceSummary): string {
  const counts = Object.entries(s.agents ?? {});
  return counts.length === 0 ? "" : ` (${counts.map(([a, n]) => `${n} ${a}`).join(", ")})`;
}

/** One source as text. */
export function formatSource(s: SourceSummary): string {
  const skipped = Object.values(s.entries.skipped).reduce((a, b) => a + b, 0);
  return [
    `${s.agent} ${s.path}`,
    `  files:    ${s.files.found} found${byAgent(s)}, ${s.files.read} read, ${s.files.unchanged} unchanged${s.files.open ? `, ${s.files.open} still being written (read again next time)` : ""}${s.files.skipped ? `, ${s.files.skipped} named but not ${s.agent === "auto" ? "a transcript" : `${s.agent}'s`} (skipped)` : ""}${s.files.failed ? `, ${s.files.failed} named but not readable` : ""}`,
    `  sessions: ${s.sessions.created} created, ${s.sessions.updated} updated, ${s.sessions.unchanged} unchanged`,
    `  entries:  ${s.entries.imported} imported, ${skipped} skipped${topSkipped(s.entries.skipped)}`,
    ...(s.warnings.length ? [`  warnings: ${s.warnings.length}`] : []),
  ].join("\n");
}

/** The whole report as text (nothing when there were no sources: the command says so on stderr). */
export function formatReport(report: ImportReport): string {
  if (report.sources.length === 0) return "";
  return `${report.sources.map(formatSource).join("\n")}\n`;
}

/**
 * Totals over all sources (for the JSON document and watch lines). A session several sources fed
 * (an OpenCode export given beside its row dump) counts once, by its strongest outcome.
 */
export function totals(report: ImportReport) {
  const best = new Map<string, WriteStatus>();
  for (const s of report.sources) for (const [id, status] of outcomesIn(s)) keepStrongest(best, id, status);
  const t = { ...sessionCounts(best.values()), imported: 0, skipped: 0, warnings: 0 };
  for (const s of report.sources) {
    t.imported += s.entries.imported;
    t.skipped += Object.values(s.entries.skipped).reduce((a, b) => a + b, 0);
    t.warnings += s.warnings.length;
  }
  return t;
}

/** A warning as one line: `file:line message`. */
export const warningLine = (w: { file: string; line?: number; message: string }) =>
  `${w.file}${w.line ? `:${w.line}` : ""}: ${w.message}`;
