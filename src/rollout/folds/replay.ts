/**
 * The replay fold: the session's turns in order, each with its tool calls (outputs, failure flags,
 * durations) and refusals, plus compaction totals and parse errors. Pure and streaming like the trace
 * fold. Turns are keyed with `turns.ts`, so a resumed session's restarted `turn-0` is a new turn.
 * An output finds its call by `callId`, else the oldest pending call of the same tool in the same
 * turn, else of that tool in any turn (freecode's rule, plus the callId it lacked). Read from a log
 * file, a call's arguments and output (and a refusal's arguments) stay in the log: the replay keeps
 * where their lines start and reads them back on each read (`_line-fields.ts`), so a replay of a
 * big log holds its structure, not its content.
 */
import type { ReadIssue } from "../../storage/contract.ts";
import { assertNever } from "../../util/assert-never.ts";
import { LineAt } from "../../util/line-at.ts";
import type { DenySource, RolloutEvent } from "../events.ts";
import { type LogFields, logFields } from "./_line-fields.ts";
import { createTurnKeyer, type TurnInfo } from "./turns.ts";

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
  /** Keep at most this many characters of each string output (default: all). */
  maxOutputChars?: number;
}

/** Start a replay fold. */
export function createReplayFold(sessionId: string, options: ReplayOptions = {}) {
  const keyer = createTurnKeyer();
  const r: Replay = {
    sessionId,
    totalTurns: 0,
    totalCalls: 0,
    totalDenied: 0,
    turns: [],
    compactCount: 0,
    totalTokensBefore: 0,
    totalTokensAfter: 0,
    compactedTokens: 0,
    agentParseErrors: [],
    errors: [],
    skippedEvents: 0,
  };
  const byKey = new Map<string, ReplayTurn>();
  let fromLog: LogFields | undefined;
  const byCallId = new Map<string, ReplayCall>();
  const addTurn = (info: TurnInfo) => {
    const turn: ReplayTurn = { ...info, calls: [], denied: [], modelRequests: 0 };
    r.turns.push(turn);
    byKey.set(turn.turnKey, turn);
  };
  const turnOf = (turnId: string | undefined, e: RolloutEvent): ReplayTurn => {
    const key = keyer.keyFor(turnId, e.timestamp, e.seq, addTurn);
    if (key !== undefined) return byKey.get(key)!;
    // An event before any turn: an implicit first turn holds it, and the events after it that name
    // no turn either (the keyer's current turn is then this one, under the keyer's own key).
    addTurn({
      turnKey: "(none)#0",
      turnId: "(none)",
      startedAt: e.timestamp,
      seq: e.seq,
      implicit: true,
      lastAt: e.timestamp,
    });
    const turn = r.turns[r.turns.length - 1]!;
    byKey.set(keyer.start("(none)", e.timestamp, e.seq).turnKey, turn);
    return turn;
  };
  const clip = (output: unknown) =>
    typeof output === "string" &&
    options.maxOutputChars !== undefined &&
    output.length > options.maxOutputChars
      ? `${output.slice(0, options.maxOutputChars)}…`
      : output;
  // Pending calls per turn+tool and per tool (short lists; taken entries are removed on take).
  const pendingTurnTool = new Map<string, ReplayCall[]>();
  const pendingTool = new Map<string, ReplayCall[]>();
  const enqueue = (map: Map<string, ReplayCall[]>, key: string, call: ReplayCall) => {
    const list = map.get(key);
    if (list) list.push(call);
    else map.set(key, [call]);
  };
  const remove = (map: Map<string, ReplayCall[]>, key: string, call: ReplayCall) => {
    const list = map.get(key);
    const i = list ? list.indexOf(call) : -1;
    if (i !== -1) list!.splice(i, 1);
    if (list && list.length === 0) map.delete(key);
  };
  const callTurn = new Map<ReplayCall, string>();
  const findPending = (turn: ReplayTurn, tool: string): ReplayCall | undefined =>
    pendingTurnTool.get(`${turn.turnKey}\u0000${tool}`)?.[0] ?? pendingTool.get(tool)?.[0];
  const settle = (call: ReplayCall) => {
    const turnKey = callTurn.get(call);
    if (turnKey === undefined) return;
    callTurn.delete(call);
    remove(pendingTurnTool, `${turnKey}\u0000${call.tool}`, call);
    remove(pendingTool, call.tool, call);
  };

  /** Set `key` of `obj` to the event's `key` field: read back from its line when there is one. */
  const keep = (obj: object, key: "args" | "output", e: RolloutEvent, offset: number | undefined) => {
    if (fromLog && offset !== undefined) fromLog.define(obj, key, e.type, offset, e.seq);
    else {
      const value = (e as unknown as Record<string, unknown>)[key];
      (obj as Record<string, unknown>)[key] = key === "output" ? clip(value) : value;
    }
  };

  function push(e: RolloutEvent, offset?: number): void {
    switch (e.type) {
      case "turn.started":
        addTurn(keyer.start(e.turnId, e.timestamp, e.seq));
        return;
      case "session.started":
        keyer.sessionStarted();
        return;
      case "turn.aborted": {
        const turn = turnOf(e.turnId, e);
        turn.aborted = true;
        if (e.reason !== undefined) turn.abortReason = e.reason;
        return;
      }
      case "function.call": {
        const call: ReplayCall = { tool: e.tool, seq: e.seq, at: e.timestamp, done: false };
        if (e.callId !== undefined) call.callId = e.callId;
        if (e.args !== undefined) keep(call, "args", e, offset);
        const turn = turnOf(e.turnId, e);
        turn.calls.push(call);
        callTurn.set(call, turn.turnKey);
        enqueue(pendingTurnTool, `${turn.turnKey}\u0000${e.tool}`, call);
        enqueue(pendingTool, e.tool, call);
        if (e.callId !== undefined) byCallId.set(e.callId, call);
        r.totalCalls++;
        return;
      }
      case "function.output": {
        const turn = turnOf(e.turnId, e);
        let call = e.callId === undefined ? undefined : byCallId.get(e.callId);
        call ??= findPending(turn, e.tool);
        if (!call) {
          call = { tool: e.tool, seq: e.seq, at: e.timestamp, done: false };
          if (e.callId !== undefined) call.callId = e.callId;
          turn.calls.push(call);
          r.totalCalls++;
        }
        if (call.callId !== undefined) byCallId.delete(call.callId);
        settle(call);
        call.done = true;
        if (e.output !== undefined) keep(call, "output", e, offset);
        if (e.failed !== undefined) call.failed = e.failed;
        call.duration_ms = e.duration_ms ?? e.timestamp - call.at;
        return;
      }
      case "function.denied": {
        const entry: ReplayTurn["denied"][number] = { tool: e.tool, seq: e.seq, source: e.source };
        if (e.reason !== undefined) entry.reason = e.reason;
        if (e.args !== undefined) keep(entry, "args", e, offset);
        turnOf(e.turnId, e).denied.push(entry);
        r.totalDenied++;
        // A call announced and then refused never ran: it leaves the calls.
        const withdrawn = e.callId === undefined ? undefined : byCallId.get(e.callId);
        if (withdrawn && !withdrawn.done) {
          const owner = byKey.get(callTurn.get(withdrawn) ?? "");
          owner?.calls.splice(owner.calls.indexOf(withdrawn), 1);
          settle(withdrawn);
          byCallId.delete(e.callId!);
          r.totalCalls--;
        }
        return;
      }
      case "compact.occurred":
        r.compactCount++;
        r.totalTokensBefore += e.beforeTokens;
        r.totalTokensAfter += e.afterTokens;
        r.compactedTokens += Math.max(0, e.beforeTokens - e.afterTokens);
        return;
      case "parse.error": {
        const entry: Replay["agentParseErrors"][number] = { seq: e.seq, error: e.error };
        if (e.parser !== undefined) entry.parser = e.parser;
        if (e.turnId !== undefined) entry.turnKey = turnOf(e.turnId, e).turnKey;
        r.agentParseErrors.push(entry);
        return;
      }
      case "model.request":
        turnOf(e.turnId, e).modelRequests++;
        return;
      case "model.first_token":
      case "model.response":
      case "model.error":
      case "redirect.triggered":
      case "redirect.skipped":
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
        return; // timing and model detail belong to the trace fold
      default:
        assertNever(e, "event type");
    }
  }

  return {
    push,
    /** The log file the events come from: arguments and outputs are then read back from it. */
    file(path: string) {
      fromLog = logFields(new LineAt(path), { output: clip });
    },
    issue(issue: ReadIssue) {
      const entry: Replay["errors"][number] = { message: issue.message, torn: issue.torn };
      if (issue.line !== undefined) entry.line = issue.line;
      r.errors.push(entry);
    },
    skip() {
      r.skippedEvents++;
    },
    /** The replay so far, copied whole (the fold can keep going; fields kept in the log are read). */
    finish(): Replay {
      return structuredClone({ ...r, totalTurns: r.turns.length });
    },
    /** The final replay, not copied: the fold is spent after it. */
    seal(): Replay {
      return { ...r, totalTurns: r.turns.length };
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
