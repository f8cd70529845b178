/**
 * Folds: (1) the trace fold over a 1,000,000-event log (read, validate against the catalogue, fold)
 * against a raw line split + `JSON.parse` of the same file (the fastest plain reader, bun-engineering
 * §8), interleaved in the same run. Target: fold throughput ≥ 0.7× raw, i.e. time ratio ≤ 1/0.7.
 * (2) Peak RSS of the trace and usage folds over a ~500 MB log, each measured in a child process
 * (`VmHWM`), against a child that only starts Bun. Target: ≤ 150 MB. Generated logs live in a temp
 * dir, deleted at the end. `FOLD_BENCH_EVENTS` / `FOLD_BENCH_MB` shrink the logs for a quick run.
 */
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, statSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createUsageFold } from "../src/rollout/folds/usage.ts";
import { foldRollout, loadTrace } from "../src/rollout/load.ts";
import { defineBench } from "./_harness.ts";

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

/** The baseline: stream bytes, split on \n, decode each line, JSON.parse it. */
async function rawParse(path: string): Promise<number> {
  const decoder = new TextDecoder();
  let n = 0;
  let carry: Uint8Array | null = null;
  for await (const chunk of Bun.file(path).stream()) {
    let s = 0;
    for (let nl = chunk.indexOf(10); nl !== -1; nl = chunk.indexOf(10, s)) {
      let bytes: Uint8Array = chunk.subarray(s, nl);
      if (carry) {
        const joined = new Uint8Array(carry.length + bytes.length);
        joined.set(carry);
        joined.set(bytes, carry.length);
        bytes = joined;
        carry = null;
      }
      s = nl + 1;
      if (bytes.length) n += (JSON.parse(decoder.decode(bytes)) as { seq: number }).seq > 0 ? 1 : 0;
    }
    if (s < chunk.length) carry = chunk.slice(s);
  }
  return n;
}

const peakMb = () => {
  const status = readFileSync("/proc/self/status", "utf8");
  const kb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return kb / 1024;
};

// Child mode: fold one file and print the peak RSS.
if (process.env.FOLD_BENCH_CHILD) {
  const [mode, file] = process.env.FOLD_BENCH_CHILD.split(":") as [string, string];
  let detail = "";
  if (mode === "trace") {
    const t = await loadTrace({ file });
    detail = `${t.eventCount} events, ${t.toolSpans.length} tool spans`;
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
    for (const mode of ["trace", "usage"]) {
      const r = childPeak(mode, big);
      const met = r.peakMb <= MEMORY_TARGET_MB ? "MET" : "MISSED";
      memory[
        `peak RSS, ${mode} fold, ${(statSync(big).size / 1e6).toFixed(0)} MB log (${bigEvents.toLocaleString("en")} events)`
      ] =
        `${r.peakMb.toFixed(1)} MB (bun alone ${idle.toFixed(1)} MB; ${r.detail}) target ≤ ${MEMORY_TARGET_MB} MB ${met}`;
    }
  },
  teardown: () => rmSync(work, { recursive: true, force: true }),
  pairs: () => [
    {
      label: `trace fold vs raw split+JSON.parse (${EVENTS.toLocaleString("en")} events)`,
      subject: () => loadTrace({ file: small }),
      baseline: () => rawParse(small),
      target: { max: Number((1 / 0.7).toFixed(3)) },
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
