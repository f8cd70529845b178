/**
 * The benchmark harness: a benchmark runs a subject and its baseline side by side, interleaved, for
 * several rounds, and prints the medians and their ratio against a target, with the range of the
 * single rounds' ratios (each round runs the baseline and then the subject, side by side). These
 * machines are noisy: the ratio is what to read, never an absolute time, and nothing here fails a
 * build.
 */

export interface Pair {
  /** What is compared, e.g. "session list (10k) vs --version". */
  label: string;
  subject: () => unknown | Promise<unknown>;
  baseline: () => unknown | Promise<unknown>;
  /** The ratio subject/baseline must stay at or under (or, with `atLeast`, over). */
  target?: { max?: number; atLeast?: number };
  /** For throughput pairs: units per run, to print units/s next to the times. */
  units?: number;
  unitName?: string;
  /**
   * The functions measure themselves and resolve to milliseconds (a run in a fresh child process,
   * where what an earlier run left in this process's memory cannot tilt the comparison).
   */
  selfTimed?: boolean;
}

export interface Benchmark {
  name: string;
  description: string;
  rounds?: number;
  setup?: () => unknown | Promise<unknown>;
  teardown?: () => unknown | Promise<unknown>;
  pairs: () => Pair[] | Promise<Pair[]>;
  /** Extra facts to print (sizes, counts). */
  facts?: () => Record<string, string> | Promise<Record<string, string>>;
}

export const defineBench = (b: Benchmark) => b;

export interface PairResult {
  label: string;
  subjectMs: number;
  baselineMs: number;
  ratio: number;
  /** The lowest and highest ratio of a single round (subject over the baseline run beside it). */
  spread: [number, number];
  target?: Pair["target"];
  met?: boolean;
  throughput?: string;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

async function time(fn: () => unknown): Promise<number> {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

/** Run one benchmark and print its table; returns the results (for tests of the harness). */
export async function runBenchmark(b: Benchmark, log = (s: string) => console.log(s)): Promise<PairResult[]> {
  const rounds = Number(process.env.BENCH_ROUNDS) || b.rounds || 5;
  await b.setup?.();
  const results: PairResult[] = [];
  try {
    log(`# ${b.name}: ${b.description} (${rounds} rounds, medians)`);
    for (const pair of await b.pairs()) {
      const s: number[] = [];
      const base: number[] = [];
      // Warm up both once (self-timed runs warm up in their own process), then interleave so drift
      // hits both sides alike.
      if (!pair.selfTimed) {
        await pair.baseline();
        await pair.subject();
      }
      const run = async (fn: () => unknown) => (pair.selfTimed ? Number(await fn()) : time(fn));
      for (let i = 0; i < rounds; i++) {
        base.push(await run(pair.baseline));
        s.push(await run(pair.subject));
      }
      const subjectMs = median(s);
      const baselineMs = median(base);
      const ratio = subjectMs / baselineMs;
      const perRound = s.map((x, i) => x / base[i]!);
      const spread: [number, number] = [Math.min(...perRound), Math.max(...perRound)];
      const t = pair.target;
      const met = t
        ? (t.max === undefined || ratio <= t.max) && (t.atLeast === undefined || ratio >= t.atLeast)
        : undefined;
      const throughput = pair.units
        ? `${Math.round((pair.units / subjectMs) * 1000).toLocaleString("en")} ${pair.unitName ?? "ops"}/s`
        : undefined;
      results.push({ label: pair.label, subjectMs, baselineMs, ratio, spread, target: t, met, throughput });
      const targetText = t
        ? ` target ${t.max !== undefined ? `≤ ${t.max}` : `≥ ${t.atLeast}`} ${met ? "MET" : "MISSED"}`
        : "";
      log(
        `${pair.label}: subject ${subjectMs.toFixed(2)} ms, baseline ${baselineMs.toFixed(2)} ms, ratio ${ratio.toFixed(2)} (single rounds ${spread[0].toFixed(2)}–${spread[1].toFixed(2)})${targetText}${throughput ? `, ${throughput}` : ""}`,
      );
    }
    for (const [k, v] of Object.entries((await b.facts?.()) ?? {})) log(`${k}: ${v}`);
  } finally {
    await b.teardown?.();
  }
  return results;
}

/** Run a command to completion, throwing if it fails (for process-level benchmarks). */
export function exec(cmd: string[], env?: Record<string, string>): void {
  const p = Bun.spawnSync(cmd, {
    stdout: "ignore",
    stderr: "pipe",
    env: env ? { ...process.env, ...env } : undefined,
  });
  if (p.exitCode !== 0) throw new Error(`${cmd.join(" ")} failed (${p.exitCode}): ${p.stderr.toString()}`);
}
