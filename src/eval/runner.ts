/**
 * `freecode eval` as a library call: load the cases, list the recorded sessions, work out which case
 * selects which session, fold each selected session exactly once (over every core when there are
 * many), run every case's checks on it, and aggregate per case. Returns the report; printing and the
 * exit code are the CLI's business.
 */
import { dirname, resolve } from "node:path";
import type { Price } from "../rollout/folds/usage.ts";
import type { StorageAdapter } from "../storage/contract.ts";
import { aggregateCase } from "./aggregate.ts";
import { compileCase } from "./compile.ts";
import { type EvaluateOptions, evaluateSession, type SessionEval, type SessionJob } from "./evaluate.ts";
import { type LoadedCase, loadCases } from "./load-cases.ts";
import { projectMatches } from "./match/glob.ts";
import { evaluateAll, planFor } from "./pool.ts";
import { type EvalReport, exitCodeOf } from "./report.ts";
import {
  inTimeRange,
  normalizeSelector,
  type SessionRef,
  select,
  sessionsFromPath,
  sessionsFromStore,
} from "./sessions.ts";

export interface RunEvalOptions {
  /** Case files and directories. */
  cases: string[];
  /** Rollout files: a file, folder or glob (`--sessions`). */
  sessions?: string;
  /** Otherwise, the store to read sessions from, and how a worker process reopens it. */
  store?: { adapter: StorageAdapter; name?: string; home: string };
  prices?: Record<string, Price>;
  evaluate?: Omit<EvaluateOptions, "adapter">;
  /** Use exactly this many processes (1: this one; default: decided by size, see `planFor`). */
  workers?: number;
  /** Consider worker processes from this many selected sessions on (default 16). */
  parallelThreshold?: number;
}

/** Run the cases over the recorded sessions. Throws `bad_input` for bad case files or paths. */
export async function runEval(options: RunEvalOptions): Promise<EvalReport> {
  const startedAt = Date.now();
  const loaded: LoadedCase[] = loadCases(options.cases);
  const compiled = loaded.map((c) => compileCase(c, options.prices));
  const base: SessionRef[] = options.sessions
    ? sessionsFromPath(options.sessions)
    : options.store
      ? await sessionsFromStore(options.store.adapter)
      : [];

  // Which sessions each case selects; each distinct rollout is folded once for all of them.
  const selections = loaded.map((c) => select(c.input.sessions, base, dirname(resolve(c.file))));
  const jobs = new Map<string, SessionJob>();
  selections.forEach((sel, i) => {
    if (loaded[i]!.input.skip) return;
    for (const ref of sel.refs) {
      const key = ref.file ?? ref.sessionId;
      const job = jobs.get(key) ?? { ref, cases: [] };
      job.cases.push(i);
      jobs.set(key, job);
    }
  });

  const evaluate = { ...options.evaluate, now: options.evaluate?.now ?? Date.now() };
  // Workers open the store by name: the adapter's own when none is given (they opened the default
  // store instead, and found every log empty). A store that lives in this process only (memory)
  // would be empty in a child.
  const storeName = options.store ? (options.store.name ?? options.store.adapter.name) : undefined;
  const sharedStore =
    Boolean(options.sessions) ||
    (storeName !== "memory" && options.store?.adapter.capabilities.persistent !== false);
  const plan = sharedStore
    ? planFor([...jobs.values()], {
        ...(options.workers ? { workers: options.workers, forced: true } : {}),
        ...(options.parallelThreshold !== undefined ? { threshold: options.parallelThreshold } : {}),
      })
    : { processes: 1, children: false };
  const adapter = options.store?.adapter;
  const here = { ...evaluate, ...(adapter ? { adapter } : {}) };
  // Each session's result is kept as JSON text until the end, as a worker sends it: the fold's
  // allocations set off hundreds of collections, and text is one cell for the GC to skip, where a
  // result is some sixty objects to trace each time (measured: a tenth less CPU over 4,000 sessions).
  const local = async (shard: SessionJob[]) => {
    const out: string[] = [];
    for (const job of shard) out.push(JSON.stringify(await evaluateSession(job, compiled, here)));
    return out.map((line) => JSON.parse(line) as SessionEval);
  };
  const evals = await evaluateAll(
    [...jobs.values()],
    plan,
    {
      casePaths: options.cases,
      cwd: process.cwd(),
      prices: options.prices ?? {},
      evaluate,
      ...(options.store && !options.sessions ? { store: { name: storeName, home: options.store.home } } : {}),
    },
    local,
  );
  const byKey = new Map(evals.map((e) => [e.file ?? e.sessionId, e]));

  const cases = loaded.map((c, index) => {
    const sel = normalizeSelector(c.input.sessions);
    // Sessions whose meta does not say when or where they ran are placed by their trace, now that
    // it is folded. One whose start or project stays unknown (an unreadable log) is kept, to be
    // named as not evaluable; a corrupt or still-running one outside the window is left out.
    const refs = selections[index]!.refs.filter((r) => {
      const ev = byKey.get(r.file ?? r.sessionId);
      if (!ev) return true;
      const timed = sel.since !== undefined || sel.until !== undefined;
      if (timed && r.meta?.createdAt === undefined) {
        const unknown = ev.error !== undefined && ev.startedAt === 0;
        if (!unknown && !inTimeRange(sel, ev.startedAt)) return false;
      }
      if (sel.project && r.meta?.projectPath === undefined && !r.metaProblem) {
        if (ev.projectPath !== undefined) return projectMatches(sel.project, ev.projectPath);
        return ev.error !== undefined; // neither says where it ran: it cannot be this project's
      }
      return true;
    });
    return aggregateCase({
      loaded: c,
      compiled: compiled[index]!,
      index,
      refs,
      missing: selections[index]!.missing,
      evals: byKey,
    });
  });

  const count = (v: string) => cases.filter((c) => c.verdict === v).length;
  return {
    version: 1,
    startedAt,
    durationMs: Date.now() - startedAt,
    sessionsFolded: jobs.size,
    processes: plan.processes,
    summary: {
      cases: cases.length,
      passed: count("pass"),
      failed: count("fail"),
      errored: count("error"),
      skipped: count("skip"),
    },
    exitCode: exitCodeOf(cases),
    cases,
  };
}
