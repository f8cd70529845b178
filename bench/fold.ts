/**
 * Folds: (1) the trace fold over two 1,000,000-event logs: a synthetic one of small events (~240 B a
 * line: the envelope is most of each line, so the fold's work per event weighs most), and a
 * real-shaped one built by importing the corpus's transcripts of all four agents and repeating
 * their rollout events (~590 B a line: real tool arguments and outputs), (read, validate against the catalogue, fold,
 * hand out the Trace's lists) against a raw line split + `JSON.parse` of the same file with the
 * fastest reader we know (`_raw.ts`), interleaved. Target: fold throughput ≥ 0.7× raw, i.e. time
 * ratio ≤ 1/0.7. The same against the bun-engineering §8 stream split is reported, and against a
 * parse of runs of lines in one call each (`rawRuns`: how the folds read, faster than a line split
 * where lines are short). Each timed run
 * is alone in a fresh child process: in one process, a raw parse timed right after a
 * fold took 1.36 s instead of 0.85 s (memory the fold had freed is faulted in again), which made the
 * fold look 1.5x better than it is.
 * (2) Peak RSS of the trace, usage and replay folds over a ~500 MB synthetic log and over the real-shaped
 * log, each measured in a child process (`VmHWM`), against a child that only starts Bun. Target:
 * ≤ 150 MB. Generated logs live in a temp dir, deleted at the end. `FOLD_BENCH_EVENTS` /
 * `FOLD_BENCH_MB` shrink the logs for a quick run.
 */
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, statSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { importSources } from "../src/import/import.ts";
import { createUsageFold } from "../src/rollout/folds/usage.ts";
import { foldRollout, loadReplay, loadTrace } from "../src/rollout/load.ts";
import { openStore } from "../src/storage/select.ts";
import { childTime } from "./_child.ts";
import { defineBench } from "./_harness.ts";
import { rawBlocks, rawRuns, rawStream } from "./_raw.ts";

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

/**
 * A log of `events` events shaped like real ones: the corpus (all four agents) imported into a
 * store under `work`, and its sessions' rollout events repeated in turn, renumbered (`id`, `seq`,
 * one session id, times moved on per copy, call ids suffixed per copy so calls still pair).
 */
async function writeRealLog(path: string, work: string, events: number): Promise<number> {
  const home = join(work, "corpus-home");
  const { adapter } = await openStore("files", { home, fsync: "never" });
  const corpus = join(import.meta.dir, "..", "test", "corpus");
  await importSources({ agent: "auto", paths: [corpus], adapter, home, fsync: false });
  const sessions: Record<string, unknown>[][] = [];
  for (const f of new Bun.Glob("**/events.jsonl").scanSync(home)) {
    const text = readFileSync(join(home, f), "utf8");
    sessions.push(
      text
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l)),
    );
  }
  sessions.sort((a, b) => String(a[0]?.aggregateID).localeCompare(String(b[0]?.aggregateID)));
  const fd = openSync(path, "w");
  const t0 = 1_700_000_000_000;
  let seq = 0;
  let buf = "";
  for (let copy = 1; seq < events; copy++) {
    for (const session of sessions) {
      const start = Number(session[0]?.timestamp ?? 0);
      for (const e of session) {
        if (seq >= events) break;
        seq++;
        const line: Record<string, unknown> = {
          ...e,
          id: `01HF${String(seq).padStart(22, "0")}`,
          seq,
          aggregateID: "bench",
        };
        line.timestamp = t0 + copy * 10_000_000 + (Number(e.timestamp) - start);
        if (typeof e.callId === "string") line.callId = `${e.callId}.${copy}`;
        buf += `${JSON.stringify(line)}\n`;
        if (buf.length > 1 << 20) {
          writeSync(fd, buf);
          buf = "";
        }
      }
    }
  }
  writeSync(fd, buf);
  closeSync(fd);
  rmSync(home, { recursive: true, force: true });
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
    runs: () => rawRuns(file),
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
  } else if (mode === "replay") {
    const r = await loadReplay({ file });
    detail = `${r.totalTurns} turns, ${r.totalCalls} calls`;
  }
  console.log(JSON.stringify({ peakMb: peakMb(), detail }));
  process.exit(0);
}

const work = mkdtempSync(join(tmpdir(), "freecode-bench-fold-"));
const small = join(work, "1m.jsonl");
const real = join(work, "1m-real.jsonl");
const big = join(work, "big.jsonl");
const memory: Record<string, string> = {};

const mb = (file: string) => (statSync(file).size / 1e6).toFixed(0);

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

/** The trace fold against one raw way of reading the same log, each run in a fresh child. */
function foldVs(raw: "blocks" | "stream" | "runs", file: string, what: string, targeted: boolean) {
  const how = {
    blocks: "raw block split",
    stream: "the §8 stream split",
    runs: "a parse of runs of lines in one call each, not a line split",
  }[raw];
  return {
    label: `trace fold vs ${how} + JSON.parse (${EVENTS.toLocaleString("en")} ${what} events)`,
    subject: () => timed("fold", file),
    baseline: () => timed(raw, file),
    selfTimed: true,
    ...(targeted ? { target: { max: Number((1 / 0.7).toFixed(3)) } } : {}),
    units: EVENTS,
    unitName: "events",
  };
}

export default defineBench({
  name: "fold",
  description: `trace fold over ${EVENTS.toLocaleString("en")}-event logs (small synthetic, real-shaped) vs raw split + JSON.parse; peak RSS on a ${BIG_MB} MB synthetic log and the real-shaped one`,
  rounds: 3,
  async setup() {
    writeLog(small, { events: EVENTS, outputBytes: 200 });
    await writeRealLog(real, work, EVENTS);
    const bigEvents = writeLog(big, { bytes: BIG_MB * 1024 * 1024, outputBytes: 1500 });
    const idle = childPeak("idle", big).peakMb;
    const logs = [
      { file: big, what: `${mb(big)} MB synthetic log (${bigEvents.toLocaleString("en")} events)` },
      { file: real, what: `${mb(real)} MB real-shaped log (${EVENTS.toLocaleString("en")} events)` },
    ];
    for (const { file, what } of logs) {
      for (const mode of ["trace", "usage", "replay", "trace-read"]) {
        const r = childPeak(mode, file);
        // The target is the fold's; reading every field afterwards is the consumer's memory, reported.
        const target =
          mode === "trace-read"
            ? "reported"
            : `target ≤ ${MEMORY_TARGET_MB} MB ${r.peakMb <= MEMORY_TARGET_MB ? "MET" : "MISSED"}`;
        const how =
          mode === "trace-read" ? "trace fold, then every field of every span read" : `${mode} fold`;
        memory[`peak RSS, ${how}, ${what}`] =
          `${r.peakMb.toFixed(1)} MB (bun alone ${idle.toFixed(1)} MB; ${r.detail}) ${target}`;
      }
    }
  },
  teardown: () => rmSync(work, { recursive: true, force: true }),
  pairs: () => [
    foldVs("blocks", small, "small synthetic", true),
    foldVs("blocks", real, "real-shaped", true),
    foldVs("stream", small, "small synthetic", false),
    foldVs("runs", small, "small synthetic", false),
    foldVs("runs", real, "real-shaped", false),
  ],
  facts: () => ({
    "1M log sizes": `${mb(small)} MB synthetic, ${mb(real)} MB real-shaped`,
    ...memory,
    "how to read": "ratio = fold time / raw time; ≤ 1.429 means throughput ≥ 0.7× raw",
  }),
});
