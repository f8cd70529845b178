/**
 * The trace fold: model spans, tool spans (tools that ran), denied spans (kept apart), compactions,
 * changed files and totals, from one session's event stream. Pure and streaming: `push` one event at
 * a time, `finish` any number of times (it snapshots; `--follow` calls it on every redraw with a new
 * `now`). Tool pairing lives in `_tools.ts`; open-request ageing is here, in `finish`.
 */

import type { ReadIssue } from "../../storage/contract.ts";
import { assertNever } from "../../util/assert-never.ts";
import type { RolloutEvent } from "../events.ts";
import { createToolPairing } from "./_tools.ts";
import { changedFileTools } from "./changed-files.ts";
import type { ModelSpan, Trace, TraceTurn } from "./trace-types.ts";
import { createTurnKeyer, type TurnInfo } from "./turns.ts";

/** An open request older than this is `hung` (freecode's provider header timeout, and the ecosystem's). */
export const DEFAULT_HANG_MS = 300_000;
/** A streamed request with no first token after this is flagged as stalled. */
export const DEFAULT_STALL_MS = 60_000;

export interface TraceOptions {
  hangMs?: number;
  stallMs?: number;
  /** Age open requests against this time instead of the last event (`trace --follow`). */
  now?: number;
  /** Tool → path arguments, merged over `DEFAULT_CHANGED_FILE_TOOLS`. */
  changedFileTools?: Record<string, string[]>;
}

export interface TraceFold {
  push(event: RolloutEvent): void;
  /** A line that could not be read: reported in `parseErrors`. */
  issue(issue: ReadIssue): void;
  /** An event of a type newer than the catalogue: counted in `skippedEvents`. */
  skip(type: string): void;
  /** A snapshot of the trace so far (the fold can keep going); `now` overrides the option. */
  finish(now?: number): Trace;
  /** The final Trace without copying the spans (half the peak memory); the fold is spent after it. */
  seal(): Trace;
}

/** Start a trace fold for one session. */
export function createTraceFold(sessionId: string, options: TraceOptions = {}): TraceFold {
  const hangMs = options.hangMs ?? DEFAULT_HANG_MS;
  const stallMs = options.stallMs ?? DEFAULT_STALL_MS;
  const keyer = createTurnKeyer();
  // Every parsed line has its own copy of "Bash" or the model name: keep one per distinct value.
  const interned = new Map<string, string>();
  const intern = (x: string) => {
    const known = interned.get(x);
    if (known !== undefined) return known;
    if (interned.size < 10_000) interned.set(x, x);
    return x;
  };
  const tools = createToolPairing(changedFileTools(options.changedFileTools), (x) => intern(x));
  const turns: TurnInfo[] = [];
  const modelSpans: ModelSpan[] = [];
  const open: ModelSpan[] = [];
  const compactions: Trace["compactions"] = [];
  const parseErrors: Trace["parseErrors"] = [];
  let startedAt: number | undefined;
  let endedAt = 0;
  let eventCount = 0;
  let lastSeq = 0;
  let compactedTokens = 0;
  let redirects = 0;
  let redirectsSkipped = 0;
  let ended = false;
  let skippedEvents = 0;

  const addTurn = (turn: TurnInfo) => void turns.push(turn);
  const keyOf = (turnId: string | undefined, e: RolloutEvent) =>
    keyer.turnFor(turnId, e.timestamp, e.seq, addTurn)?.turnKey;
  /** The open span of this turn, else the oldest open one (turn ids restart on resume). */
  const takeOpen = (turnKey: string | undefined, close: boolean): ModelSpan | undefined => {
    if (open.length === 0) return undefined;
    let i = 0;
    for (let k = 0; k < open.length; k++) {
      if (open[k]!.turnKey === turnKey) {
        i = k;
        break;
      }
    }
    const span = open[i]!;
    if (close) open.splice(i, 1);
    return span;
  };

  const push = (e: RolloutEvent): void => {
    eventCount++;
    if (e.seq > lastSeq) lastSeq = e.seq;
    if (startedAt === undefined || e.timestamp < startedAt) startedAt = e.timestamp;
    if (e.timestamp > endedAt) endedAt = e.timestamp;
    switch (e.type) {
      case "session.started":
        keyer.sessionStarted();
        ended = false;
        return;
      case "session.ended":
        ended = true;
        return;
      case "turn.started":
        addTurn(keyer.start(e.turnId, e.timestamp, e.seq));
        return;
      case "turn.aborted": {
        const turn = keyer.turnFor(e.turnId, e.timestamp, e.seq, addTurn) as TraceTurn | undefined;
        if (turn) {
          turn.aborted = true;
          if (e.reason !== undefined) turn.abortReason = e.reason;
        }
        return;
      }
      case "model.request": {
        const span: ModelSpan = {
          turnKey: keyOf(e.turnId, e)!,
          turnId: e.turnId,
          seq: e.seq,
          provider: intern(e.provider),
          model: intern(e.model),
          startedAt: e.timestamp,
          status: "in_flight",
          duration_ms: 0,
          toolCalls: [],
        };
        if (e.streamed !== undefined) span.streamed = e.streamed;
        if (e.messageCount !== undefined) span.messageCount = e.messageCount;
        if (e.toolCount !== undefined) span.toolCount = e.toolCount;
        if (e.promptChars !== undefined) span.promptChars = e.promptChars;
        modelSpans.push(span);
        open.push(span);
        return;
      }
      case "model.first_token": {
        const span = takeOpen(keyOf(e.turnId, e), false);
        if (span) span.ttft_ms = e.ttft_ms;
        return;
      }
      case "model.response": {
        const span = takeOpen(keyOf(e.turnId, e), true) ?? orphanSpan(e, modelSpans);
        span.status = "ok";
        span.duration_ms = e.duration_ms ?? e.timestamp - span.startedAt;
        if (e.ttft_ms !== undefined) span.ttft_ms = e.ttft_ms;
        if (e.echoedModel !== undefined) span.echoedModel = e.echoedModel;
        if (e.inputTokens !== undefined) span.inputTokens = e.inputTokens;
        if (e.outputTokens !== undefined) span.outputTokens = e.outputTokens;
        if (e.cacheReadTokens !== undefined) span.cacheReadTokens = e.cacheReadTokens;
        if (e.cacheWriteTokens !== undefined) span.cacheWriteTokens = e.cacheWriteTokens;
        if (e.reasoningTokens !== undefined) span.reasoningTokens = e.reasoningTokens;
        span.toolCalls = e.toolCalls ?? [];
        return;
      }
      case "model.error": {
        const span = takeOpen(keyOf(e.turnId, e), true) ?? orphanSpan(e, modelSpans);
        span.status = "error";
        span.duration_ms = e.duration_ms ?? e.timestamp - span.startedAt;
        span.errorKind = e.kind;
        if (e.error !== undefined) span.error = e.error;
        return;
      }
      case "function.call":
        tools.call(e, keyOf(e.turnId, e));
        return;
      case "function.output":
        tools.output(e, keyOf(e.turnId, e));
        return;
      case "function.denied":
        tools.denied(e, keyOf(e.turnId, e));
        return;
      case "compact.occurred":
        compactions.push({
          seq: e.seq,
          at: e.timestamp,
          beforeTokens: e.beforeTokens,
          afterTokens: e.afterTokens,
        });
        compactedTokens += Math.max(0, e.beforeTokens - e.afterTokens);
        return;
      case "redirect.triggered":
        keyOf(e.turnId, e);
        redirects++;
        return;
      case "redirect.skipped":
        keyOf(e.turnId, e);
        redirectsSkipped++;
        return;
      case "parse.error":
        keyOf(e.turnId, e);
        return;
      case "subagent.start":
      case "subagent.stop":
      case "skill.invoked":
      case "hook.triggered":
      case "hook.blocked":
      case "context.overflow":
      case "checkpoint.captured":
      case "checkpoint.restored":
      case "checkpoint.skipped":
        return; // not part of the trace's spans (replay and other folds read them)
      default:
        assertNever(e, "event type");
    }
  };

  const finish = (nowOverride?: number, inPlace = false): Trace => {
    const now = nowOverride ?? options.now;
    const start = startedAt ?? 0;
    const asOf = now ?? endedAt;
    const spans = modelSpans.map((s) => ageSpan(inPlace ? s : { ...s }, asOf, hangMs, stallMs));
    const toolSpans = tools.spans(inPlace);
    const sum = (pick: (s: ModelSpan) => number | undefined) =>
      spans.reduce((acc, s) => acc + (pick(s) ?? 0), 0);
    return {
      sessionId,
      startedAt: start,
      endedAt,
      wall_ms: Math.max(0, (now ?? endedAt) - start),
      eventCount,
      lastSeq,
      turns: inPlace ? (turns as TraceTurn[]) : turns.map((turn) => ({ ...turn }) as TraceTurn),
      modelSpans: spans,
      toolSpans,
      deniedSpans: tools.denials(inPlace),
      pendingCalls: tools.pending(),
      compactions: [...compactions],
      compactedTokens,
      changedFiles: tools.changedFiles(),
      redirects,
      redirectsSkipped,
      model_ms: sum((s) => s.duration_ms),
      tool_ms: toolSpans.reduce((acc, s) => acc + s.duration_ms, 0),
      inputTokens: sum((s) => s.inputTokens),
      outputTokens: sum((s) => s.outputTokens),
      cacheReadTokens: sum((s) => s.cacheReadTokens),
      cacheWriteTokens: sum((s) => s.cacheWriteTokens),
      reasoningTokens: sum((s) => s.reasoningTokens),
      hung: spans.some((s) => s.status === "hung"),
      inFlight: spans.some((s) => s.status === "in_flight"),
      ended,
      stalls: spans.filter((s) => s.stalledBeforeFirstToken).length,
      hangMs,
      stallMs,
      asOf,
      skippedEvents,
      parseErrors: [...parseErrors],
    };
  };

  return {
    push,
    issue(issue) {
      const entry: Trace["parseErrors"][number] = { message: issue.message, torn: issue.torn };
      if (issue.line !== undefined) entry.line = issue.line;
      parseErrors.push(entry);
    },
    skip() {
      skippedEvents++;
    },
    finish: (now?: number) => finish(now),
    seal: () => finish(undefined, true),
  };
}

/** A response or error with no request in the log: a closed span built from the event alone. */
function orphanSpan(
  e: RolloutEvent & { turnId: string; provider: string; model: string },
  into: ModelSpan[],
) {
  const duration = "duration_ms" in e && typeof e.duration_ms === "number" ? e.duration_ms : 0;
  const span: ModelSpan = {
    turnKey: `${e.turnId}#?`,
    turnId: e.turnId,
    seq: e.seq,
    provider: e.provider,
    model: e.model,
    startedAt: e.timestamp - duration,
    status: "ok",
    duration_ms: duration,
    toolCalls: [],
  };
  into.push(span);
  return span;
}

/**
 * Age one span copy against `asOf`: an open request becomes `hung` at `hangMs` (inclusive) and is
 * `in_flight` below it; a streamed request with no first token by `stallMs` is flagged.
 */
export function ageSpan(span: ModelSpan, asOf: number, hangMs: number, stallMs: number): ModelSpan {
  const open = span.status === "in_flight" || span.status === "hung";
  if (open) {
    span.duration_ms = Math.max(0, asOf - span.startedAt);
    span.status = span.duration_ms >= hangMs ? "hung" : "in_flight";
  }
  if (span.streamed !== false) {
    const stalled =
      span.ttft_ms !== undefined
        ? span.ttft_ms >= stallMs
        : (open && span.duration_ms >= stallMs) ||
          (span.errorKind === "stall" && span.duration_ms >= stallMs);
    if (stalled) span.stalledBeforeFirstToken = true;
  }
  return span;
}

/** Fold a whole event sequence into a Trace. */
export function buildTrace(sessionId: string, events: Iterable<RolloutEvent>, options?: TraceOptions): Trace {
  const fold = createTraceFold(sessionId, options);
  for (const event of events) fold.push(event);
  return fold.seal();
}
