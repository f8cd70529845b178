/**
 * Eval: `freecode eval` (the compiled binary) running one case of 20 assertions over 1,000 recorded
 * sessions, against a compiled fold-only program (same build flags, same runtime) that folds the same
 * 1,000 sessions into Traces with `loadTrace` in a loop, in one process, and nothing else. Both are
 * fresh processes, so start-up and JIT warm-up hit both alike. Target: ratio ≤ 1.5 for eval as a user
 * runs it (default settings: at this size one process when the load average fills the cores, else
 * one child process per core with the JIT's FTL tier off). Then both cores forced (`--workers 2`),
 * one process forced (`--workers 1`: the single-process overhead), and `--workers 2` against the
 * fold-only program run with the same JIT setting as eval's children (`BUN_JSC_useFTLJIT=0`), which
 * shows how much of the gain is the JIT setting rather than the second core. Each subject's CPU
 * utilisation ((user + sys) / wall, children included) is printed, with the load average before
 * and after, because the machine is shared. Sessions are generated in a temp dir (~100 events,
 * ~53 KB each, with denials, a compaction and varied tools) and deleted at the end.
 * `EVAL_BENCH_SESSIONS` / `EVAL_BENCH_OUTPUT_BYTES` change the count and size.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { defineBench, exec } from "./_harness.ts";

const SESSIONS = Number(process.env.EVAL_BENCH_SESSIONS) || 1000;
/** Size of each tool output summary: real sessions are tens to hundreds of KB. */
const OUTPUT_BYTES = Number(process.env.EVAL_BENCH_OUTPUT_BYTES) || 2000;
const root = resolve(import.meta.dir, "..");
const work = mkdtempSync(join(tmpdir(), "freecode-bench-eval-"));
const rollouts = join(work, "rollouts");
const binary = join(work, "freecode");
const cases = join(work, "case.yaml");
const foldOnly = join(work, "fold-only");
let bytes = 0;
let defaultProcesses = 0;
const defaultLoads: number[] = [];

function writeSession(n: number): void {
  const id = `task-${n % 250}-${Math.floor(n / 250)}`;
  let seq = 0;
  let t = 1_785_000_000_000 + n * 1000;
  const lines: string[] = [];
  const ev = (type: string, dt: number, f: Record<string, unknown>) =>
    lines.push(
      JSON.stringify({
        type,
        id: `E${n}x${seq + 1}`,
        seq: ++seq,
        aggregateID: id,
        timestamp: (t += dt),
        ...f,
      }),
    );
  const out = "x".repeat(OUTPUT_BYTES + (n % 7) * 100);
  ev("session.started", 0, { provider: "anthropic", model: "claude-sonnet-5", reason: "new" });
  for (let turn = 0; turn < 12; turn++) {
    const turnId = `turn-${turn}`;
    ev("turn.started", 100, { turnId });
    ev("model.request", 10, {
      turnId,
      provider: "anthropic",
      model: "claude-sonnet-5",
      messageCount: turn * 4,
      toolCount: 12,
      promptChars: 20_000,
      streamed: true,
    });
    ev("model.first_token", 400 + (n % 9) * 50, { turnId, ttft_ms: 400 + (n % 9) * 50 });
    ev("model.response", 1500, {
      turnId,
      provider: "anthropic",
      model: "claude-sonnet-5",
      duration_ms: 1950,
      inputTokens: 3000,
      outputTokens: 300,
      cacheReadTokens: 9000,
      toolCalls: ["read", "edit"],
      textChars: 100,
      thinkingChars: 0,
    });
    ev("function.call", 5, { turnId, tool: "read", callId: `r${turn}`, args: { path: `src/m${turn}.ts` } });
    ev("function.call", 1, {
      turnId,
      tool: "edit",
      callId: `e${turn}`,
      args: { path: `src/m${turn}.ts`, oldString: "a", newString: "b" },
    });
    ev("function.output", 20, { turnId, tool: "read", callId: `r${turn}`, duration_ms: 20, output: out });
    ev("function.output", 15, { turnId, tool: "edit", callId: `e${turn}`, duration_ms: 15, output: "ok" });
    if (turn % 4 === 3) {
      ev("function.call", 5, {
        turnId,
        tool: "bash",
        callId: `b${turn}`,
        args: { command: turn === 3 && n % 5 === 0 ? "rm -rf dist" : "npm test" },
      });
      if (turn === 3 && n % 5 === 0)
        ev("function.denied", 2, {
          turnId,
          tool: "bash",
          callId: `b${turn}`,
          args: { command: "rm -rf dist" },
          source: "permission",
          reason: "needs approval",
        });
      else
        ev("function.output", 3000, {
          turnId,
          tool: "bash",
          callId: `b${turn}`,
          duration_ms: 3000,
          output: out,
        });
    }
    if (turn === 6) ev("compact.occurred", 50, { beforeTokens: 150_000, afterTokens: 20_000 });
  }
  ev("session.ended", 10, { reason: "exit" });
  mkdirSync(join(rollouts, id), { recursive: true });
  const file = join(rollouts, id, "events.jsonl");
  const text = `${lines.join("\n")}\n`;
  writeFileSync(file, text);
  bytes += text.length;
}

/** 20 assertions touching every family. */
const CASE = `id: bench
sessions: all
expect:
  - expectTool: { name: edit, count: { min: 12 } }
  - expectTool: { name: read, args: { path: "src/m1.ts" } }
  - forbidTools: [write, "mcp__*"]
  - expectFirstToolIn: [read, grep]
  - expectSequence: { mode: in_order, steps: [read, edit, read, edit, bash] }
  - expectSequence: { mode: superset, steps: [read, read, edit, edit] }
  - expectBashMatches: ["npm test"]
  - forbidBashMatches: ["git push"]
  - expectParallelTools: true
  - forbidDenied: { except: [permission] }
  - deniedNeverRan: true
  - noRetryAfterDenial: { maxRetries: 1 }
  - noHung: true
  - noInFlight: true
  - ttft: { max: 5000, p95: 2000 }
  - modelErrors: { kind: provider }
  - compactions: { min: 1, max: 2 }
  - changedFiles: { include: ["src/*.ts"], exclude: ["package.json"] }
  - tokens: { maxTotal: 1000000 }
  - turns: { max: 20 }
`;

/** The baseline program: list the rollouts like `--sessions` does, fold each, print the count. */
const FOLD_ONLY = `import { loadTrace } from ${JSON.stringify(join(root, "src/rollout/load.ts"))};
const dir = process.argv[2];
let n = 0;
for (const f of new Bun.Glob("**/*.jsonl").scanSync({ cwd: dir, absolute: true })) {
  const t = await loadTrace({ file: f });
  n += t.eventCount;
}
console.log(n);
`;

/** Wall and CPU (user + sys, reaped children included) of each run, per label. */
const usage = new Map<string, { wall: number; cpu: number }[]>();
const loads: number[][] = [];

/**
 * Run a command to completion, recording its CPU time; throws if it fails. Exit 1 is eval's "a case
 * failed": a verdict, not a failure of the run (the bench case is not meant to pass every session).
 */
function run(label: string, cmd: string[], env?: Record<string, string>): void {
  const t0 = performance.now();
  const p = Bun.spawnSync(cmd, {
    stdout: "ignore",
    stderr: "pipe",
    env: env ? { ...process.env, ...env } : undefined,
  });
  const wall = performance.now() - t0;
  if (p.exitCode !== 0 && p.exitCode !== 1)
    throw new Error(`${cmd.join(" ")} failed (${p.exitCode}): ${p.stderr.toString()}`);
  const cpu = Number(p.resourceUsage.cpuTime.user + p.resourceUsage.cpuTime.system) / 1000;
  const runs = usage.get(label) ?? [];
  runs.push({ wall, cpu });
  usage.set(label, runs);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1] ?? Number.NaN;
const NO_FTL = { BUN_JSC_useFTLJIT: "0" };
const evalCmd = (...extra: string[]) => [binary, "eval", cases, "--sessions", rollouts, ...extra];

export default defineBench({
  name: "eval",
  description: `freecode eval: ${SESSIONS} sessions × 20 assertions vs folding the same sessions`,
  rounds: 5,
  setup() {
    loads.push(loadavg());
    for (let n = 0; n < SESSIONS; n++) writeSession(n);
    writeFileSync(cases, CASE);
    exec([process.execPath, join(root, "build.ts"), "--outfile", binary]);
    writeFileSync(join(work, "fold-only.ts"), FOLD_ONLY);
    exec([
      process.execPath,
      join(root, "build.ts"),
      "--entry",
      join(work, "fold-only.ts"),
      "--outfile",
      foldOnly,
    ]);
    // The case must really evaluate every session (a bench of "could not evaluate" proves nothing).
    const out = join(work, "check.json");
    Bun.spawnSync([...evalCmd(), "--reporter", `json:${out}`]);
    const report = JSON.parse(readFileSync(out, "utf8")) as {
      sessionsFolded: number;
      processes: number;
      cases: { counts: { errored: number } }[];
    };
    if (report.sessionsFolded !== SESSIONS || report.cases[0]!.counts.errored !== 0)
      throw new Error("bench case did not evaluate every session");
    defaultProcesses = report.processes;
    // Write back the fresh sessions and binaries (~270 MB) now, not during the first pair's rounds.
    Bun.spawnSync(["sync"]);
  },
  teardown: () => rmSync(work, { recursive: true, force: true }),
  pairs: () => [
    {
      label: `eval ${SESSIONS} sessions × 20 assertions (binary, default settings) vs fold ${SESSIONS} sessions in one process`,
      subject: () => {
        defaultLoads.push(loadavg()[0] ?? 0);
        run("eval default", evalCmd());
      },
      baseline: () => run("fold", [foldOnly, rollouts]),
      target: { max: 1.5 },
      units: SESSIONS,
      unitName: "sessions",
    },
    {
      label: `eval ${SESSIONS} sessions × 20 assertions (binary, --workers 2: two child processes, FTL off) vs fold ${SESSIONS} sessions`,
      subject: () => run("eval --workers 2", evalCmd("--workers", "2")),
      baseline: () => run("fold", [foldOnly, rollouts]),
      units: SESSIONS,
      unitName: "sessions",
    },
    {
      label: `eval ${SESSIONS} sessions × 20 assertions (binary, --workers 1: this process, FTL on) vs fold ${SESSIONS} sessions`,
      subject: () => run("eval --workers 1", evalCmd("--workers", "1")),
      baseline: () => run("fold", [foldOnly, rollouts]),
      units: SESSIONS,
      unitName: "sessions",
    },
    {
      label: `eval ${SESSIONS} sessions × 20 assertions (binary, --workers 2) vs fold ${SESSIONS} sessions with FTL off too`,
      subject: () => run("eval --workers 2", evalCmd("--workers", "2")),
      baseline: () => run("fold, FTL off", [foldOnly, rollouts], NO_FTL),
      units: SESSIONS,
      unitName: "sessions",
    },
  ],
  facts: () => {
    loads.push(loadavg());
    const facts: Record<string, string> = {
      sessions: `${SESSIONS} (${(bytes / 1024 / 1024).toFixed(1)} MiB, ${(bytes / SESSIONS / 1024).toFixed(0)} KiB each)`,
      cores: String(availableParallelism()),
      "load average (1, 5, 15 min) before / after": loads
        .map((l) => l.map((x) => x.toFixed(2)).join(" "))
        .join(" / "),
      "eval default": `${defaultProcesses} process(es) at setup; ${defaultLoads.filter((l) => l >= availableParallelism()).length} of ${defaultLoads.length} default runs started with the load average ≥ the cores (below 256 MiB, or 512 MiB when busy, eval folds in one process)`,
    };
    for (const [label, runs] of usage) {
      const wall = median(runs.map((r) => r.wall));
      const cpu = median(runs.map((r) => r.cpu));
      const util = median(runs.map((r) => r.cpu / r.wall));
      facts[`cpu ${label}`] =
        `median ${cpu.toFixed(0)} ms CPU over ${wall.toFixed(0)} ms wall, utilisation ${util.toFixed(2)} cores (${runs.length} runs)`;
    }
    return facts;
  },
});
