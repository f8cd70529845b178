/**
 * Using every core for large selections: the sessions are split into shards balanced by bytes, and
 * each shard is folded by a child process (`freecode eval __worker`, the same executable) that
 * streams its results back as JSON lines; this process only lists, splits and aggregates.
 *
 * Why child processes and not Worker threads (measured, see bench/eval.ts and the README's Speed):
 * - a Worker's entry must be listed as an extra entry point of `bun build --compile`; a child
 *   process is the binary itself, nothing else to bundle;
 * - the children run with JavaScriptCore's top tier (FTL) off (`BUN_JSC_useFTLJIT=0`, unless the
 *   caller set it). A fold of a few hundred sessions is over before FTL code pays back its compile
 *   time: with it on, each process spent about a quarter of its CPU in JIT threads and the second
 *   process made the split a loss. JSC options are per process, so a thread cannot have this;
 * - a thread's VM warms its JIT up from nothing just as a process does, so it saves only the
 *   process start (about 50 ms).
 */
import { statSync } from "node:fs";
import { availableParallelism, loadavg } from "node:os";
import { fileURLToPath } from "node:url";
import { FreecodeError } from "../errors.ts";
import type { SessionEval, SessionJob } from "./evaluate.ts";
import type { WorkerRequest } from "./worker.ts";

/** How to start this freecode again: the compiled binary itself, or bun with the CLI's source. */
export function selfCommand(): string[] {
  const compiled = /\$bunfs|~BUN/.test(import.meta.url) || /\$bunfs|~BUN/.test(Bun.main);
  return compiled
    ? [process.execPath]
    : [process.execPath, fileURLToPath(new URL("../cli/main.ts", import.meta.url))];
}

const sizes = new Map<string, number>();
/** What a session costs to open, beyond its bytes (a file, a stream, a fold set up): ~16 KiB of reading. */
const PER_SESSION = 16 * 1024;
/** Store sessions have no file to measure: count them as a typical recorded session. */
const UNKNOWN_SIZE = 48 * 1024;

/** A job's weight for splitting: its rollout's bytes plus the per-session cost, memoised. */
function sizeOf(j: SessionJob): number {
  const f = j.ref.file;
  if (!f) return UNKNOWN_SIZE + PER_SESSION;
  let s = sizes.get(f);
  if (s === undefined) {
    try {
      s = statSync(f).size + PER_SESSION;
    } catch {
      s = PER_SESSION;
    }
    sizes.set(f, s);
  }
  return s;
}

/** Split jobs into `n` shards of similar total size (largest first onto the lightest shard). */
export function shard(jobs: SessionJob[], n: number): SessionJob[][] {
  const size = sizeOf;
  const shards = Array.from({ length: n }, () => ({ jobs: [] as SessionJob[], load: 0 }));
  for (const [job, s] of jobs.map((j) => [j, size(j)] as const).sort((a, b) => b[1] - a[1])) {
    const target = shards.reduce((a, b) => (b.load < a.load ? b : a));
    target.jobs.push(job);
    target.load += s;
  }
  return shards.map((s) => s.jobs).filter((s) => s.length > 0);
}

/** Where a selection is folded: here, or in `processes` child processes (one shard each). */
export interface Plan {
  processes: number;
  /** Fold in child processes (the JIT's top tier off) rather than in this process. */
  children: boolean;
}

export interface PlanOptions {
  /** The most processes to use (default: the cores). */
  workers?: number;
  /** `--workers N`: exactly min(N, sessions) processes; N = 1 folds here, N ≥ 2 in children. */
  forced?: boolean;
  /** Fewer sessions than this are folded here (default 16). */
  threshold?: number;
  /** Fewer bytes of rollouts than this are folded here (default 256 MiB)… */
  minBytes?: number;
  /** …or than this while the machine is busy: load ≥ cores (default 512 MiB). */
  busyMinBytes?: number;
  /** The 1-minute load average (default: the system's). */
  load?: number;
}

/**
 * Where to fold a selection: here for a small one, else in one child per core. A child costs a
 * process start (~50 ms) and its own JIT warm-up (~0.2 s of CPU); it gains the FTL-off JIT and the
 * other cores, but only cores that are free. Measured on the 2-core VM (README, Speed): at 52 MiB
 * two children won by 10–15% at load ~2 and lost by a third at load 2–3.5; at 206 MiB they won
 * even under load. Once the fold stopped allocating a full row chunk per session, one process at
 * 52 MiB took 1.30× a plain fold against 1.37–1.59× for two children. Once a fold stopped
 * zero-filling a 1 MiB text chunk per session, one process got a third faster and already keeps
 * ~1.7 cores busy (the JIT and the collector run on helper threads): at 103 MiB it beat two
 * children (1.06 s against 1.15 s), at 207 MiB they tied (1.75 s each), at 415 MiB the children won
 * (2.96 s against 3.40 s idle; 3.94 against 4.23 s with the other core taken). So the split starts
 * at `minBytes` (256 MiB), or at `busyMinBytes` (512 MiB) when the load average already fills the
 * cores (the rule `make -l` follows).
 */
export function planFor(jobs: SessionJob[], options: PlanOptions = {}): Plan {
  const cores = options.workers ?? availableParallelism();
  const max = Math.max(1, Math.min(cores, jobs.length));
  if (options.forced) return { processes: max, children: max > 1 };
  if (max <= 1 || jobs.length < (options.threshold ?? 16)) return { processes: 1, children: false };
  let bytes = 0;
  for (const j of jobs) bytes += sizeOf(j);
  const busy = (options.load ?? loadavg()[0] ?? 0) >= availableParallelism();
  const min = busy ? (options.busyMinBytes ?? 512 * 1024 * 1024) : (options.minBytes ?? 256 * 1024 * 1024);
  return bytes < min ? { processes: 1, children: false } : { processes: max, children: true };
}

/** The children's environment: no colour, and the FTL tier off unless the caller chose otherwise. */
const childEnv = () => ({ BUN_JSC_useFTLJIT: "0", ...process.env, NO_COLOR: "1" });

/** Run a shard in a child process; resolves to its results. */
async function runChild(request: WorkerRequest): Promise<SessionEval[]> {
  const proc = Bun.spawn([...selfCommand(), "eval", "__worker"], {
    stdin: new Blob([JSON.stringify(request)]),
    stdout: "pipe",
    stderr: "pipe",
    env: childEnv(),
  });
  const [out, err, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  if (code !== 0)
    throw new FreecodeError("internal", `eval worker exited ${code}: ${err.trim().split("\n").at(-1) ?? ""}`);
  const results: SessionEval[] = [];
  for (const line of out.split("\n")) if (line.trim()) results.push(JSON.parse(line) as SessionEval);
  if (results.length !== request.jobs.length) {
    throw new FreecodeError(
      "internal",
      `eval worker returned ${results.length} of ${request.jobs.length} sessions`,
    );
  }
  return results;
}

/**
 * Evaluate every job once: here (`local`), or in the plan's child processes, one shard each, while
 * this process waits. (This process never folds a shard beside them: its JIT runs with FTL on, and
 * with as many children as cores it would only compete with them.)
 */
export async function evaluateAll(
  jobs: SessionJob[],
  plan: Plan,
  base: Omit<WorkerRequest, "jobs">,
  local: (jobs: SessionJob[]) => Promise<SessionEval[]>,
): Promise<SessionEval[]> {
  if (!plan.children || jobs.length === 0) return local(jobs);
  const all = await Promise.all(shard(jobs, plan.processes).map((s) => runChild({ ...base, jobs: s })));
  return all.flat();
}
