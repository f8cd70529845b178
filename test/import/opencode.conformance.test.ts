/**
 * OpenCode conformance: the row dump and every reconstructed export in corpus/opencode import, and
 * tool calls, tool errors, denied calls, compactions, aborted turns and total tokens match a count
 * over the raw rows and parts written here. The row dump's per-session token columns agree too, and
 * each step's recorded cost is its response's.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CORPUS, tempDir, tempHome } from "../_helpers.ts";
import type { Raw } from "./_corpus.ts";
import {
  checkEval,
  checkTraces,
  importOne,
  rawLines,
  sessionsFrom,
  type Tally,
  tallyRollouts,
  zero,
} from "./_corpus.ts";

const root = join(CORPUS, "opencode", "richardaiand_aiand-portfolio-web");
const exports = [...new Bun.Glob("*.json").scanSync(join(root, "reconstructed_export"))].sort();
const DENIAL = /^The user (rejected permission|dismissed)|^The user has specified a rule/;
/** A call the process never finished (the corpus sessions ended long ago: it was cut off). */
const leftOpen = (p: Raw) => p.type === "tool" && ["pending", "running"].includes(p.state?.status);

/**
 * The messages (by id) whose tool parts the user ran (OpenCode's `!ls`): the model makes its calls
 * within a step (`step-start` … `step-finish`); a message of tools with no step is not the model's.
 */
function userRun(parts: { messageId: string; part: Raw }[]): Set<string> {
  const stepped = new Set(parts.filter((p) => p.part.type === "step-start").map((p) => p.messageId));
  return new Set(
    parts.filter((p) => p.part.type === "tool" && !stepped.has(p.messageId)).map((p) => p.messageId),
  );
}

function tallyParts(all: { messageId: string; part: Raw }[]): Tally {
  const t = zero();
  const byUser = userRun(all);
  for (const { messageId, part: p } of all) {
    if (p.type === "tool" && !byUser.has(messageId)) {
      t.toolCalls++;
      const s = p.state ?? {};
      if (s.status === "error" && DENIAL.test(String(s.error))) t.denied++;
      else if (s.status === "error") t.toolErrors++;
      else if (s.status === "completed" && typeof s.metadata?.exit === "number" && s.metadata.exit !== 0)
        t.toolErrors++;
    }
    if (p.type === "compaction") t.compactions++;
    if (p.type === "retry") t.modelErrors++;
    if (p.type === "step-finish") {
      const k = p.tokens ?? {};
      t.tokens +=
        (k.input ?? 0) + (k.output ?? 0) + (k.reasoning ?? 0) + (k.cache?.read ?? 0) + (k.cache?.write ?? 0);
    }
  }
  return t;
}

/**
 * A message's named error: an abort ends the turn, any other is a provider error. A message with a
 * call left open (`cutOff`, by message id) ended its turn too, unless it was aborted already.
 */
function withMessageErrors(t: Tally, infos: Raw[], cutOff: Set<string>): Tally {
  for (const info of infos) {
    if (info.error?.name === "MessageAbortedError") t.aborts++;
    else if (info.error) t.modelErrors++;
    if (cutOff.has(info.id) && info.error?.name !== "MessageAbortedError") t.aborts++;
  }
  return t;
}

describe("opencode corpus conformance", () => {
  test("row dump", async () => {
    await using home = await tempHome();
    const dir = join(root, "rows");
    const { adapter, report } = await importOne(home.path, "opencode", dir);
    expect(report.sources[0]!.warnings).toEqual([]);
    const ids = await sessionsFrom(adapter, dir);
    expect(ids.length).toBe(3);
    const partRows = await rawLines(join(dir, "part.jsonl"));
    const parts = partRows.map((r) => ({ messageId: String(r.message_id), part: JSON.parse(r.data) }));
    const got = await tallyRollouts(adapter, ids);
    const infos = (await rawLines(join(dir, "message.jsonl"))).map((r) => ({
      ...JSON.parse(r.data),
      id: r.id,
    }));
    const cutOff = new Set(partRows.filter((r) => leftOpen(JSON.parse(r.data))).map((r) => r.message_id));
    expect(got).toEqual(withMessageErrors(tallyParts(parts), infos, cutOff));
    // The database's own per-session counters say the same.
    const sessions = await rawLines(join(dir, "session.jsonl"));
    const columns = sessions.reduce(
      (n, s) =>
        n +
        s.tokens_input +
        s.tokens_output +
        s.tokens_reasoning +
        s.tokens_cache_read +
        s.tokens_cache_write,
      0,
    );
    expect(got.tokens).toBe(columns);
    await checkTraces(adapter, ids, got);
    await checkEval(adapter, home.path, 3);
    await adapter.close();
  });

  for (const rel of exports) {
    test(`export ${rel}`, async () => {
      await using home = await tempHome();
      const path = join(root, "reconstructed_export", rel);
      const { adapter, report } = await importOne(home.path, "opencode", path);
      expect(report.sources[0]!.warnings).toEqual([]);
      const ids = await sessionsFrom(adapter, path);
      expect(ids.length).toBe(1);
      const doc = await Bun.file(path).json();
      const got = await tallyRollouts(adapter, ids);
      const want = tallyParts(
        doc.messages.flatMap((m: Raw) => m.parts.map((part: Raw) => ({ messageId: m.info.id, part }))),
      );
      const cutOff = new Set<string>(
        doc.messages.filter((m: Raw) => m.parts.some(leftOpen)).map((m: Raw) => m.info.id),
      );
      expect(got).toEqual(
        withMessageErrors(
          want,
          doc.messages.map((m: Raw) => m.info),
          cutOff,
        ),
      );
      await checkTraces(adapter, ids, got);
      await checkEval(adapter, home.path, 1);
      await adapter.close();
    });
  }

  test("each step's recorded cost is its response's: usage (no prices) and the trace sum them", async () => {
    const { loadTrace, loadUsage } = await import("../../src/rollout/load.ts");
    const rowParts = (await rawLines(join(root, "rows", "part.jsonl"))).map((r) => JSON.parse(r.data));
    const sources = [
      { path: join(root, "rows"), parts: rowParts as Raw[] },
      ...exports.map((rel) => {
        const path = join(root, "reconstructed_export", rel);
        const doc = JSON.parse(readFileSync(path, "utf8"));
        return { path, parts: doc.messages.flatMap((m: Raw) => m.parts) as Raw[] };
      }),
    ];
    for (const { path, parts } of sources) {
      await using home = await tempHome();
      const { adapter } = await importOne(home.path, "opencode", path);
      const steps = parts.filter((p) => p.type === "step-finish");
      const want = steps.reduce((n, p) => n + p.cost, 0);
      expect(steps.every((p) => typeof p.cost === "number")).toBe(true);
      let got = 0;
      let usd = 0;
      let spans = 0;
      for (const id of await sessionsFrom(adapter, path)) {
        for await (const { event } of adapter.readEvents(id))
          if (event?.type === "model.response") got += (event as { costUsd?: number }).costUsd ?? Number.NaN;
        const u = await loadUsage({ adapter, sessionId: id });
        expect(u.models.every((m) => m.costFrom === "recorded")).toBe(true);
        usd += u.totals.costUsd!;
        // The trace's model spans carry them too: eval's `cost` budget reads them.
        for (const m of (await loadTrace({ adapter, sessionId: id })).modelSpans) spans += m.costUsd ?? 0;
      }
      expect(got).toBeCloseTo(want, 10);
      expect(usd).toBeCloseTo(want, 10);
      expect(spans).toBeCloseTo(want, 10);
      await adapter.close();
    }
  });

  test("a recorded cost of 0 for a step that used tokens is unknown, not free (OpenCode writes 0 when unpriced)", async () => {
    const { loadUsage } = await import("../../src/rollout/load.ts");
    await using home = await tempHome();
    await using dir = await tempDir("freecode-oc0-");
    const rel = exports[0]!;
    const doc = JSON.parse(readFileSync(join(root, "reconstructed_export", rel), "utf8"));
    for (const m of doc.messages) for (const p of m.parts) if (p.type === "step-finish") p.cost = 0;
    const path = join(dir.path, rel);
    writeFileSync(path, JSON.stringify(doc));
    const { adapter } = await importOne(home.path, "opencode", path);
    const [id] = await sessionsFrom(adapter, path);
    const u = await loadUsage({ adapter, sessionId: id! });
    expect(u.models.map((m) => [m.costUsd, m.costFrom])).toEqual(u.models.map(() => [null, undefined]));
    expect(u.totals.costUsd).toBeNull();
    await adapter.close();
  });

  test("regression: commands the user ran (`!ls`) are not the agent's calls, nor in its turn", async () => {
    await using home = await tempHome();
    const path = join(root, "reconstructed_export", "ses_1279fce82ffeZOJhNwml1w1Fu4.json");
    const { adapter, report } = await importOne(home.path, "opencode", path);
    expect(report.sources[0]!.entries.skipped["(user shell command)"]).toBe(2);
    const { loadTrace } = await import("../../src/rollout/load.ts");
    const trace = await loadTrace({ adapter, sessionId: "opencode-ses_1279fce82ffeZOJhNwml1w1Fu4" });
    const commands = trace.toolSpans.map((s) => (s.args as { command?: string } | undefined)?.command);
    expect(commands).not.toContain("ls");
    expect(commands).not.toContain("pwd");
    await adapter.close();
  });

  test("tools left running by a crash are calls without an output, in interrupted turns", async () => {
    await using home = await tempHome();
    const { adapter } = await importOne(home.path, "opencode", join(root, "rows"));
    const { loadTrace } = await import("../../src/rollout/load.ts");
    const open = (await rawLines(join(root, "rows", "part.jsonl"))).filter((r) =>
      leftOpen(JSON.parse(r.data)),
    );
    let pending = 0;
    const aborted: (string | undefined)[] = [];
    const interrupted: string[] = [];
    for (const id of await sessionsFrom(adapter, join(root, "rows"))) {
      const trace = await loadTrace({ adapter, sessionId: id });
      pending += trace.pendingCalls.length;
      aborted.push(...trace.turns.filter((t) => t.aborted).map((t) => t.abortReason));
      const { messages } = await adapter.readMessages(id);
      interrupted.push(...messages.filter((m) => m.interrupted).map((m) => m.id));
    }
    expect(pending).toBe(open.length);
    expect(aborted).toEqual(open.map(() => "interrupted"));
    expect(interrupted.sort()).toEqual(open.map((r) => r.message_id).sort());
    await adapter.close();
  });
});
