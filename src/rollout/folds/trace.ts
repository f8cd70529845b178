/**
 * The trace fold: model spans, tool spans (tools that ran), denied spans (kept apart), compactions,
 * changed files and totals, from one session's event stream. Pure and streaming: `push` one event at
 * a time, `finish` any number of times (it snapshots; `--follow` calls it on every redraw with a new
 * `now`). Tool pairing lives in `_tools.ts`, model spans in `_model-rows.ts`, turns in
 * `_turn-rows.ts`. Spans are rows of numbers (see `_rows.ts`), not objects, so the fold's memory and
 * the GC's work stay small on a log of hundreds of thousands of spans. The Trace `seal` hands out
 * reads its turns and spans through views over the rows (`_views.ts`; open requests are aged as they
 * are read); a `finish` snapshot copies them into plain objects, since the fold goes on changing
 * its rows.
 */

import type { ReadIssue } from "../../storage/contract.ts";
import { assertNever } from "../../util/assert-never.ts";
import type { FieldSkip } from "../../util/json-skip.ts";
import { LineAt } from "../../util/line-at.ts";
import { unreadToolValues } from "../_unread.ts";
import type { RolloutEvent } from "../events.ts";
import { ModelRows } from "./_model-rows.ts";
import { StringTable } from "./_rows.ts";
import { createToolPairing } from "./_tools.ts";
import { TurnRows } from "./_turn-rows.ts";
import { type ModelContext, ModelSpanView, TurnView } from "./_views.ts";
import { changedFileTools } from "./changed-files.ts";
import type { ModelSpan, Trace, TraceTurn } from "./trace-types.ts";

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
  /** One event; `offset`: where its line starts in the file told to `file` (see `RolloutSink`). */
  push(event: RolloutEvent, offset?: number): void;
  /** The log file the events come from: tool arguments are then read back from it when asked for. */
  file(path: string): void;
  /** The log's bytes from `offset` as read (see `RolloutSink.block`): a small log's fields are held. */
  block(bytes: Uint8Array, offset: number): void;
  /** A line that could not be read: reported in `parseErrors`. */
  issue(issue: ReadIssue): void;
  /** Tool outputs, and the arguments it does not read: left unparsed (see `RolloutSink.unread`). */
  readonly unread: FieldSkip;
  /** An event of a type newer than the catalogue: counted in `skippedEvents`. */
  skip(type: string): void;
  /** A snapshot of the trace so far (the fold can keep going); `now` overrides the option. */
  finish(now?: number): Trace;
  /** The final Trace, read through views of the fold's rows; the fold is spent after it (`finish` then throws). */
  seal(): Trace;
}

/** Start a trace fold for one session. */
export function createTraceFold(sessionId: string, options: TraceOptions = {}): TraceFold {
  const hangMs = options.hangMs ?? DEFAULT_HANG_MS;
  const stallMs = options.stallMs ?? DEFAULT_STALL_MS;
  const strings = new StringTable();
  const turns = new TurnRows(strings);
  const models = new ModelRows(strings);
  const fileTools = changedFileTools(options.changedFileTools);
  const tools = createToolPairing(fileTools, strings);
  // Outputs, and the arguments the fold does not read, left unparsed in a file read.
  const unread = unreadToolValues({ fileTools, argumentsInLog: tools.argumentsInLog });
  const compactions: Trace["compactions"] = [];
  const parseErrors: Trace["parseErrors"] = [];
  let startedAt: number | undefined;
  let endedAt = 0;
  let eventCount = 0;
  let lastSeq = 0;
  let compactedTokens = 0;
  let redirects = 0;
  let redirectsSkipped = 0;
  const redirectTokens = { input: 0, output: 0 };
  let ended = false;
  let imported = false;
  let skippedEvents = 0;
  let spent = false;
  let projectPath: string | undefined;
  const otherEvents: Record<string, number> = {};

  /** The turn row an event belongs to (opening an implicit turn for an unknown id). */
  const turnOf = (turnId: string | undefined, e: RolloutEvent) => turns.rowFor(turnId, e.timestamp, e.seq);

  let lines: LineAt | undefined;

  const push = (e: RolloutEvent, offset?: number): void => {
    eventCount++;
    if (e.seq > lastSeq) lastSeq = e.seq;
    if (startedAt === undefined || e.timestamp < startedAt) startedAt = e.timestamp;
    if (e.timestamp > endedAt) endedAt = e.timestamp;
    switch (e.type) {
      case "session.started":
        turns.sessionStarted();
        tools.sessionStarted(e.seq);
        if (e.projectPath) projectPath = e.projectPath;
        ended = false;
        imported = e.reason === "import";
        return;
      case "session.ended":
        ended = true;
        return;
      case "turn.started":
        turns.start(e.turnId, e.timestamp, e.seq);
        return;
      case "turn.aborted":
        turns.abort(turnOf(e.turnId, e), e.reason);
        return;
      case "model.request":
        models.request(e, turnOf(e.turnId, e));
        return;
      case "model.first_token":
        models.firstToken(e, turnOf(e.turnId, e));
        return;
      case "model.response":
        models.response(e, turnOf(e.turnId, e));
        return;
      case "model.error":
        models.error(e, turnOf(e.turnId, e));
        return;
      case "function.call":
        tools.call(e, turnOf(e.turnId, e), lines === undefined ? undefined : offset);
        return;
      case "function.output":
        tools.output(e, turnOf(e.turnId, e));
        return;
      case "function.denied":
        tools.denied(e, turnOf(e.turnId, e), lines === undefined ? undefined : offset);
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
        turnOf(e.turnId, e);
        redirects++;
        redirectTokens.input += e.inputTokens ?? 0;
        redirectTokens.output += e.outputTokens ?? 0;
        return;
      case "redirect.skipped":
        turnOf(e.turnId, e);
        redirectsSkipped++;
        return;
      case "parse.error":
        turnOf(e.turnId, e);
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
        // No span of their own: counted by type, so a trace still says they happened.
        otherEvents[e.type] = (otherEvents[e.type] ?? 0) + 1;
        return;
      default:
        assertNever(e, "event type");
    }
  };

  /** The Trace, its turns and spans as views over the rows (`plain`: copied into objects). */
  const build = (nowOverride: number | undefined, plain: boolean): Trace => {
    if (spent) throw new Error("trace fold: finish() after seal()");
    // A session that ended is aged against its own end, whatever the clock says (`trace --follow`
    // passes the clock: a finished session's wall and open requests ran on to today).
    const now = ended ? undefined : (nowOverride ?? options.now);
    const start = startedAt ?? 0;
    const asOf = now ?? endedAt;
    const context: ModelContext = { models, turns, asOf, hangMs, stallMs };
    // Totals read the rows through one view moved along them (no object per span).
    const totals = { model_ms: 0, input: 0, output: 0, cacheRead: 0, cacheWrite: 0, reasoning: 0, stalls: 0 };
    let hung = false;
    let inFlight = false;
    const s = ModelSpanView.cursor(context);
    for (s._r = 0; s._r < models.length; s._r++) {
      totals.model_ms += s.duration_ms;
      totals.input += s.inputTokens ?? 0;
      totals.output += s.outputTokens ?? 0;
      totals.cacheRead += s.cacheReadTokens ?? 0;
      totals.cacheWrite += s.cacheWriteTokens ?? 0;
      totals.reasoning += s.reasoningTokens ?? 0;
      const status = s.status;
      if (status === "hung") hung = true;
      else if (status === "in_flight") inFlight = true;
      if (s.stalledBeforeFirstToken) totals.stalls++;
    }
    const tool_ms = tools.totalMs();
    // The span lists: plain objects for a snapshot; for the sealed Trace, views, made on first read.
    const list = <T>(make: () => T[]): (() => T[]) =>
      plain ? () => make().map((v) => (v as { toJSON(): T }).toJSON()) : make;
    const lists = {
      turns: list(() => Array.from({ length: turns.length }, (_, r): TraceTurn => TurnView.of(turns, r))),
      modelSpans: list(() =>
        Array.from({ length: models.length }, (_, r): ModelSpan => ModelSpanView.of(context, r)),
      ),
      toolSpans: list(() => tools.spans(turns)),
    };
    const trace: Trace = {
      sessionId,
      ...(projectPath !== undefined ? { projectPath } : {}),
      startedAt: start,
      endedAt,
      wall_ms: Math.max(0, (now ?? endedAt) - start),
      eventCount,
      lastSeq,
      turns: [],
      modelSpans: [],
      toolSpans: [],
      deniedSpans: tools.denials((row) => turns.key(row)),
      pendingCalls: tools.pending((row) => turns.key(row)),
      compactions: compactions.map((c) => ({ ...c })),
      compactedTokens,
      changedFiles: tools.changedFiles(),
      redirects,
      redirectsSkipped,
      redirectTokens: { ...redirectTokens },
      model_ms: totals.model_ms,
      tool_ms,
      inputTokens: totals.input,
      outputTokens: totals.output,
      cacheReadTokens: totals.cacheRead,
      cacheWriteTokens: totals.cacheWrite,
      reasoningTokens: totals.reasoning,
      hung,
      inFlight,
      ended,
      ...(imported ? { imported } : {}),
      stalls: totals.stalls,
      hangMs,
      stallMs,
      asOf,
      skippedEvents,
      ...(Object.keys(otherEvents).length > 0 ? { otherEvents: { ...otherEvents } } : {}),
      parseErrors: parseErrors.map((p) => ({ ...p })),
    };
    for (const key of ["turns", "modelSpans", "toolSpans"] as const) {
      if (plain) (trace as unknown as Record<string, unknown>)[key] = lists[key]();
      else lazyProperty(trace, key, lists[key]);
    }
    return trace;
  };

  return {
    push,
    unread,
    file(path) {
      lines = new LineAt(path);
      tools.readFrom(lines);
    },
    block(bytes, offset) {
      tools.block(bytes, offset);
    },
    issue(issue) {
      const entry: Trace["parseErrors"][number] = { message: issue.message, torn: issue.torn };
      if (issue.line !== undefined) entry.line = issue.line;
      parseErrors.push(entry);
    },
    skip() {
      skippedEvents++;
    },
    finish: (now?: number) => build(now, true),
    seal: () => {
      const trace = build(undefined, false);
      spent = true;
      return trace;
    },
  };
}

/**
 * Make `key` of `obj` computed on first read and then kept (an enumerable property, so
 * `JSON.stringify`, spreads and deep equality see it like any other).
 */
function lazyProperty<T extends object, K extends keyof T>(obj: T, key: K, make: () => T[K]): void {
  Object.defineProperty(obj, key, {
    enumerable: true,
    configurable: true,
    get() {
      const value = make();
      Object.defineProperty(obj, key, { value, enumerable: true, configurable: true, writable: true });
      return value;
    },
    set(value: T[K]) {
      Object.defineProperty(obj, key, { value, enumerable: true, configurable: true, writable: true });
    },
  });
}

/** Fold a whole event sequence into a Trace. */
export function buildTrace(sessionId: string, events: Iterable<RolloutEvent>, options?: TraceOptions): Trace {
  const fold = createTraceFold(sessionId, options);
  for (const event of events) fold.push(event);
  return fold.seal();
}
