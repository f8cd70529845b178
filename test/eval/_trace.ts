/**
 * Hand-built Traces for given-trace → then tests: `trace({tools: ["read", ["edit", {path: "a"}]]})`.
 * Seqs are assigned in order so failures can be checked against them.
 */
import type { DenySource, ModelErrorKind } from "../../src/rollout/events.ts";
import type { DeniedSpan, ModelSpan, ToolSpan, Trace } from "../../src/rollout/folds/trace-types.ts";

export type ToolInput = string | [string, unknown] | (Partial<ToolSpan> & { tool: string });

export interface TraceInput extends Partial<Omit<Trace, "toolSpans" | "deniedSpans" | "modelSpans">> {
  tools?: ToolInput[];
  denied?: (Partial<DeniedSpan> & { tool: string; source: DenySource })[];
  models?: (Partial<ModelSpan> & { errorKind?: ModelErrorKind })[];
}

/** An empty, finished trace with the given parts filled in. */
export function trace(input: TraceInput = {}): Trace {
  const { tools = [], denied = [], models = [], ...rest } = input;
  let seq = 1;
  const toolSpans: ToolSpan[] = tools.map((t, index) => {
    const base = typeof t === "string" ? { tool: t } : Array.isArray(t) ? { tool: t[0], args: t[1] } : t;
    const callSeq = base.callSeq ?? (seq += 2) - 1;
    return { callSeq, outputSeq: callSeq + 1, index, startedAt: 1000 + callSeq, duration_ms: 10, ...base };
  });
  const modelSpans: ModelSpan[] = models.map((m) => ({
    turnKey: "t1",
    turnId: "t1",
    seq: seq++,
    provider: "p",
    model: "m",
    startedAt: 1000,
    status: "ok",
    duration_ms: 100,
    toolCalls: [],
    ...m,
  }));
  const deniedSpans: DeniedSpan[] = denied.map((d) => ({ seq: seq++, at: 1000, ...d }));
  return {
    sessionId: "s1",
    startedAt: 1000,
    endedAt: 2000,
    wall_ms: 1000,
    eventCount: seq,
    lastSeq: seq,
    turns: [],
    modelSpans,
    toolSpans,
    deniedSpans,
    pendingCalls: [],
    compactions: [],
    compactedTokens: 0,
    changedFiles: [],
    redirects: 0,
    redirectsSkipped: 0,
    model_ms: 0,
    tool_ms: 0,
    inputTokens: 0,
    outputTokens: 0,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    reasoningTokens: 0,
    hung: false,
    inFlight: false,
    ended: true,
    parseErrors: [],
    ...rest,
  };
}
