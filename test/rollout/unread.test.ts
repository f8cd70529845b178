/**
 * Tool outputs left unparsed (`rollout/_unread.ts`): the trace and usage folds read a log the same
 * with or without the skip, and the one thing they give up is judging an output's text. The replay
 * fold and `rollout verify`, which do not skip, still report a line whose output is not valid JSON.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createTraceFold } from "../../src/rollout/folds/trace.ts";
import { foldRollout, loadReplay, loadTrace } from "../../src/rollout/load.ts";
import { verifyRollout } from "../../src/rollout/verify.ts";
import { logBuilder } from "./_events.ts";

const dir = mkdtempSync(join(tmpdir(), "freecode-unread-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A log of 12 calls with outputs, as lines (`type` first, as the store writes them). */
function lines(output: (i: number) => string): string[] {
  const log = logBuilder("s");
  log.at(0).add({ type: "turn.started", turnId: "t" });
  for (let i = 0; i < 12; i++) {
    log.at(10 * i + 1).add({ type: "function.call", turnId: "t", tool: "Bash", callId: `c${i}`, args: {} });
    // The output before the fields the trace reads, as the importers write it.
    const out = {
      type: "function.output",
      turnId: "t",
      tool: "Bash",
      output: output(i),
      failed: i % 3 === 0,
    } as const;
    log.at(10 * i + 5).add({ ...out, callId: `c${i}`, duration_ms: i });
  }
  return log.events.map((e) => JSON.stringify(e));
}

function write(name: string, text: string): string {
  const file = join(dir, `${name}.jsonl`);
  writeFileSync(file, text);
  return file;
}

describe("tool outputs left unparsed", () => {
  test("the trace is the same as a read that parses every output", async () => {
    const file = write("same", `${lines((i) => `out "${i}" \\ é ✓ 😀 ${"x".repeat(i * 100)}`).join("\n")}\n`);
    const fold = createTraceFold("same.jsonl");
    await foldRollout({ file }, { ...fold, unread: undefined });
    expect(JSON.stringify(await loadTrace({ file }))).toBe(JSON.stringify(fold.seal()));
  });

  test("a log read in parts: arguments left unparsed too, but not a file-writing tool's", async () => {
    const log = logBuilder("s");
    log.at(0).add({ type: "turn.started", turnId: "t" });
    // Over 256 KiB, so the fold keeps arguments as their lines' places, not parsed values.
    for (let i = 0; i < 400; i++) {
      const tool = i % 4 === 0 ? "Write" : "Bash";
      const args =
        tool === "Write"
          ? { file_path: `f${i}.ts`, content: "w".repeat(900) }
          : { command: `echo ${"b".repeat(900)}` };
      log.at(10 * i + 1).add({ type: "function.call", turnId: "t", tool, callId: `c${i}`, args });
      if (i % 50 === 7)
        log
          .at(10 * i + 2)
          .add({ type: "function.denied", turnId: "t", tool, callId: `d${i}`, args, source: "user" });
      else
        log
          .at(10 * i + 5)
          .add({ type: "function.output", turnId: "t", tool, output: "o".repeat(600), callId: `c${i}` });
    }
    const file = write("parts", log.events.map((e) => `${JSON.stringify(e)}\n`).join(""));
    const fold = createTraceFold("parts.jsonl");
    await foldRollout({ file }, { ...fold, unread: undefined });
    const whole = fold.seal();
    const trace = await loadTrace({ file });
    expect(JSON.stringify(trace)).toBe(JSON.stringify(whole));
    expect(trace.changedFiles.length).toBe(100);
    // Arguments are read back from the log, whole.
    expect(trace.toolSpans[1]!.args).toEqual({ command: `echo ${"b".repeat(900)}` });
    expect(trace.deniedSpans[0]!.args).toEqual({ command: `echo ${"b".repeat(900)}` });
  });

  test("an output that is not valid JSON text: the trace reads the line; replay and verify report it", async () => {
    // Lines of 512 bytes or more: shorter ones are parsed whole (see util/json-skip.ts).
    const text = lines((i) => `output ${i} ${"x".repeat(600)}`)
      // A raw tab inside a string: JSON.parse refuses it; no JSON writer emits it.
      .map((l) => l.replace('"output 3 ', '"output\t3 '))
      .join("\n");
    const file = write("lenient", `${text}\n`);
    const trace = await loadTrace({ file });
    expect(trace.parseErrors).toEqual([]);
    expect(trace.toolSpans.length).toBe(12);
    const replay = await loadReplay({ file });
    expect(replay.errors.map((e) => e.line)).toEqual([9]);
    const verified = await verifyRollout({ file }, "s");
    expect(verified.ok).toBe(false);
  });
});
