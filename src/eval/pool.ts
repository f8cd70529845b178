/**
 * Using every core for large selections: the sessions are split into shards balanced by file size;
 * this process folds one shard while child processes (`freecode eval __worker`, the same executable)
 * fold the others and stream their results back as JSON lines. Child processes rather than Workers
 * because a compiled binary can always re-run itself, with no extra entry points to bundle.
 */
import { statSync } from "node:fs";
import { availableParallelism } from "node:os";
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
/** A rollout's size in bytes (1 for store sessions, whose size is unknown), memoised. */
function sizeOf(j: SessionJob): number {
  const f = j.ref.file;
  if (!f) return 1;
  let s = sizes.get(f);
  if (s === undefined) {
    try {
      s = statSync(f).size;
    } catch {
      s = 1;
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

/**
 * The number of processes for a selection. A worker costs a process start, its own JIT warm-up and a
 * re-read of the case files (measured: about 0.5 s of CPU per worker on the development VM, where
 * splitting 26–52 MiB over two processes was slower than one), so the split is kept for large
 * selections: from `threshold` sessions (default 48) holding at least `minBytes` of rollouts
 * (default 128 MiB). `workers` caps the count; `--workers N` forces N.
 */
export function processesFor(
  jobs: SessionJob[],
  options: { workers?: number; threshold?: number; minBytes?: number; forced?: boolean },
): number {
  const max = options.workers ?? availableParallelism();
  if (max <= 1 || jobs.length < (options.threshold ?? 48)) return 1;
  if (!options.forced) {
    let bytes = 0;
    for (const j of jobs) bytes += sizeOf(j);
    if (bytes < (options.minBytes ?? 128 * 1024 * 1024)) return 1;
  }
  return Math.min(max, jobs.length);
}

/** Run a shard in a child process; resolves to its results. */
async function runChild(request: WorkerRequest): Promise<SessionEval[]> {
  const proc = Bun.spawn([...selfCommand(), "eval", "__worker"], {
    stdin: new Blob([JSON.stringify(request)]),
    stdout: "pipe",
    stderr: "pipe",
    env: { ...process.env, NO_COLOR: "1" },
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
 * Evaluate every job once, spreading the work over `processes` processes (this one included).
 * `local` evaluates a shard in this process.
 */
export async function evaluateAll(
  jobs: SessionJob[],
  processes: number,
  base: Omit<WorkerRequest, "jobs">,
  local: (jobs: SessionJob[]) => Promise<SessionEval[]>,
): Promise<SessionEval[]> {
  if (processes <= 1) return local(jobs);
  const [mine = [], ...theirs] = shard(jobs, processes);
  const all = await Promise.all([local(mine), ...theirs.map((s) => runChild({ ...base, jobs: s }))]);
  return all.flat();
}
