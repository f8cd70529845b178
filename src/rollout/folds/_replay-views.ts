/**
 * The Replay's turns and calls as views over the replay fold's rows, the way the Trace's spans are
 * (`_views.ts`): 32-byte objects whose getters read the rows, read-only, with `toJSON` giving the
 * plain object with its fields in the order the fold has always written them. `turn.calls` and
 * `turn.denied` are fresh arrays on each read, and a call's `args` and `output` are read (from the
 * log, or parsed from text) on each read. For a plain copy, take `toJSON()` or `JSON.stringify`.
 */
import type { DenySource } from "../events.ts";
import { keptField } from "./_line-fields.ts";
import type { CallRows } from "./_replay-rows.ts";
import type { TurnRows } from "./_turn-rows.ts";
import { inspect, TurnFieldsView, view } from "./_views.ts";
import type { ReplayCall, ReplayTurn } from "./replay.ts";

/** A refusal as the fold keeps it. */
export interface DeniedEntry {
  tool: string;
  seq: number;
  source: DenySource;
  reason?: string;
  /** The arguments' index in `calls.kept`. */
  args?: number;
  turn: number;
}

/** What the views read. */
export interface ReplayContext {
  turns: TurnRows;
  calls: CallRows;
  /** Call rows of each turn, in call order: `rows[start[t] .. start[t + 1])`. */
  start: Int32Array;
  rows: Int32Array;
  /** Refusals of each turn, in log order. */
  denied: Map<number, DeniedEntry[]>;
  modelRequests: (turn: number) => number;
}

/** Index the calls by turn (withdrawn calls left out), for the views. */
export function callIndex(turnCount: number, calls: CallRows): { start: Int32Array; rows: Int32Array } {
  const start = new Int32Array(turnCount + 1);
  let kept = 0;
  for (let r = 0; r < calls.length; r++) {
    if (calls.withdrawn(r)) continue;
    start[calls.turn(r) + 1]!++;
    kept++;
  }
  for (let t = 0; t < turnCount; t++) start[t + 1]! += start[t]!;
  const next = start.slice(0, turnCount);
  const rows = new Int32Array(kept);
  for (let r = 0; r < calls.length; r++) if (!calls.withdrawn(r)) rows[next[calls.turn(r)]!++] = r;
  // A call whose output came first has the output's row: each turn's calls in call order then.
  if (calls.reordered)
    for (let t = 0; t < turnCount; t++)
      rows.subarray(start[t]!, start[t + 1]!).sort((a, b) => calls.seq(a) - calls.seq(b) || a - b);
  return { start, rows };
}

export class ReplayCallView implements ReplayCall {
  declare readonly _t: ReplayContext;
  declare readonly _r: number;
  static of(context: ReplayContext, row: number): ReplayCallView {
    return view(ReplayCallView.prototype, context, row);
  }
  get tool() {
    return this._t.calls.tool(this._r);
  }
  get callId() {
    return this._t.calls.callId(this._r);
  }
  get seq() {
    return this._t.calls.seq(this._r);
  }
  get at() {
    return this._t.calls.at(this._r);
  }
  get args() {
    return this._t.calls.args(this._r);
  }
  get output() {
    return this._t.calls.output(this._r);
  }
  get failed() {
    return this._t.calls.failed(this._r);
  }
  get duration_ms() {
    return this._t.calls.duration(this._r);
  }
  get done() {
    return this._t.calls.done(this._r);
  }
  toJSON(): ReplayCall {
    const c = this._t.calls;
    const r = this._r;
    const out: ReplayCall = { tool: c.tool(r), seq: c.seq(r), at: c.at(r), done: c.done(r) };
    const callId = c.callId(r);
    if (callId !== undefined) out.callId = callId;
    if (c.hasArgs(r)) out.args = c.args(r);
    if (c.hasOutput(r)) out.output = c.output(r);
    const failed = c.failed(r);
    if (failed !== undefined) out.failed = failed;
    const duration = c.duration(r);
    if (duration !== undefined) out.duration_ms = duration;
    return out;
  }
  [inspect]() {
    return this.toJSON();
  }
}

export class ReplayTurnView extends TurnFieldsView implements ReplayTurn {
  declare readonly _t: ReplayContext;
  static of(context: ReplayContext, row: number): ReplayTurnView {
    return view(ReplayTurnView.prototype, context, row);
  }
  protected get turnRows() {
    return this._t.turns;
  }
  get modelRequests() {
    return this._t.modelRequests(this._r);
  }
  /** The turn's calls (a fresh array of views on each read). */
  get calls(): ReplayCall[] {
    const { start, rows } = this._t;
    const out: ReplayCall[] = [];
    for (let i = start[this._r]!; i < start[this._r + 1]!; i++)
      out.push(ReplayCallView.of(this._t, rows[i]!));
    return out;
  }
  /** The turn's refusals (fresh objects on each read; arguments left in the log are read per read). */
  get denied(): ReplayTurn["denied"] {
    const kept = this._t.calls.kept;
    return (this._t.denied.get(this._r) ?? []).map((d) => {
      const out: ReplayTurn["denied"][number] = { tool: d.tool, seq: d.seq, source: d.source };
      if (d.reason !== undefined) out.reason = d.reason;
      const args = d.args;
      if (args !== undefined) keptField(out, "args", () => kept.get(args, "function.denied", d.seq, "args"));
      return out;
    });
  }
  toJSON(): ReplayTurn {
    const { turnKey, turnId, startedAt, seq, lastAt } = this;
    const out: Record<string, unknown> = { turnKey, turnId, startedAt, seq, lastAt };
    if (this.implicit) out.implicit = true;
    out.calls = this.calls.map((c) => (c as ReplayCallView).toJSON());
    out.denied = this.denied.map((d) => ({ ...d }));
    out.modelRequests = this.modelRequests;
    if (this.aborted) out.aborted = true;
    const reason = this.abortReason;
    if (reason !== undefined) out.abortReason = reason;
    return out as unknown as ReplayTurn;
  }
}
