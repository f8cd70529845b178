/**
 * The result of an eval run: cases → sessions → checks, plus the case-level aggregates (pass rate,
 * pass^k, bounds over the selection). Every reporter renders this one shape; `--json` prints it.
 */
import type { Outcome, Verdict } from "./outcome.ts";

/** One assertion's outcome, with where it is written in the case file. */
export interface CheckResult extends Outcome {
  /** The assertion (`expectTool`, `passRate`, …). */
  name: string;
  label: string;
  line: number;
}

export interface SessionResult {
  sessionId: string;
  file?: string;
  verdict: Verdict;
  /** Why the session could not be evaluated (missing, corrupt, still running). */
  error?: string;
  /** Where in the case file that error points, when not at the case (a missing id: its own line). */
  line?: number;
  checks: CheckResult[];
}

export type CaseVerdict = Verdict | "skip";

export interface CaseResult {
  id: string;
  file: string;
  line: number;
  description?: string;
  verdict: CaseVerdict;
  skipReason?: string;
  sessions: SessionResult[];
  /** Case-level checks over the whole selection. */
  aggregates: CheckResult[];
  counts: { sessions: number; passed: number; failed: number; errored: number };
}

export interface EvalReport {
  version: 1;
  startedAt: number;
  durationMs: number;
  /** Sessions folded (each once, however many cases selected it), and the processes that did it. */
  sessionsFolded: number;
  processes: number;
  summary: { cases: number; passed: number; failed: number; errored: number; skipped: number };
  /** 0 every case passed, 1 a case failed, 2 a case could not be evaluated. */
  exitCode: 0 | 1 | 2;
  cases: CaseResult[];
}

/**
 * A case's sessions in a few words — how many, how many failed, how many could not be evaluated
 * (`3 sessions, 1 failed`) — never "passed": a case whose sessions all passed may still fail or
 * go unevaluated on a check over the whole selection (a summary table said `1/1 passed` there).
 */
export function describeSessions(counts: CaseResult["counts"]): string {
  const parts = [`${counts.sessions} session${counts.sessions === 1 ? "" : "s"}`];
  if (counts.failed) parts.push(`${counts.failed} failed`);
  if (counts.errored) parts.push(`${counts.errored} could not be evaluated`);
  return parts.join(", ");
}

/** The exit code for a set of case verdicts: "could not evaluate" outranks "failed". */
export function exitCodeOf(cases: { verdict: CaseVerdict }[]): 0 | 1 | 2 {
  if (cases.some((c) => c.verdict === "error")) return 2;
  if (cases.some((c) => c.verdict === "fail")) return 1;
  return 0;
}

/**
 * Whether the case's failed sessions are within its pass rate (`passRate` was checked and held), so
 * each reporter shows their failures as tolerated — whatever else decides the case's verdict: beside
 * a check that could not be evaluated, the same failure was a JUnit <failure>, in a passing case a
 * pass "tolerated by passRate".
 */
export const failuresTolerated = (c: CaseResult): boolean =>
  c.aggregates.some((a) => a.name === "passRate" && a.verdict === "pass");

/** Every failed (and not tolerated) or unevaluable check of a case, with its session, in report order. */
export function problemsOf(c: CaseResult): { sessionId?: string; check: CheckResult }[] {
  const out: { sessionId?: string; check: CheckResult }[] = [];
  const tolerated = failuresTolerated(c);
  for (const s of c.sessions) {
    if (s.error)
      out.push({
        sessionId: s.sessionId,
        check: {
          name: "session",
          label: "session",
          line: s.line ?? c.line,
          verdict: "error",
          message: s.error,
        },
      });
    for (const ch of s.checks)
      if (ch.verdict === "error" || (ch.verdict === "fail" && !tolerated))
        out.push({ sessionId: s.sessionId, check: ch });
  }
  for (const a of c.aggregates) if (a.verdict !== "pass") out.push({ check: a });
  return out;
}
