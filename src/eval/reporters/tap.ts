/**
 * TAP version 14: one subtest per case (indented 4 spaces), one test point per session × assertion,
 * then the case's own test point. Failures carry a YAML diagnostic block (`message`, `severity`,
 * `at`, `data: {expect, got}`) between `---` and `...`, indented 2 spaces under the point.
 * "Could not evaluate" is `not ok` with `severity: error` (never a SKIP, which TAP counts as ok).
 */
import { type CaseResult, type CheckResult, type EvalReport, failuresTolerated } from "../report.ts";
import type { RunError } from "../run-error.ts";

const escapeDesc = (s: string) => s.replace(/\\/g, "\\\\").replace(/#/g, "\\#").replace(/\n/g, " ");

function yamlBlock(ch: CheckResult, file: string, sessionId: string | undefined, indent: string): string[] {
  const at: Record<string, unknown> = { file, line: ch.line };
  if (sessionId) at.session = sessionId;
  if (ch.seq !== undefined) at.seq = ch.seq;
  if (ch.callIndex !== undefined) at.callIndex = ch.callIndex;
  if (ch.step !== undefined) at.step = ch.step;
  const doc: Record<string, unknown> = {
    message: ch.message,
    severity: ch.verdict === "error" ? "error" : "fail",
    at,
  };
  if (ch.expected !== undefined || ch.actual !== undefined)
    doc.data = { expect: ch.expected ?? null, got: ch.actual ?? null };
  if (ch.diffs?.length) doc.diffs = ch.diffs;
  const body = Bun.YAML.stringify(doc, null, 2).trimEnd().split("\n");
  return [`${indent}---`, ...body.map((l) => `${indent}${l}`), `${indent}...`];
}

function points(k: CaseResult): { ok: boolean; desc: string; diag?: CheckResult; session?: string }[] {
  const out: { ok: boolean; desc: string; diag?: CheckResult; session?: string }[] = [];
  const tolerates = failuresTolerated(k);
  for (const s of k.sessions) {
    if (s.error) {
      out.push({
        ok: false,
        desc: `${s.sessionId} could not be evaluated`,
        session: s.sessionId,
        diag: {
          name: "session",
          label: "session",
          line: s.line ?? k.line,
          verdict: "error",
          message: s.error,
        },
      });
    }
    for (const ch of s.checks) {
      const tolerated = tolerates && ch.verdict === "fail";
      out.push({
        ok: ch.verdict === "pass" || tolerated,
        desc: `${s.sessionId} › ${ch.label}${tolerated ? " (failed, tolerated by passRate)" : ""}`,
        session: s.sessionId,
        ...(ch.verdict !== "pass" ? { diag: ch } : {}),
      });
    }
  }
  for (const a of k.aggregates)
    out.push({
      ok: a.verdict === "pass",
      desc: `(selection) › ${a.label}`,
      ...(a.verdict !== "pass" ? { diag: a } : {}),
    });
  return out;
}

/** Render the report as a TAP 14 stream. */
export function renderTap(report: EvalReport): string {
  const out = ["TAP version 14", `1..${report.cases.length}`];
  report.cases.forEach((k, i) => {
    const n = i + 1;
    if (k.verdict === "skip") {
      out.push(`ok ${n} - ${escapeDesc(k.id)} # SKIP ${escapeDesc(k.skipReason ?? "")}`);
      return;
    }
    const pts = points(k);
    out.push(`# Subtest: ${escapeDesc(k.id)}`);
    out.push(`    1..${pts.length}`);
    pts.forEach((p, j) => {
      out.push(`    ${p.ok ? "ok" : "not ok"} ${j + 1} - ${escapeDesc(p.desc)}`);
      if (p.diag) out.push(...yamlBlock(p.diag, k.file, p.session, "      "));
    });
    out.push(`${k.verdict === "pass" ? "ok" : "not ok"} ${n} - ${escapeDesc(k.id)}`);
    if (k.verdict !== "pass") {
      const first = pts.find((p) => !p.ok)?.diag;
      const msg = first ? first.message : k.verdict;
      out.push(
        "  ---",
        ...Bun.YAML.stringify(
          {
            message: msg,
            severity: k.verdict === "error" ? "error" : "fail",
            at: { file: k.file, line: k.line },
          },
          null,
          2,
        )
          .trimEnd()
          .split("\n")
          .map((l) => `  ${l}`),
        "  ...",
      );
    }
  });
  return `${out.join("\n")}\n`;
}

/** An eval that could not run as TAP: a bail-out with the line printed on stderr. */
export const renderTapRunError = (e: RunError): string =>
  `TAP version 14\nBail out! ${escapeDesc(e.error.message)}\n`;
