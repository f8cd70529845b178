/**
 * The worker side of the pool: `freecode eval __worker` reads one request (the case files, the
 * options and its shard of sessions) from stdin and writes one JSON line per evaluated session. The
 * cases are loaded from the same files in the same order as the parent, so case indices agree.
 */
import * as v from "valibot";
import { badInput } from "../errors.ts";
import { openStore } from "../storage/select.ts";
import { compileCase } from "./compile.ts";
import { type EvaluateOptions, evaluateSession, type SessionJob } from "./evaluate.ts";
import { loadCases } from "./load-cases.ts";

export interface WorkerRequest {
  casePaths: string[];
  cwd: string;
  prices: Record<string, { input: number; output: number; cacheRead?: number; cacheWrite?: number }>;
  evaluate: Omit<EvaluateOptions, "adapter">;
  /** Sessions read through a store: which one. */
  store?: { name?: string; home: string };
  jobs: SessionJob[];
}

const RequestSchema = v.looseObject({
  casePaths: v.array(v.string()),
  cwd: v.string(),
  prices: v.record(v.string(), v.looseObject({ input: v.number(), output: v.number() })),
  evaluate: v.looseObject({}),
  store: v.optional(v.object({ name: v.optional(v.string()), home: v.string() })),
  jobs: v.array(v.looseObject({ ref: v.looseObject({ sessionId: v.string() }), cases: v.array(v.number()) })),
});

/** Serve one worker request; yields chunks of JSON lines (batched, so writes are few and large). */
export async function* serveWorker(input: string): AsyncGenerator<string> {
  const parsed = v.safeParse(RequestSchema, JSON.parse(input));
  if (!parsed.success) throw badInput(`bad eval worker request: ${v.summarize(parsed.issues)}`);
  const req = parsed.output as unknown as WorkerRequest;
  process.chdir(req.cwd);
  const compiled = loadCases(req.casePaths).map((c) => compileCase(c, req.prices));
  const adapter = req.store ? (await openStore(req.store.name, { home: req.store.home })).adapter : undefined;
  try {
    let batch = "";
    for (const job of req.jobs) {
      const ev = await evaluateSession(job, compiled, { ...req.evaluate, ...(adapter ? { adapter } : {}) });
      batch += `${JSON.stringify(ev)}\n`;
      if (batch.length > 1 << 20) {
        yield batch;
        batch = "";
      }
    }
    if (batch) yield batch;
  } finally {
    await adapter?.close();
  }
}
