/**
 * Recorder: 200,000 events recorded in-process through `createRecorder` into the files adapter with
 * `fsync: never` (validation, ULID ids, batching, seq assignment under the session lock included),
 * against the same events serialised and appended with plain batched `writeSync` calls. Target: the
 * recorder sustains ≥ 200,000 events/s. Files live in a temp dir, deleted at the end.
 */
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { EventInput } from "../src/rollout/events.ts";
import { createRecorder } from "../src/rollout/recorder.ts";
import type { StorageAdapter } from "../src/storage/contract.ts";
import { openStore } from "../src/storage/select.ts";
import { defineBench } from "./_harness.ts";

const N = Number(process.env.RECORDER_BENCH_EVENTS) || 200_000;
const TARGET = 200_000;
const work = mkdtempSync(join(tmpdir(), "freecode-bench-recorder-"));
let adapter: StorageAdapter;
let round = 0;
const subjectMs: number[] = [];

/** The event mix of a busy session: tool calls and outputs, model traffic, hooks. */
function eventAt(i: number): EventInput {
  const turnId = `turn-${i >> 6}`;
  switch (i % 4) {
    case 0:
      return { type: "function.call", turnId, tool: "Bash", callId: `c${i}`, args: { command: "bun test" } };
    case 1:
      return {
        type: "function.output",
        turnId,
        tool: "Bash",
        callId: `c${i - 1}`,
        duration_ms: 12,
        output: "ok",
      };
    case 2:
      return { type: "model.first_token", turnId, ttft_ms: 300 };
    default:
      return { type: "hook.triggered", hookName: "pre-tool", hookEvent: "PreToolUse", blocked: false };
  }
}
const events = Array.from({ length: N }, (_, i) => eventAt(i));

async function recordAll() {
  const t0 = performance.now();
  const rec = createRecorder({ adapter, sessionId: `bench-${round++}`, enabled: true, flushIntervalMs: 0 });
  for (const e of events) rec.record(e);
  await rec.close();
  subjectMs.push(performance.now() - t0);
}

function rawAppend() {
  const fd = openSync(join(work, `raw-${round++}.jsonl`), "a");
  let buf = "";
  let seq = 0;
  for (const e of events) {
    buf += `${JSON.stringify({ ...e, id: "01HF0000000000000000000000", seq: ++seq, aggregateID: "raw", timestamp: Date.now() })}\n`;
    if (seq % 4096 === 0) {
      writeSync(fd, buf);
      buf = "";
    }
  }
  writeSync(fd, buf);
  closeSync(fd);
}

export default defineBench({
  name: "recorder",
  description: `record ${N.toLocaleString("en")} events (files adapter, fsync never) vs raw batched writeSync of the same JSON`,
  rounds: 5,
  async setup() {
    adapter = (await openStore("files", { home: work, fsync: "never" })).adapter;
  },
  async teardown() {
    await adapter.close();
    rmSync(work, { recursive: true, force: true });
  },
  pairs: () => [
    {
      label: `recorder vs raw append (${N.toLocaleString("en")} events)`,
      subject: recordAll,
      baseline: rawAppend,
      units: N,
      unitName: "events",
    },
  ],
  facts() {
    const sorted = [...subjectMs].sort((a, b) => a - b);
    const median = sorted[sorted.length >> 1] ?? Number.NaN;
    const rate = Math.round((N / median) * 1000);
    return {
      "recorder throughput": `${rate.toLocaleString("en")} events/s (median of ${sorted.length} runs incl. warm-up) target ≥ ${TARGET.toLocaleString("en")} ${rate >= TARGET ? "MET" : "MISSED"}`,
    };
  },
});
