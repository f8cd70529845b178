/**
 * Appending messages in-process through the files adapter, one message per call, against a raw
 * `writeSync` of the same lines to an open file. Target: ≥ 100,000 messages/s with `fsync: never`
 * (a raw write runs at ~250,000/s here, hence the ratio target ≤ 2.5)
 * (printed as throughput; the ratio shows the cost over a bare write). `batch` and `always` are
 * reported too (`always` syncs every append, so it runs fewer messages).
 */
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import factory from "../src/storage/adapters/files.ts";
import type { StorageAdapter } from "../src/storage/contract.ts";
import type { StoredMessage } from "../src/storage/records.ts";
import { defineBench } from "./_harness.ts";
import { benchMeta } from "./_meta.ts";

const work = mkdtempSync(join(tmpdir(), "freecode-bench-append-"));
const N = 20_000;
const N_ALWAYS = 300;
let round = 0;

const message = (i: number): StoredMessage => ({
  id: `m${round}-${i}`,
  role: i % 2 ? "assistant" : "user",
  parts: [
    {
      type: "text",
      content: `message ${i}: a line of ordinary length for an agent transcript, about two hundred bytes all told.`,
    },
  ],
  timestamp: 1_700_000_000_000 + i,
});

function adapterRun(fsync: "never" | "batch" | "always", count: number) {
  return async () => {
    round++;
    const store: StorageAdapter = factory({ home: join(work, `h-${fsync}-${round}`), fsync });
    await store.createSession(benchMeta("bench"), [message(-1)]);
    for (let i = 0; i < count; i++) await store.appendMessages("bench", [message(i)]);
    await store.close();
  };
}

function rawRun(count: number) {
  return () => {
    round++;
    const fd = openSync(join(work, `raw-${round}.jsonl`), "a");
    for (let i = 0; i < count; i++) {
      writeSync(fd, `${JSON.stringify(message(i))}\n`);
    }
    closeSync(fd);
  };
}

export default defineBench({
  name: "append",
  description: "message appends in-process (files adapter, one message per call) vs raw writeSync",
  rounds: 5,
  teardown: () => rmSync(work, { recursive: true, force: true }),
  pairs: () => [
    {
      label: `fsync never: ${N} appends vs raw writeSync`,
      subject: adapterRun("never", N),
      baseline: rawRun(N),
      target: { max: 2.5 },
      units: N,
      unitName: "messages",
    },
    {
      label: `fsync batch: ${N} appends vs raw writeSync`,
      subject: adapterRun("batch", N),
      baseline: rawRun(N),
      units: N,
      unitName: "messages",
    },
    {
      label: `fsync always: ${N_ALWAYS} appends vs raw writeSync`,
      subject: adapterRun("always", N_ALWAYS),
      baseline: rawRun(N_ALWAYS),
      units: N_ALWAYS,
      unitName: "messages",
    },
  ],
});
