/**
 * The replay fold: the session's turns in order, each with its tool calls (outputs, failure flags,
 * durations) and refusals, plus compaction totals and parse errors. Pure and streaming like the trace
 * fold. Turns are keyed with `turns.ts`, so a resumed session's restarted `turn-0` is a new turn.
 * An output finds its call by `callId`, else by the trace fold's rule (`_tools.ts`): a pending call of
 * the same tool, one without a call id before one with, the output's turn before any turn, oldest
 * first. Read from a log
 * file, a call's arguments and output (and a refusal's arguments) stay in the log: the replay keeps
 * where their lines start and reads them back on each read (`_line-fields.ts`). Turns and calls are
 * rows (`_turn-rows.ts`, `_replay-rows.ts`) and the Replay's turns and calls are views over them
 * (`_replay-views.ts`), so a replay of a big log holds a few dozen bytes a call, not its content.
 */

import type { ReadIssue } from "../../storage/contract.ts";
import { assertNever } from "../../util/assert-never.ts";
import { headOf } from "../../util/cut-text.ts";
import { jsonEqual } from "../../util/json-equal.ts";
import { LineAt } from "../../util/line-at.ts";
import { QueuesByKey } from "../../util/queues-by-key.ts";
import type { DenySource, RolloutEvent } from "../events.ts";
import { earlyOutput, PendingCalls } from "./_pending.ts";
import { CallRows } from "./_replay-rows.ts";
import { callIndex, type DeniedEntry, type ReplayContext, ReplayTurnView } from "./_replay-views.ts";
import { IntRows, StringTable } from "./_rows.ts";
import { TurnRows } from "./_turn-rows.ts";
import type { TurnInfo } from "./turns.ts";

export interface ReplayCall {
  tool: string;
  callId?: string;
  /** `seq` of the `function.call` (of the output when the call is missing). */
  seq: number;
  at: number;
  args?: unknown;
  output?: unknown;
  failed?: boolean;
  duration_ms?: number;
  /** An output arrived. */
  done: boolean;
}

export interface ReplayTurn extends TurnInfo {
  aborted?: boolean;
  abortReason?: string;
  calls: ReplayCall[];
  denied: { tool: string; seq: number; source: DenySource; reason?: string; args?: unknown }[];
  modelRequests: number;
}

export interface Replay {
  sessionId: string;
  totalTurns: number;
  totalCalls: number;
  totalDenied: number;
  turns: ReplayTurn[];
  compactCount: number;
  /** Sums over `compact.occurred`; `compactedTokens` counts only reductions (each clamped ≥ 0). */
  totalTokensBefore: number;
  totalTokensAfter: number;
  compactedTokens: number;
  /** `parse.error` events the agent recorded (its own parsers failing). */
  agentParseErrors: { seq: number; turnKey?: string; parser?: string; error: string }[];
  /** Lines of the log that could not be read. */
  errors: { line?: number; message: string; torn: boolean }[];
  skippedEvents: number;
}

export interface ReplayOptions {
  /** Keep at most this many characters of each output (a structured one as its JSON text; default: all). */
  maxOutputChars?: number;
}

/** Start a replay fold. */
/** A refused call, for an output that may come after all: where its arguments are (the withdrawn
 * call's row, else the refusal's kept arguments) and when it was made. */
interface Refused {
  row?: number;
  denial?: { code: number; seq: number };
  at: number;
  /** The withdrawn call's seq (none: a refusal recorded without its call). */
  seq?: number;
}

export function createReplayFold(sessionId: string, options: ReplayOptions = {}) {
  // A structured output (an MCP result, a JSON object) is clipped as its JSON text.
  const clip = (output: unknown) => {
    const max = options.maxOutputChars;
    if (max === undefined || output === undefined || output === null) return output;
    const text = typeof output === "string" ? output : JSON.stringify(output);
    if (text === undefined || text.length <= max) return output;
    return `${headOf(text, max)}…`;
  };
  const strings = new StringTable();
  const turns = new TurnRows(strings);
  const calls = new CallRows(strings, clip);
  const modelRequests = new IntRows(1);
  const denied = new Map<number, DeniedEntry[]>();
  let totalCalls = 0;
  let totalDenied = 0;
  let compactCount = 0;
  let totalTokensBefore = 0;
  let totalTokensAfter = 0;
  let compactedTokens = 0;
  let skippedEvents = 0;
  const agentParseErrors: Replay["agentParseErrors"] = [];
  const errors: Replay["errors"] = [];
  let spent = false;

  /** The turn row an event belongs to; an event before any turn opens the implicit `(none)#0`. */
  const turnOf = (turnId: string | undefined, e: RolloutEvent): number => {
    const row = turns.rowFor(turnId, e.timestamp, e.seq);
    return row >= 0 ? row : turns.openNone(e.timestamp, e.seq);
  };
  /**
   * Refused calls by id, for an output that comes after all: where their arguments are — the
   * withdrawn call's row, else the refusal's kept arguments — read only if that output comes. Held
   * parsed, every refusal's arguments (a file a refused `Write` would have written) lived to the
   * end: the real-shaped bench log's peak went from 96 to 159 MB.
   */
  const refusedArgs = new Map<string, Refused>();
  /** Calls without an id withdrawn by a refusal without one, by tool, oldest first (see `_tools.ts`). */
  const refusedIdless = new QueuesByKey<Refused>();
  // Open calls (rows), paired by the rule the trace fold uses (`_pending.ts`).
  const pending = new PendingCalls<number>({
    tool: (row) => calls.tool(row),
    turn: (row) => calls.turn(row),
    order: (row) => row,
    // Read only if an output's or denial's id finds no open call (see `_pending.ts`).
    *closedIds() {
      for (let r = 0; r < calls.length; r++) {
        if (!calls.done(r) && !calls.withdrawn(r)) continue;
        const id = calls.callId(r);
        if (id !== undefined) yield id;
      }
    },
  });

  function push(e: RolloutEvent, offset?: number): void {
    switch (e.type) {
      case "turn.started":
        turns.start(e.turnId, e.timestamp, e.seq);
        return;
      case "session.started":
        turns.sessionStarted();
        pending.sessionStarted(calls.length);
        return;
      case "turn.aborted":
        turns.abort(turnOf(e.turnId, e), e.reason);
        return;
      case "function.call": {
        const turn = turnOf(e.turnId, e);
        const early = pending.claimEarly(e.callId, e.tool);
        if (early !== undefined) {
          // Its output came first (see `_tools.ts`): the call is that output's, counted once.
          calls.callArrived(
            early.row,
            e.seq,
            e.timestamp,
            turn,
            early.durationMs ?? Math.max(0, early.at - e.timestamp),
          );
          if (e.args !== undefined) calls.setArgs(early.row, offset, e.args);
          return;
        }
        const row = calls.add(e.tool, e.seq, e.timestamp, turn, e.callId);
        if (e.args !== undefined) calls.setArgs(row, offset, e.args);
        pending.add(row, e.callId);
        totalCalls++;
        return;
      }
      case "function.output": {
        const turn = turnOf(e.turnId, e);
        let row = pending.answer(e.tool, turn, e.callId);
        if (row !== undefined && e.callId !== undefined && calls.callId(row) === undefined)
          calls.setCallId(row, e.callId);
        if (row === undefined) {
          // A refused call that ran anyway: its arguments and its start (it showed as `Write({})`, 0 ms).
          const was = e.callId === undefined ? refusedIdless.shift(e.tool) : refusedArgs.get(e.callId);
          if (was !== undefined && e.callId !== undefined) refusedArgs.delete(e.callId);
          row = calls.add(e.tool, was?.seq ?? e.seq, was?.at ?? e.timestamp, turn, e.callId);
          const args =
            was?.row !== undefined
              ? calls.args(was.row)
              : was?.denial && calls.kept.get(was.denial.code, "function.denied", was.denial.seq, "args");
          if (args !== undefined) calls.setArgs(row, undefined, args);
          if (was === undefined) pending.keepEarly(e.callId, earlyOutput(row, e));
          totalCalls++;
        }
        const output = e.output === undefined ? undefined : { line: offset, value: e.output };
        calls.finish(row, output, e.seq, e.failed, e.duration_ms ?? Math.max(0, e.timestamp - calls.at(row)));
        return;
      }
      case "function.denied": {
        const turn = turnOf(e.turnId, e);
        const entry: DeniedEntry = { tool: e.tool, seq: e.seq, source: e.source, turn };
        if (e.reason !== undefined) entry.reason = e.reason;
        if (e.args !== undefined) entry.args = calls.kept.add(offset, e.args);
        const list = denied.get(turn);
        if (list) list.push(entry);
        else denied.set(turn, [entry]);
        totalDenied++;
        // A call announced and then refused never ran: it leaves the calls. Without an id, the
        // newest open call of the tool with the same arguments (see `_pending.ts`).
        const newest =
          e.callId === undefined
            ? pending.denyNewest(
                e.tool,
                (row) => e.args === undefined || !calls.hasArgs(row) || jsonEqual(calls.args(row), e.args),
              )
            : undefined;
        const withdrawn = e.callId === undefined ? newest?.item : pending.deny(e.callId);
        const refusedId = e.callId ?? newest?.callId;
        if (withdrawn !== undefined) {
          calls.withdraw(withdrawn);
          totalCalls--;
        }
        if (refusedId === undefined && withdrawn === undefined) return;
        // For an output that may come (it ran anyway): where the call's arguments are, else (a call
        // made without any) the refusal's; it ran from its call.
        const when =
          withdrawn === undefined
            ? { at: e.timestamp }
            : { at: calls.at(withdrawn), seq: calls.seq(withdrawn) };
        const refusal: Refused =
          withdrawn !== undefined && calls.hasArgs(withdrawn)
            ? { row: withdrawn, ...when }
            : entry.args !== undefined
              ? { denial: { code: entry.args, seq: e.seq }, ...when }
              : when;
        if (refusedId !== undefined) refusedArgs.set(refusedId, refusal);
        else refusedIdless.push(e.tool, refusal);
        return;
      }
      case "compact.occurred":
        compactCount++;
        totalTokensBefore += e.beforeTokens;
        totalTokensAfter += e.afterTokens;
        compactedTokens += Math.max(0, e.beforeTokens - e.afterTokens);
        return;
      case "parse.error": {
        const entry: Replay["agentParseErrors"][number] = { seq: e.seq, error: e.error };
        if (e.parser !== undefined) entry.parser = e.parser;
        if (e.turnId !== undefined) entry.turnKey = turns.key(turnOf(e.turnId, e));
        agentParseErrors.push(entry);
        return;
      }
      case "model.request": {
        const turn = turnOf(e.turnId, e);
        while (modelRequests.length <= turn) modelRequests.add();
        modelRequests.set(turn, 0, (modelRequests.get(turn, 0) || 0) + 1);
        return;
      }
      case "model.first_token":
      case "model.response":
      case "model.error":
      case "redirect.triggered":
      case "redirect.skipped":
        // Timing and model detail belong to the trace fold; the turn they name is a turn all the
        // same (an unknown id opens one, as in the trace).
        turnOf(e.turnId, e);
        return;
      case "subagent.start":
      case "subagent.stop":
      case "skill.invoked":
      case "hook.triggered":
      case "hook.blocked":
      case "context.overflow":
      case "session.ended":
      case "checkpoint.captured":
      case "checkpoint.restored":
      case "checkpoint.skipped":
        return; // the replay is turns and their calls; the trace counts these (`otherEvents`)
      default:
        assertNever(e, "event type");
    }
  }

  /** The Replay, its turns as views over the rows (`plain`: copied into plain objects). */
  const build = (plain: boolean): Replay => {
    if (spent) throw new Error("replay fold: finish() after seal()");
    const index = callIndex(turns.length, calls);
    const context: ReplayContext = {
      turns,
      calls,
      ...index,
      denied,
      modelRequests: (t) => (t < modelRequests.length ? modelRequests.get(t, 0) || 0 : 0),
    };
    const views = Array.from({ length: turns.length }, (_, t) => ReplayTurnView.of(context, t));
    return {
      sessionId,
      totalTurns: turns.length,
      totalCalls,
      totalDenied,
      turns: plain ? views.map((v) => v.toJSON()) : views,
      compactCount,
      totalTokensBefore,
      totalTokensAfter,
      compactedTokens,
      agentParseErrors: agentParseErrors.map((p) => ({ ...p })),
      errors: errors.map((x) => ({ ...x })),
      skippedEvents,
    };
  };

  return {
    push,
    /** The log file the events come from: arguments and outputs are then read back from it. */
    file(path: string) {
      calls.kept.lines = new LineAt(path);
    },
    /** The log's bytes from `offset` as read: a small log's fields are held (see `KeptValues`). */
    block(bytes: Uint8Array, offset: number) {
      calls.kept.block(bytes, offset);
    },
    issue(issue: ReadIssue) {
      const entry: Replay["errors"][number] = { message: issue.message, torn: issue.torn };
      if (issue.line !== undefined) entry.line = issue.line;
      errors.push(entry);
    },
    skip() {
      skippedEvents++;
    },
    /** The replay so far, as plain objects (the fold can keep going; fields kept in the log are read). */
    finish: (): Replay => build(true),
    /** The final replay, its turns and calls views over the fold's rows: the fold is spent after it. */
    seal(): Replay {
      const replay = build(false);
      spent = true;
      return replay;
    },
  };
}

/** Fold a whole event sequence into a Replay. */
export function replaySession(
  sessionId: string,
  events: Iterable<RolloutEvent>,
  options?: ReplayOptions,
): Replay {
  const fold = createReplayFold(sessionId, options);
  for (const e of events) fold.push(e);
  return fold.seal();
}
