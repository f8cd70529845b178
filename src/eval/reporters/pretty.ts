/**
 * The default reporter, for people: one line per case, and for every failure or "could not
 * evaluate" the evidence — expected vs actual, session id, event seq, call index, differing arg
 * paths and the case file line. Colours only when asked (a TTY without NO_COLOR).
 */

import { escapeLine } from "../../util/one-line.ts";
import { show } from "../outcome.ts";
import { type CheckResult, describeSessions, type EvalReport, failuresTolerated } from "../report.ts";
import type { RunError } from "../run-error.ts";

const paint = (on: boolean) => (code: number, s: string) => (on ? `\x1b[${code}m${s}\x1b[0m` : s);

/** Render the report as text. */
export function renderPretty(report: EvalReport, options: { color?: boolean } = {}): string {
  const c = paint(options.color === true);
  const mark = { pass: c(32, "✓"), fail: c(31, "✗"), error: c(33, "!"), skip: c(90, "-") } as const;
  const out: string[] = [];

  const evidence = (ch: CheckResult, sessionId: string | undefined, file: string, indent: string) => {
    out.push(`${indent}${mark[ch.verdict]} ${c(1, ch.label)}  ${c(90, `${file}:${ch.line}`)}`);
    out.push(`${indent}  ${escapeLine(ch.message)}`);
    const where = [
      sessionId && `session ${sessionId}`,
      ch.seq !== undefined && `seq ${ch.seq}`,
      ch.callIndex !== undefined && `call #${ch.callIndex}`,
      ch.step !== undefined && `step ${ch.step}`,
    ].filter(Boolean);
    if (where.length) out.push(`${indent}  ${c(90, `at ${where.join(" · ")}`)}`);
    if (ch.verdict === "fail" && ch.expected !== undefined)
      out.push(`${indent}  ${c(32, "expected")} ${show(ch.expected, 200)}`);
    if (ch.verdict === "fail" && ch.actual !== undefined)
      out.push(`${indent}  ${c(31, "actual  ")} ${show(ch.actual, 200)}`);
    for (const d of ch.diffs ?? [])
      out.push(
        `${indent}  ${c(90, "arg")} ${escapeLine(d.path || "(args)")}: expected ${escapeLine(String(d.expected))}, got ${escapeLine(String(d.actual))}`,
      );
  };

  for (const k of report.cases) {
    const head = `${mark[k.verdict]} ${c(1, k.id)}  ${c(90, `${k.file}:${k.line}`)}`;
    if (k.verdict === "skip") {
      out.push(`${head}  skipped: ${k.skipReason}`);
      continue;
    }
    out.push(`${head}  ${describeSessions(k.counts)}${k.description ? c(90, ` — ${k.description}`) : ""}`);
    for (const s of k.sessions) {
      if (s.verdict === "pass") continue;
      const tolerated = s.verdict === "fail" && failuresTolerated(k) ? c(90, " (tolerated by passRate)") : "";
      // A missing id's own line in the case file, as the other reporters give it (it had none).
      const at = s.line !== undefined ? `  ${c(90, `${k.file}:${s.line}`)}` : "";
      out.push(`    ${mark[s.verdict]} ${s.sessionId}${tolerated}${at}`);
      if (s.error) out.push(`        ${c(33, "could not evaluate:")} ${escapeLine(s.error)}`);
      for (const ch of s.checks) if (ch.verdict !== "pass") evidence(ch, s.sessionId, k.file, "      ");
    }
    for (const a of k.aggregates) {
      if (a.verdict === "pass") out.push(`    ${mark.pass} ${a.label}: ${a.message}`);
      else evidence(a, undefined, k.file, "    ");
    }
  }
  const s = report.summary;
  const tally = [
    c(32, `${s.passed} passed`),
    s.failed ? c(31, `${s.failed} failed`) : `${s.failed} failed`,
    s.errored ? c(33, `${s.errored} could not be evaluated`) : `${s.errored} could not be evaluated`,
    ...(s.skipped ? [`${s.skipped} skipped`] : []),
  ];
  out.push("");
  out.push(
    `${s.cases} case${s.cases === 1 ? "" : "s"}: ${tally.join(", ")} · ${report.sessionsFolded} session${report.sessionsFolded === 1 ? "" : "s"} folded in ${report.durationMs} ms (${report.processes} process${report.processes === 1 ? "" : "es"})`,
  );
  return `${out.join("\n")}\n`;
}

/**
 * An eval that could not run, as pretty text in a report file: the stderr line alone (a file from a
 * passing run was left reading "1 passed"). On the terminal the stderr line says it already.
 */
export const renderPrettyRunError = (e: RunError): string => `${escapeLine(e.error.message)}\n`;
