/**
 * One session, once: fold its rollout into a Trace, decide whether it can be evaluated at all
 * (missing, corrupt or still running is "could not evaluate", never "failed"), then run the checks of
 * every case that selected it. Used in-process and by worker processes alike.
 */
import { FreecodeError } from "../errors.ts";
import type { TraceOptions } from "../rollout/folds/trace.ts";
import type { Trace } from "../rollout/folds/trace-types.ts";
import { loadTrace } from "../rollout/load.ts";
import { ownerIsGone } from "../session/status.ts";
import type { StorageAdapter } from "../storage/contract.ts";
import type { Timed } from "./assertions/health.ts";
import type { CompiledCase } from "./compile.ts";
import { cannot, type Outcome } from "./outcome.ts";
import type { SessionRef } from "./sessions.ts";

export interface SessionJob {
  ref: SessionRef;
  /** Indices of the cases that selected this session. */
  cases: number[];
}

export interface SessionEval {
  sessionId: string;
  file?: string;
  /** The trace's start (for time selectors on sessions without meta). */
  startedAt: number;
  /** Where the trace says it ran (for project selectors on sessions whose meta does not say). */
  projectPath?: string;
  error?: string;
  results: { caseIndex: number; outcomes: Outcome[]; points: Timed[] }[];
}

export interface EvaluateOptions {
  adapter?: StorageAdapter;
  trace?: TraceOptions;
  /** Evaluate sessions that look still running instead of setting them aside. */
  includeRunning?: boolean;
  now?: number;
}

/**
 * Why a trace's log cannot be trusted (empty, or a line that is not a torn last one could not be
 * read: what it held is missing from every check), or undefined. `freecode eval` sets such a session
 * aside; the library's matchers fail in both directions. A log read from a file (`--sessions`) is
 * named by it: among a folder of logs, "line 5" alone did not say which to open.
 */
export function untrustedLog(trace: Trace, file?: string): string | undefined {
  const log = file === undefined ? "rollout log" : `rollout log ${file}`;
  const corrupt = trace.parseErrors.find((e) => !e.torn);
  const more = trace.parseErrors.length > 1 ? ` (and ${trace.parseErrors.length - 1} more)` : "";
  // No line an event: an agent's own transcript given where a rollout log goes, most likely (a
  // Claude Code transcript of 38 lines was said to have "no events", and nothing else).
  const transcript =
    "an agent's own transcript? `freecode import auto <path>` makes a session and a rollout log of it";
  if (trace.eventCount === 0 && corrupt)
    return `the ${log} holds no rollout event: line ${corrupt.line ?? "?"}: ${corrupt.message}${more} (${transcript})`;
  if (trace.eventCount === 0 && trace.skippedEvents)
    return `the ${log} holds no rollout event: its ${trace.skippedEvents} line${trace.skippedEvents === 1 ? " is" : "s are"} of types the event catalogue does not know (${transcript})`;
  if (trace.eventCount === 0) return `the ${log} has no events`;
  if (!corrupt) return undefined;
  return `corrupt ${log}: line ${corrupt.line ?? "?"}: ${corrupt.message}${more}`;
}

/** Why a trace cannot be evaluated, or undefined when it can. */
export function unevaluable(trace: Trace, ref: SessionRef, options: EvaluateOptions): string | undefined {
  const untrusted = untrustedLog(trace, ref.file);
  if (untrusted) return untrusted;
  if (ref.metaProblem) return `its meta.json cannot be read: ${ref.metaProblem}`;
  if (options.includeRunning) return undefined;
  const meta = ref.meta;
  if (meta?.status === "running") {
    // Left `running` by a process that is gone: a crash, not work in progress (crash recovery turns
    // it `interrupted` on the next start of a writer; eval only reads).
    if (!ownerIsGone(meta)) return "the session is still running (its status is running)";
    return undefined;
  }
  // A session the agent's store keeps says whether it runs; only a log without a meta, or an
  // imported transcript (whose agent never told us), is judged by its last event's age; unless
  // it was imported with `--finished` (the agent was done), which marks its source `finished`.
  if (meta?.status !== undefined && meta.source === undefined) return undefined;
  if ((meta?.source as { finished?: unknown } | undefined)?.finished === true) return undefined;
  const idle = (options.now ?? Date.now()) - trace.endedAt;
  const hangMs = trace.hangMs ?? options.trace?.hangMs ?? 300_000;
  // A last event ahead of this clock (a writer whose clock runs ahead) is as fresh, within the same
  // bound either way: it was evaluated mid-run; a date far ahead (mangled) keeps nothing waiting.
  if (!trace.ended && Math.abs(idle) < hangMs) {
    const when =
      idle >= 0 ? `${Math.round(idle / 1000)} s ago` : `${Math.round(-idle / 1000)} s ahead of this clock`;
    return `the session looks still running (last event ${when}, no session.ended); use --include-running to evaluate it anyway`;
  }
  return undefined;
}

/** Fold one session and run the checks of the cases that selected it. */
export async function evaluateSession(
  job: SessionJob,
  compiled: CompiledCase[],
  options: EvaluateOptions,
): Promise<SessionEval> {
  const { ref } = job;
  const base = { sessionId: ref.sessionId, ...(ref.file ? { file: ref.file } : {}) };
  let trace: Trace;
  try {
    const source = ref.file
      ? { file: ref.file, sessionId: ref.sessionId }
      : { adapter: options.adapter!, sessionId: ref.sessionId };
    trace = await loadTrace(source, options.trace);
  } catch (error) {
    const message =
      error instanceof FreecodeError ? error.message : `cannot read the rollout: ${(error as Error).message}`;
    return { ...base, startedAt: 0, error: message, results: [] };
  }
  // A log that does not say where its session ran (recorded before session.started carried it):
  // the meta does, when the session comes from a store or has a meta.json beside its log.
  if (trace.projectPath === undefined && ref.meta?.projectPath) trace.projectPath = ref.meta.projectPath;
  const where = trace.projectPath === undefined ? {} : { projectPath: trace.projectPath };
  const why = unevaluable(trace, ref, options);
  if (why) return { ...base, startedAt: trace.startedAt, ...where, error: why, results: [] };
  const results = job.cases.map((caseIndex) => {
    const c = compiled[caseIndex]!;
    const outcomes = c.sessionChecks.map((check) => {
      try {
        return check.run(trace);
      } catch (error) {
        return cannot(`internal error in ${check.exp.name}: ${(error as Error).message}`);
      }
    });
    const points = c.selectionChecks.map((check) => check.collect(trace));
    return { caseIndex, outcomes, points };
  });
  return { ...base, startedAt: trace.startedAt, ...where, results };
}
