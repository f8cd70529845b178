/**
 * Helpers of the importer conformance tests: import one corpus source into a fresh memory store and
 * count, from the stored rollout, what the raw-count side of each test counts from the raw JSON.
 */
import { expect } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import * as v from "valibot";
import { runEval } from "../../src/eval/runner.ts";
import { importSources } from "../../src/import/import.ts";
import type { Agent } from "../../src/import/types.ts";
import { RolloutEventSchema } from "../../src/rollout/events.ts";
import { loadTrace } from "../../src/rollout/load.ts";
import type { StorageAdapter } from "../../src/storage/contract.ts";
import { openStore } from "../../src/storage/select.ts";

export interface Tally {
  toolCalls: number;
  toolErrors: number;
  denied: number;
  compactions: number;
  tokens: number;
  /** Provider errors (`model.error`). */
  modelErrors: number;
  /** Turns the user interrupted (`turn.aborted`). */
  aborts: number;
}

export const zero = (): Tally => ({
  toolCalls: 0,
  toolErrors: 0,
  denied: 0,
  compactions: 0,
  tokens: 0,
  modelErrors: 0,
  aborts: 0,
});

/** Import `path` as `agent` into a new memory store under `home`. */
export async function importOne(home: string, agent: Agent, path: string) {
  const { adapter } = await openStore("memory", { home });
  const report = await importSources({ agent, paths: [path], adapter, home, fsync: false });
  return { adapter, report };
}

/** Count tool calls, failures, denials, compactions, tokens, provider errors and aborted turns in the stored rollouts of `ids`. */
export async function tallyRollouts(adapter: StorageAdapter, ids: string[]): Promise<Tally> {
  const t = zero();
  for (const id of ids) {
    const calls = new Set<string>();
    for await (const read of adapter.readEvents(id)) {
      const e = read.event;
      if (!e) throw new Error(`unreadable event in ${id}: ${read.issue?.message}`);
      const valid = v.safeParse(RolloutEventSchema, e);
      if (!valid.success) throw new Error(`${id} ${e.type}: ${v.summarize(valid.issues)}`);
      const callId = String(e.callId ?? e.id);
      if (e.type === "function.call" || e.type === "function.denied") calls.add(callId);
      if (e.type === "function.output" && e.failed === true) t.toolErrors++;
      if (e.type === "function.denied") t.denied++;
      if (e.type === "compact.occurred") t.compactions++;
      if (e.type === "model.error") t.modelErrors++;
      if (e.type === "turn.aborted") t.aborts++;
      if (e.type === "model.response") {
        for (const k of ["inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens"])
          t.tokens += Number(e[k] ?? 0);
      }
    }
    t.toolCalls += calls.size;
  }
  return t;
}

/** The ids of every stored session imported from `path`. */
export async function sessionsFrom(adapter: StorageAdapter, path: string): Promise<string[]> {
  const page = await adapter.listSessions({ all: true, limit: 10_000 });
  return page.items
    .filter((m) => (m.source as { path?: string } | undefined)?.path === path)
    .map((m) => m.id);
}

/** The trace fold runs on every imported session, and its tool spans agree with the rollout. */
export async function checkTraces(adapter: StorageAdapter, ids: string[], tally: Tally): Promise<void> {
  let spans = 0;
  let denied = 0;
  for (const id of ids) {
    const trace = await loadTrace({ adapter, sessionId: id });
    expect(trace.parseErrors).toEqual([]);
    // A model call starts within its turn (a request stamped before its turn's start made OTLP
    // export a chat span starting before its parent turn span).
    const turnStart = new Map(trace.turns.map((t) => [t.turnKey, t.startedAt]));
    const early = trace.modelSpans.filter((m) => m.startedAt < (turnStart.get(m.turnKey) ?? m.startedAt));
    expect([id, early.map((m) => m.turnKey)]).toEqual([id, []]);
    spans += trace.toolSpans.length + trace.pendingCalls.length;
    denied += trace.deniedSpans.length;
  }
  expect(denied).toBe(tally.denied);
  expect(spans + denied).toBe(tally.toolCalls);
}

/**
 * The trace's tool spans of each session come in the order the agent made the calls (`order`: call
 * ids as the raw file has them), not the order their results came in: parallel calls finish out of
 * order, and eval's sequences read this order. Returns how many spans were compared.
 */
export async function checkCallOrder(
  adapter: StorageAdapter,
  ids: string[],
  order: string[],
): Promise<number> {
  const rank = new Map(order.map((id, i) => [id, i] as const));
  let compared = 0;
  for (const id of ids) {
    const trace = await loadTrace({ adapter, sessionId: id });
    const got = trace.toolSpans.map((s) => s.callId ?? "").filter((c) => rank.has(c));
    const want = [...got].sort((a, b) => rank.get(a)! - rank.get(b)!);
    expect(got).toEqual(want);
    compared += got.length;
  }
  return compared;
}

/** `freecode eval` (the library call) evaluates every imported session without an error. */
export async function checkEval(
  adapter: StorageAdapter,
  home: string,
  expectSessions: number,
): Promise<void> {
  const file = join(home, "imported.cases.json");
  const cases = [
    {
      id: "imported",
      sessions: "all",
      expect: [{ noHung: true }, { deniedNeverRan: true }, { noRetryAfterDenial: { maxRetries: 100 } }],
    },
  ];
  writeFileSync(file, JSON.stringify(cases));
  const report = await runEval({ cases: [file], store: { adapter, home }, workers: 1 });
  expect(report.summary.errored).toBe(0);
  expect(report.sessionsFolded).toBe(expectSessions);
  expect(report.exitCode).not.toBe(2);
}

/** Raw transcript JSON, read the way the agent wrote it (the independent side of each count). */
// biome-ignore lint/suspicious/noExplicitAny: raw transcripts are untyped; the counts read them as-is
export type Raw = any;

/** Lines of a JSONL file, parsed (the raw side of the count). */
export async function rawLines(path: string): Promise<Record<string, Raw>[]> {
  return (await Bun.file(path).text())
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l));
}
