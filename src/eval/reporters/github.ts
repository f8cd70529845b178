/**
 * GitHub Actions: `::error` annotations for failures and `::warning` for sessions that could not be
 * evaluated, pointing at the case file line so they land on the PR diff. GitHub keeps at most 10 of
 * each kind per step and drops the rest silently, so we emit 10 and say how many were left out; the
 * full table goes to the step summary (`$GITHUB_STEP_SUMMARY`).
 */
import { isAbsolute, relative, resolve } from "node:path";
import { describeSessions, type EvalReport, problemsOf } from "../report.ts";
import type { RunError } from "../run-error.ts";

/** At most this many annotations of each kind (GitHub's per-step limit). */
export const ANNOTATION_LIMIT = 10;

const escData = (s: string) => s.replace(/%/g, "%25").replace(/\r/g, "%0D").replace(/\n/g, "%0A");
const escProp = (s: string) => escData(s).replace(/:/g, "%3A").replace(/,/g, "%2C");

/**
 * GitHub places an annotation by a path relative to the repository root (`$GITHUB_WORKSPACE`), while
 * case files are named relative to where eval ran: a step with `working-directory: sub` would name
 * `cases/x.yaml` for `sub/cases/x.yaml`, and the annotation would land on no file of the diff. A
 * file outside the workspace keeps its name.
 */
function workspacePath(file: string, workspace: string | undefined): string {
  if (!workspace) return file;
  const rel = relative(resolve(workspace), resolve(file));
  return rel.startsWith("..") || isAbsolute(rel) ? file : rel.split("\\").join("/");
}

/** Workflow commands for the failures (stdout); paths relative to `workspace` (see `workspacePath`). */
export function renderGithub(report: EvalReport, workspace = process.env.GITHUB_WORKSPACE): string {
  const out: string[] = [];
  const kinds = { error: [] as string[], warning: [] as string[] };
  for (const k of report.cases) {
    if (k.verdict === "pass" || k.verdict === "skip") continue;
    for (const { sessionId, check } of problemsOf(k)) {
      const kind = check.verdict === "error" ? "warning" : "error";
      const where = [sessionId && `session ${sessionId}`, check.seq !== undefined && `seq ${check.seq}`]
        .filter(Boolean)
        .join(" ");
      const title = `${k.id}: ${check.label}${check.verdict === "error" ? " (could not evaluate)" : ""}`;
      kinds[kind].push(
        `::${kind} file=${escProp(workspacePath(k.file, workspace))},line=${check.line},title=${escProp(title)}::${escData(`${check.message}${where ? ` (${where})` : ""}`)}`,
      );
    }
  }
  for (const kind of ["error", "warning"] as const) {
    out.push(...kinds[kind].slice(0, ANNOTATION_LIMIT));
    const left = kinds[kind].length - ANNOTATION_LIMIT;
    if (left > 0)
      out.push(
        `::notice title=freecode eval::${left} more ${kind === "error" ? "failures" : "could-not-evaluate results"} not annotated (GitHub shows 10 per step); see the step summary`,
      );
  }
  return out.length ? `${out.join("\n")}\n` : "";
}

/**
 * An eval that could not run as an `::error` annotation on the file and line that stopped it (a bad
 * case file: its line; a `--sessions` path: the path alone), so the step shows why, not nothing.
 */
export function renderGithubRunError(e: RunError, workspace = process.env.GITHUB_WORKSPACE): string {
  const { file, line } = e.error;
  const props = [
    file !== undefined && `file=${escProp(workspacePath(file, workspace))}`,
    line !== undefined && `line=${line}`,
    `title=${escProp("freecode eval could not run")}`,
  ].filter(Boolean);
  return `::error ${props.join(",")}::${escData(e.error.message)}\n`;
}

const cell = (s: string) => s.replace(/\|/g, "\\|").replace(/\n/g, " ");

/** The Markdown table for `$GITHUB_STEP_SUMMARY`: every case, every problem. */
export function renderStepSummary(report: EvalReport): string {
  const s = report.summary;
  const icon = { pass: "✅", fail: "❌", error: "⚠️", skip: "⏭️" } as const;
  const out = [
    `### freecode eval: ${s.passed} passed, ${s.failed} failed, ${s.errored} could not be evaluated${s.skipped ? `, ${s.skipped} skipped` : ""}`,
    "",
    "| | case | sessions | file |",
    "|---|---|---|---|",
  ];
  for (const k of report.cases)
    out.push(
      `| ${icon[k.verdict]} | ${cell(k.id)} | ${describeSessions(k.counts)} | ${cell(`${k.file}:${k.line}`)} |`,
    );
  const problems = report.cases.flatMap((k) =>
    k.verdict === "pass" ? [] : problemsOf(k).map((p) => ({ k, ...p })),
  );
  if (problems.length) {
    out.push("", "| case | session | assertion | explanation | line |", "|---|---|---|---|---|");
    for (const { k, sessionId, check } of problems) {
      out.push(
        `| ${cell(k.id)} | ${cell(sessionId ?? "(selection)")} | ${cell(check.label)} | ${cell(`${check.verdict === "error" ? "could not evaluate: " : ""}${check.message}`)} | ${cell(`${k.file}:${check.line}`)} |`,
      );
    }
  }
  return `${out.join("\n")}\n`;
}
