/**
 * JUnit XML in the subset GitLab, Jenkins and most tools read: one <testsuite> per case, one
 * <testcase> per session × assertion (plus the case-level aggregates). Failure text goes in the
 * element body (GitLab does not show the message attribute), "could not evaluate" is <error>, not
 * <failure>, and test names are unique within a suite (GitLab keeps only the first of duplicates).
 */
import type { Verdict } from "../outcome.ts";
import { show } from "../outcome.ts";
import { type CaseResult, type CheckResult, type EvalReport, failuresTolerated } from "../report.ts";
import type { RunError } from "../run-error.ts";

/** Escape text for XML, dropping characters XML 1.0 cannot carry. */
export function xmlEscape(s: string): string {
  return s
    .replace(/[^\x09\x0A\x0D\x20-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu, "")
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&apos;");
}

const attrs = (o: Record<string, string | number | undefined>) =>
  Object.entries(o)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => ` ${k}="${xmlEscape(String(v))}"`)
    .join("");

/** The full explanation of a check, as the body of a failure or error element. */
export function explain(ch: CheckResult, file: string, sessionId?: string): string {
  const lines = [
    ch.message,
    `at ${file}:${ch.line}${sessionId ? ` session ${sessionId}` : ""}${ch.seq !== undefined ? ` seq ${ch.seq}` : ""}${ch.callIndex !== undefined ? ` call #${ch.callIndex}` : ""}${ch.step !== undefined ? ` step ${ch.step}` : ""}`,
  ];
  if (ch.expected !== undefined) lines.push(`expected: ${show(ch.expected, 2000)}`);
  if (ch.actual !== undefined) lines.push(`actual:   ${show(ch.actual, 2000)}`);
  for (const d of ch.diffs ?? [])
    lines.push(`arg ${d.path || "(args)"}: expected ${d.expected}, got ${d.actual}`);
  return lines.join("\n");
}

interface Row {
  name: string;
  line: number;
  verdict: Verdict | "skip";
  body?: string;
  message?: string;
  type?: string;
  out?: string;
}

function rowsOf(k: CaseResult): Row[] {
  if (k.verdict === "skip") return [{ name: "(case)", line: k.line, verdict: "skip", message: k.skipReason }];
  const rows: Row[] = [];
  const tolerates = failuresTolerated(k);
  for (const s of k.sessions) {
    if (s.error)
      rows.push({
        name: `${s.sessionId} › session`,
        line: s.line ?? k.line,
        verdict: "error",
        message: s.error,
        body: s.error,
        type: "could-not-evaluate",
      });
    for (const ch of s.checks) {
      const tolerated = tolerates && ch.verdict === "fail";
      rows.push({
        name: `${s.sessionId} › ${ch.label}`,
        line: ch.line,
        verdict: tolerated ? "pass" : ch.verdict,
        message: ch.message,
        body: explain(ch, k.file, s.sessionId),
        type: ch.verdict === "error" ? "could-not-evaluate" : ch.name,
        ...(tolerated ? { out: `failed, tolerated by passRate:\n${explain(ch, k.file, s.sessionId)}` } : {}),
      });
    }
  }
  for (const a of k.aggregates) {
    rows.push({
      name: `(selection) › ${a.label}`,
      line: a.line,
      verdict: a.verdict,
      message: a.message,
      body: explain(a, k.file),
      type: a.verdict === "error" ? "could-not-evaluate" : a.name,
    });
  }
  // Unique names within the suite: GitLab keeps only the first of duplicates.
  const seen = new Map<string, number>();
  for (const r of rows) {
    const n = (seen.get(r.name) ?? 0) + 1;
    seen.set(r.name, n);
    if (n > 1) r.name = `${r.name} #${n}`;
  }
  return rows;
}

/** Render the report as JUnit XML. */
export function renderJunit(report: EvalReport): string {
  const suites = report.cases.map((k) => ({ k, rows: rowsOf(k) }));
  const count = (rows: Row[], v: string) => rows.filter((r) => r.verdict === v).length;
  const all = suites.flatMap((s) => s.rows);
  const time = (report.durationMs / 1000).toFixed(3);
  const out = ['<?xml version="1.0" encoding="UTF-8"?>'];
  out.push(
    `<testsuites${attrs({ name: "freecode eval", tests: all.length, failures: count(all, "fail"), errors: count(all, "error"), skipped: count(all, "skip"), time })}>`,
  );
  for (const { k, rows } of suites) {
    out.push(
      `  <testsuite${attrs({ name: k.id, file: k.file, tests: rows.length, failures: count(rows, "fail"), errors: count(rows, "error"), skipped: count(rows, "skip"), time: "0" })}>`,
    );
    for (const r of rows) {
      const open = `    <testcase${attrs({ classname: k.id, name: r.name, file: k.file, line: r.line, time: "0" })}`;
      if (r.verdict === "pass" && !r.out) {
        out.push(`${open}/>`);
        continue;
      }
      out.push(`${open}>`);
      if (r.verdict === "fail")
        out.push(
          `      <failure${attrs({ message: r.message, type: r.type })}>${xmlEscape(r.body ?? "")}</failure>`,
        );
      if (r.verdict === "error")
        out.push(
          `      <error${attrs({ message: r.message, type: r.type })}>${xmlEscape(r.body ?? "")}</error>`,
        );
      if (r.verdict === "skip") out.push(`      <skipped${attrs({ message: r.message })}/>`);
      if (r.out) out.push(`      <system-out>${xmlEscape(r.out)}</system-out>`);
      out.push("    </testcase>");
    }
    out.push("  </testsuite>");
  }
  out.push("</testsuites>");
  return `${out.join("\n")}\n`;
}

/**
 * An eval that could not run as JUnit: one suite, one testcase in <error> carrying the line printed
 * on stderr, at the file and line it names (a file from an earlier run was left as it was).
 */
export function renderJunitRunError(e: RunError): string {
  const where = { file: e.error.file, line: e.error.line };
  const counts = { tests: 1, failures: 0, errors: 1, skipped: 0, time: "0" };
  return `${[
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites${attrs({ name: "freecode eval", ...counts })}>`,
    `  <testsuite${attrs({ name: "freecode eval", file: e.error.file, ...counts })}>`,
    `    <testcase${attrs({ classname: "freecode eval", name: "(run) › could not run", ...where, time: "0" })}>`,
    `      <error${attrs({ message: e.error.message, type: e.error.code })}>${xmlEscape(e.error.message)}</error>`,
    "    </testcase>",
    "  </testsuite>",
    "</testsuites>",
  ].join("\n")}\n`;
}
