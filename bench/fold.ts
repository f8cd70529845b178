/**
 * Folds: (1) the trace fold over a 1,000,000-event log (read, validate against the catalogue, fold,
 * hand out the Trace's lists) against a raw line split + `JSON.parse` of the same file with the
 * fastest reader we know (`_raw.ts`), interleaved. Target: fold throughput ≥ 0.7× raw, i.e. time
 * ratio ≤ 1/0.7. The same against the bun-engineering §8 stream split is reported. Each timed run
 * is alone in a fresh child process: in one process, a raw parse timed right after a
 * fold took 1.36 s instead of 0.85 s (memory the fold had freed is faulted in again), which made the
 * fold look 1.5x better than it is.
 * (2) Peak RSS of the trace and usage folds over a ~500 MB log, each measured in a child process
 * (`VmHWM`), against a child that only starts Bun. Target: ≤ 150 MB. Generated logs live in a temp
 * dir, deleted at the end. `FOLD_BENCH_EVENTS` / `FOLD_BENCH_MB` shrink the logs for a quick run.
 */
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, statSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createUsageFold } from "../src/rollout/folds/usage.ts";
import { foldRollout, loadTrace } from "../src/rollout/load.ts";
import { childTime } from "./_child.ts";
import { defineBench } from "./_harness.ts";
import { rawBlocks, rawStream } from "./_raw.ts";

const EVENTS = Number(process.env.FOLD_BENCH_EVENTS) || 1_000_000;
const BIG_MB = Number(process.env.FOLD_BENCH_MB) || 500;
const MEMORY_TARGET_MB = 150;

/**
 * A realistic session: per turn a request, first token, response, two tool calls and their outputs.
 * `outputBytes` sets the size of tool outputs (most of a real log's bytes).
 */
function writeLog(path: string, opts: { events?: number; bytes?: number; outputBytes: number }) {
  const fd = openSync(path, "w");
  const t0 = 1_700_000_000_000;
  let seq = 0;
  let bytes = 0;
  let buf = "";
  const out = "o".repeat(opts.outputBytes - 40) + " ✓ done é";
  const ev = (type: string, fields: Record<string, unknown>) => {
    seq++;
    const line = `${JSON.stringify({ type, id: `01HF${String(seq).padStart(22, "0")}`, seq, aggregateID: "bench", timestamp: t0 + seq * 10, ...fields })}\n`;
    buf += line;
    bytes += line.length;
    if (buf.length > 1 << 20) {
      writeSync(fd, buf);
      buf = "";
    }
  };
  const done = () => (opts.events ? seq >= opts.events : bytes >= (opts.bytes ?? 0));
  for (let turn = 0; !done(); turn++) {
    const turnId = `turn-${turn % 50}`; // ids repeat, as after resumes
    if (turn % 50 === 0) ev("session.started", { reason: turn ? "resume" : "new" });
    ev("turn.started", { turnId });
    ev("model.request", {
      turnId,
      provider: "anthropic",
      model: "claude-sonnet-4",
      messageCount: turn,
      toolCount: 12,
      promptChars: 40_000,
      streamed: true,
    });
    ev("model.first_token", { turnId, ttft_ms: 420 });
    ev("model.response", {
      turnId,
      provider: "anthropic",
      model: "claude-sonnet-4",
      duration_ms: 2100,
      ttft_ms: 420,
      inputTokens: 3000,
      outputTokens: 250,
      cacheReadTokens: 38_000,
      toolCalls: ["Edit", "Bash"],
      textChars: 120,
      thinkingChars: 0,
    });
    ev("function.call", {
      turnId,
      tool: "Edit",
      callId: `e${turn}`,
      args: { file_path: `src/module-${turn % 300}.ts`, old_string: "a", new_string: "b" },
    });
    ev("function.call", {
      turnId,
      tool: "Bash",
      callId: `b${turn}`,
      args: { command: "bun test test/unit" },
    });
    ev("function.output", { turnId, tool: "Edit", callId: `e${turn}`, duration_ms: 12, output: "ok" });
    ev("function.output", {
      turnId,
      tool: "Bash",
      callId: `b${turn}`,
      duration_ms: 3400,
      failed: turn % 7 === 0,
      output: out,
    });
  }
  writeSync(fd, buf);
  closeSync(fd);
  return seq;
}

const peakMb = () => {
  const status = readFileSync("/proc/self/status", "utf8");
  const kb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return kb / 1024;
};

// Child mode for throughput: one timed run in a fresh process.
if (process.env.FOLD_BENCH_TIME) {
  const [mode, file] = process.env.FOLD_BENCH_TIME.split(":") as [string, string];
  const runs: Record<string, () => unknown> = {
    fold: async () => {
      // The Trace with its lists handed out (their views made), not just the rows folded.
      const t = await loadTrace({ file });
      return t.turns.length + t.modelSpans.length + t.toolSpans.length;
    },
    blocks: () => rawBlocks(file),
    stream: () => rawStream(file),
  };
  // One cold run: a warm-up run first would leave its memory behind (a second fold started at 234 MB
  // RSS instead of 35), and both sides start equally cold.
  const fn = runs[mode]!;
  const t0 = performance.now();
  await fn();
  console.log(JSON.stringify({ ms: performance.now() - t0 }));
  process.exit(0);
}

// Child mode: fold one file and print the peak RSS.
if (process.env.FOLD_BENCH_CHILD) {
  const [mode, file] = process.env.FOLD_BENCH_CHILD.split(":") as [string, string];
  let detail = "";
  if (mode === "trace" || mode === "trace-read") {
    const t = await loadTrace({ file });
    // The fold's Trace with its lists handed out (a view per turn and span).
    detail = `${t.eventCount} events, ${t.turns.length} turns, ${t.modelSpans.length} model spans, ${t.toolSpans.length} tool spans`;
    if (mode === "trace-read") {
      // A consumer reading every field of every span, arguments parsed (what `trace --json` does).
      let fields = 0;
      for (const list of [t.turns, t.modelSpans, t.toolSpans]) {
        for (const span of list)
          fields += Object.keys((span as unknown as { toJSON(): object }).toJSON()).length;
      }
      detail += `, ${fields.toLocaleString("en")} fields read`;
    }
  } else if (mode === "usage") {
    const fold = createUsageFold("bench");
    await foldRollout({ file }, fold);
    detail = `${fold.finish().totals.responses} responses`;
  }
  console.log(JSON.stringify({ peakMb: peakMb(), detail }));
  process.exit(0);
}

const work = mkdtempSync(join(tmpdir(), "freecode-bench-fold-"));
const small = join(work, "1m.jsonl");
const big = join(work, "big.jsonl");
const memory: Record<string, string> = {};

/** A timed run in a fresh child process: its milliseconds. */
const timed = (mode: string, file: string) =>
  childTime(import.meta.path, { FOLD_BENCH_TIME: `${mode}:${file}` });

function childPeak(mode: string, file: string): { peakMb: number; detail: string } {
  const p = Bun.spawnSync([process.execPath, import.meta.path], {
    env: { ...process.env, FOLD_BENCH_CHILD: `${mode}:${file}` },
    stdout: "pipe",
    stderr: "pipe",
  });
  if (p.exitCode !== 0) throw new Error(`child ${mode} failed: ${p.stderr.toString()}`);
  return JSON.parse(p.stdout.toString());
}

export default defineBench({
  name: "fold",
  description: `trace fold over a ${EVENTS.toLocaleString("en")}-event log vs raw split + JSON.parse; peak RSS on a ${BIG_MB} MB log`,
  rounds: 3,
  setup() {
    writeLog(small, { events: EVENTS, outputBytes: 200 });
    const bigEvents = writeLog(big, { bytes: BIG_MB * 1024 * 1024, outputBytes: 1500 });
    const idle = childPeak("idle", big).peakMb;
    const size = `${(statSync(big).size / 1e6).toFixed(0)} MB log (${bigEvents.toLocaleString("en")} events)`;
    for (const mode of ["trace", "usage", "trace-read"]) {
      const r = childPeak(mode, big);
      // The target is the fold's; reading every field afterwards is the consumer's memory, reported.
      const target =
        mode === "trace-read"
          ? "reported"
          : `target ≤ ${MEMORY_TARGET_MB} MB ${r.peakMb <= MEMORY_TARGET_MB ? "MET" : "MISSED"}`;
      const what = mode === "trace-read" ? "trace fold, then every field of every span read" : `${mode} fold`;
      memory[`peak RSS, ${what}, ${size}`] =
        `${r.peakMb.toFixed(1)} MB (bun alone ${idle.toFixed(1)} MB; ${r.detail}) ${target}`;
    }
  },
  teardown: () => rmSync(work, { recursive: true, force: true }),
  pairs: () => [
    {
      label: `trace fold vs raw block split + JSON.parse (${EVENTS.toLocaleString("en")} events)`,
      subject: () => timed("fold", small),
      baseline: () => timed("blocks", small),
      selfTimed: true,
      target: { max: Number((1 / 0.7).toFixed(3)) },
      units: EVENTS,
      unitName: "events",
    },
    {
      label: `trace fold vs the §8 stream split + JSON.parse (${EVENTS.toLocaleString("en")} events)`,
      subject: () => timed("fold", small),
      baseline: () => timed("stream", small),
      selfTimed: true,
      units: EVENTS,
      unitName: "events",
    },
  ],
  facts: () => ({
    "1M log size": `${(statSync(small).size / 1e6).toFixed(0)} MB`,
    ...memory,
    "how to read": "ratio = fold time / raw time; ≤ 1.429 means throughput ≥ 0.7× raw",
  }),
});
