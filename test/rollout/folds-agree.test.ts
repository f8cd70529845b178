/**
 * The folds agree with each other on random logs (seeded, so a failure repeats): resumed sessions,
 * turn ids reused, events naming no turn or an unknown one, calls with and without ids, outputs with
 * no call, refusals that withdraw a call, responses with no request, compactions. For every log:
 * no fold throws; the trace's spans and pending calls are the replay's calls, paired the same way;
 * refusals, turns and tokens agree; folding the log from a file gives what folding its events in
 * memory gives; and following the file as it grows (cut at random bytes) ends at the same trace.
 */
import { afterAll, expect, test } from "bun:test";
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { replaySession } from "../../src/rollout/folds/replay.ts";
import { buildTrace, createTraceFold } from "../../src/rollout/folds/trace.ts";
import { usageOf } from "../../src/rollout/folds/usage.ts";
import { foldRollout, loadReplay, loadTrace, loadUsage, type ReadOptions } from "../../src/rollout/load.ts";
import type { ReadIssue } from "../../src/storage/contract.ts";
import { seeded } from "../_random.ts";
import { randomLog } from "./_random-log.ts";

const dir = mkdtempSync(join(tmpdir(), "freecode-folds-agree-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("on 150 random logs the trace, replay and usage folds agree, from memory and from a file", async () => {
  for (let seed = 1; seed <= Number(process.env.AGREE_SEEDS ?? 150); seed++) {
    const events = randomLog(seed, 20 + (seed % 7) * 30);
    const where = `seed ${seed}`;
    const trace = buildTrace("s", events);
    const replay = replaySession("s", events);
    const usage = usageOf("s", events);
    const ran = trace.toolSpans.length + trace.pendingCalls.length;
    expect([where, ran, trace.deniedSpans.length]).toEqual([where, replay.totalCalls, replay.totalDenied]);
    const replayCalls = replay.turns.flatMap((t) => t.calls);
    expect([where, replayCalls.length]).toEqual([where, replay.totalCalls]);
    // The same pairs: each call that ran took the same output (so the same duration) in both folds,
    // and is known by the same id (an id-less call takes the id of the output that answers it).
    // With the same arguments (a refused call that ran anyway takes its call's, else its refusal's).
    const ranPairs = (xs: [number, number | undefined, string, string][]) => xs.sort((a, b) => a[0] - b[0]);
    const argsOf = (args: unknown) => JSON.stringify(args) ?? "-";
    expect([
      where,
      ranPairs(
        replayCalls.filter((c) => c.done).map((c) => [c.seq, c.duration_ms, c.callId ?? "-", argsOf(c.args)]),
      ),
    ]).toEqual([
      where,
      ranPairs(trace.toolSpans.map((t) => [t.callSeq, t.duration_ms, t.callId ?? "-", argsOf(t.args)])),
    ]);
    expect([
      where,
      replayCalls
        .filter((c) => !c.done)
        .map((c) => c.seq)
        .sort((a, b) => a - b),
    ]).toEqual([where, trace.pendingCalls.map((c) => c.seq)]);
    expect([where, replay.turns.reduce((sum, t) => sum + t.denied.length, 0)]).toEqual([
      where,
      replay.totalDenied,
    ]);
    // Same turns, but for the replay's implicit turn for events before any turn.
    const keys = replay.turns.map((t) => t.turnKey).filter((k) => k !== "(none)#0");
    expect([where, keys]).toEqual([where, trace.turns.map((t) => t.turnKey)]);
    expect(new Set(keys).size).toBe(keys.length);
    expect([where, usage.totals.inputTokens, usage.totals.outputTokens]).toEqual([
      where,
      trace.inputTokens,
      trace.outputTokens,
    ]);
    // Spans in call order, each output paired at most once.
    const seqs = trace.toolSpans.map((s) => s.callSeq);
    expect([where, seqs]).toEqual([where, [...seqs].sort((a, b) => a - b)]);
    expect(new Set(trace.toolSpans.map((s) => s.outputSeq)).size).toBe(trace.toolSpans.length);
    // From a file: the same folds, their fields read back from the lines.
    if (seed % 5 === 0) {
      const file = join(dir, `${seed}.jsonl`);
      writeFileSync(file, events.map((e) => `${JSON.stringify(e)}\n`).join(""));
      const source = { file, sessionId: "s" };
      expect([where, JSON.stringify(await loadTrace(source))]).toEqual([where, JSON.stringify(trace)]);
      expect([where, JSON.stringify(await loadReplay(source))]).toEqual([where, JSON.stringify(replay)]);
      expect([where, await loadUsage(source)]).toEqual([where, usage]);
      // Followed as it grows (`trace --follow`): written in chunks cut at random bytes, read from
      // where each read stopped; the last snapshot is the one-shot trace.
      const text = Buffer.from(events.map((e) => `${JSON.stringify(e)}\n`).join(""));
      const grown = join(dir, `${seed}-grown.jsonl`);
      writeFileSync(grown, "");
      const fold = createTraceFold("s");
      const sink = {
        push: fold.push,
        file: fold.file,
        skip: fold.skip,
        issue: (i: ReadIssue) => i.torn || fold.issue(i),
      };
      const r = seeded(seed);
      const cuts = [
        ...Array.from({ length: 4 }, () => r.int(text.length)).sort((a, b) => a - b),
        text.length,
      ];
      let position: ReadOptions = {};
      let at = 0;
      for (const cut of cuts) {
        appendFileSync(grown, text.subarray(at, cut));
        at = cut;
        const read = await foldRollout({ file: grown, sessionId: "s" }, sink, position);
        position = { fromOffset: read.offset, firstLineNo: read.nextLineNo };
      }
      expect([where, JSON.stringify(fold.finish())]).toEqual([where, JSON.stringify(trace)]);
    }
  }
}, 120_000);
