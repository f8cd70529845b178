/**
 * Loading a 100,000-message history through the files adapter (read, split, parse, validate every
 * line) against a raw `split("\n")` + `JSON.parse` of the same file. Target ≤ 2×.
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import factory from "../src/storage/adapters/files.ts";
import type { StoredMessage } from "../src/storage/records.ts";
import { defineBench } from "./_harness.ts";
import { benchMeta } from "./_meta.ts";

const work = mkdtempSync(join(tmpdir(), "freecode-bench-history-"));
const COUNT = 100_000;
let file = "";

function message(i: number): StoredMessage {
  const m: StoredMessage = {
    id: `m${i}`,
    role: i % 2 ? "assistant" : "user",
    parts: [
      {
        type: "text",
        content: `message ${i}: ordinary transcript text of a realistic length, with some words in it.`,
      },
    ],
    timestamp: 1_700_000_000_000 + i,
  };
  if (i % 10 === 1)
    m.parts.push({
      type: "tool",
      tool: { name: "read", args: { path: `src/f${i}.ts` } },
      result: "file contents here",
    });
  return m;
}

export default defineBench({
  name: "history",
  description: `load a ${COUNT.toLocaleString("en")}-message history vs raw split + JSON.parse`,
  rounds: 7,
  async setup() {
    const store = factory({ home: work, fsync: "never" });
    const all = Array.from({ length: COUNT }, (_, i) => message(i));
    await store.createSession(benchMeta("big"), all);
    await store.close();
    file = join(work, "sessions", "bench", "big", "messages.jsonl");
  },
  teardown: () => rmSync(work, { recursive: true, force: true }),
  pairs: () => {
    const store = factory({ home: work, fsync: "never" });
    return [
      {
        label: `readMessages (${COUNT} messages) vs split + JSON.parse`,
        subject: async () => {
          const { messages } = await store.readMessages("big");
          if (messages.length !== COUNT) throw new Error(`read ${messages.length} messages`);
        },
        baseline: () => {
          const out: unknown[] = [];
          for (const line of readFileSync(file, "utf8").split("\n")) if (line) out.push(JSON.parse(line));
          if (out.length !== COUNT) throw new Error("bad baseline");
        },
        target: { max: 2 },
        units: COUNT,
        unitName: "messages",
      },
    ];
  },
  facts: () => ({ "file size": `${(statSync(file).size / 1024 / 1024).toFixed(1)} MiB` }),
});
