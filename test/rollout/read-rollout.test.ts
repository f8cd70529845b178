/**
 * Reading a rollout as a stream: a slow consumer holds the reader back (`pause`), a consumer that
 * leaves early stops it, and every event still arrives in order.
 */
import { expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { foldRollout, readRollout } from "../../src/rollout/load.ts";
import { tempDir } from "../_helpers.ts";
import { logBuilder } from "./_events.ts";

function bigLog(path: string, turns: number) {
  const log = logBuilder("s");
  for (let i = 0; i < turns; i++) log.add({ type: "turn.started", turnId: `turn-${i}-${"x".repeat(200)}` });
  writeFileSync(path, log.events.map((e) => `${JSON.stringify(e)}\n`).join(""));
  return log.events.length;
}

test("a pause the consumer asks for holds the file reader until it settles", async () => {
  await using dir = await tempDir();
  const file = join(dir.path, "events.jsonl");
  const total = bigLog(file, 20_000); // ~5 MB: several 1 MiB slices
  let pushed = 0;
  let release: (() => void) | undefined;
  const paused: number[] = [];
  const reading = foldRollout(
    { file },
    { push: () => void pushed++, issue: () => {} },
    {
      pause: () => {
        if (paused.length >= 2) return undefined;
        paused.push(pushed);
        return new Promise<void>((resolve) => (release = resolve));
      },
    },
  );
  await Bun.sleep(30);
  expect(paused).toHaveLength(1);
  expect(pushed).toBe(paused[0]!); // nothing read while paused
  release!();
  await Bun.sleep(30);
  expect(paused).toHaveLength(2);
  expect(pushed).toBe(paused[1]!);
  expect(paused[1]!).toBeGreaterThan(paused[0]!);
  release!();
  await reading;
  expect(pushed).toBe(total);
});

test("readRollout gives every event in order to a slow consumer, and stops when the consumer leaves", async () => {
  await using dir = await tempDir();
  const file = join(dir.path, "events.jsonl");
  const total = bigLog(file, 20_000);
  let seq = 0;
  for await (const e of readRollout({ file })) {
    expect(e.seq).toBe(++seq);
    if (seq % 5000 === 0) await Bun.sleep(1);
  }
  expect(seq).toBe(total);
  // Leaving after ten events: the loop ends and the read stops (no hang, no error).
  let n = 0;
  for await (const _ of readRollout({ file })) if (++n === 10) break;
  expect(n).toBe(10);
  // And the file can be read again from the start.
  let again = 0;
  for await (const _ of readRollout({ file })) again++;
  expect(again).toBe(total);
});
