/**
 * The Trace's turns and spans as views: each is an object with two own fields, `_t` (the tables)
 * and `_r` (its row), whose prototype's getters read the fold's rows. A Trace of hundreds of
 * thousands of spans so costs ~32 bytes a span instead of a full object with its strings (see
 * `_rows.ts` for why that matters). Views are made as object literals with `__proto__`: JSC sizes
 * a literal's cell to its fields (32 bytes), where a class instance, private fields or not, took
 * ~56 (measured on 2M objects).
 *
 * A view reads like the plain object it stands for, and `toJSON` (used by `JSON.stringify`, and by
 * `console.log` through `Bun.inspect.custom`) gives that object, its fields in the order the fold
 * has always written them (so `trace --json` stays byte-stable). Views are read-only, and values
 * computed per read (keys, argument objects, tool-call lists) are fresh on each read. For a plain
 * copy (to spread, `structuredClone` or deep-compare), take `toJSON()`.
 */
import type { ModelRows } from "./_model-rows.ts";
import * as M from "./_model-rows.ts";
import type { ToolColumns } from "./_tools.ts";
import type { TurnRows } from "./_turn-rows.ts";
import type { ModelSpan, SpanStatus, ToolSpan, TraceTurn } from "./trace-types.ts";

/** A number field, absent as `undefined`. */
const opt = (x: number): number | undefined => (Number.isNaN(x) ? undefined : x);

/** Copy the defined values of `keys` from `from` onto `to`, in order. */
function copyDefined<T extends object>(to: object, from: T, keys: readonly (keyof T)[]) {
  for (const k of keys) {
    const value = from[k];
    if (value !== undefined) (to as Record<string, unknown>)[k as string] = value;
  }
}

/** A view of `proto`'s class over row `row` of `tables`. */
export function view<V>(proto: V, tables: unknown, row: number): V {
  return { __proto__: proto, _t: tables, _r: row } as unknown as V;
}

export const inspect = Symbol.for("nodejs.util.inspect.custom");

/**
 * A turn's fields read from turn rows, for the trace's turns and the replay's (`turnRows` says
 * where the rows are in the view's tables).
 */
export abstract class TurnFieldsView {
  declare readonly _r: number;
  protected abstract get turnRows(): TurnRows;
  get turnKey() {
    return this.turnRows.key(this._r);
  }
  get turnId() {
    return this.turnRows.turnId(this._r);
  }
  get startedAt() {
    return this.turnRows.startedAt(this._r);
  }
  get seq() {
    return this.turnRows.seq(this._r);
  }
  get lastAt() {
    return this.turnRows.lastAt(this._r);
  }
  get implicit() {
    return this.turnRows.implicit(this._r) || undefined;
  }
  get aborted() {
    return this.turnRows.aborted(this._r) || undefined;
  }
  get abortReason() {
    return this.turnRows.aborted(this._r) ? this.turnRows.abortReason(this._r) : undefined;
  }
  [inspect]() {
    return (this as unknown as { toJSON(): unknown }).toJSON();
  }
}

export class TurnView extends TurnFieldsView implements TraceTurn {
  declare readonly _t: TurnRows;
  static of(turns: TurnRows, row: number): TurnView {
    return view(TurnView.prototype, turns, row);
  }
  protected get turnRows() {
    return this._t;
  }
  toJSON(): TraceTurn {
    const { turnKey, turnId, startedAt, seq, lastAt } = this;
    const out: TraceTurn = { turnKey, turnId, startedAt, seq, lastAt };
    copyDefined(out, this, ["implicit", "aborted", "abortReason"]);
    return out;
  }
}

/** What a model span view reads: the rows, the turns, and the time and thresholds it is aged by. */
export interface ModelContext {
  models: ModelRows;
  turns: TurnRows;
  asOf: number;
  hangMs: number;
  stallMs: number;
}

const OPTIONAL_MODEL_FIELDS = [
  "streamed",
  "messageCount",
  "toolCount",
  "promptChars",
  "ttft_ms",
  "echoedModel",
  "responseModel",
  "inputTokens",
  "outputTokens",
  "cacheReadTokens",
  "cacheWriteTokens",
  "reasoningTokens",
  "costUsd",
  "errorKind",
  "error",
  "stalledBeforeFirstToken",
] as const;

/**
 * A model span. An open request is aged against the context's `asOf`: `hung` at `hangMs`
 * (inclusive), `in_flight` below; a streamed request with no first token by `stallMs` is flagged.
 */
export class ModelSpanView implements ModelSpan {
  declare readonly _t: ModelContext;
  declare readonly _r: number;
  static of(context: ModelContext, row: number): ModelSpanView {
    return view(ModelSpanView.prototype, context, row);
  }
  /** One view to move along the rows by setting `_r` (for reading many rows without an object each). */
  static cursor(context: ModelContext): ModelSpanView & { _r: number } {
    return view(ModelSpanView.prototype, context, 0);
  }
  private int(field: number) {
    return opt(this._t.models.ints.get(this._r, field));
  }
  private get open() {
    return this._t.models.ints.get(this._r, M.STATUS) === M.OPEN;
  }
  /** The turn row, `-1` for none or for an orphan (whose turn id the rows keep apart). */
  private get turn() {
    return this._t.models.orphans.has(this._r) ? -1 : this._t.models.ints.get(this._r, M.TURN) - 1;
  }
  get turnKey() {
    const orphan = this._t.models.orphans.get(this._r);
    if (orphan !== undefined) return `${orphan}#?`;
    return (this.turn >= 0 ? this._t.turns.key(this.turn) : undefined) as string;
  }
  get turnId() {
    const orphan = this._t.models.orphans.get(this._r);
    if (orphan !== undefined) return orphan;
    return (this.turn >= 0 ? this._t.turns.turnId(this.turn) : undefined) as string;
  }
  get seq() {
    return this._t.models.ints.get(this._r, M.SEQ);
  }
  get provider() {
    return this._t.models.strings.get(this._t.models.ints.get(this._r, M.PROVIDER));
  }
  get model() {
    return this._t.models.strings.get(this._t.models.ints.get(this._r, M.MODEL));
  }
  get startedAt() {
    return this._t.models.nums.get(this._r, M.START);
  }
  get status(): SpanStatus {
    if (!this.open) return this._t.models.ints.get(this._r, M.STATUS) === M.OK ? "ok" : "error";
    return this.duration_ms >= this._t.hangMs ? "hung" : "in_flight";
  }
  get duration_ms() {
    if (this.open) return Math.max(0, this._t.asOf - this.startedAt);
    return this._t.models.nums.get(this._r, M.DURATION);
  }
  get toolCalls() {
    return this._t.models.toolCalls(this._r).slice();
  }
  get streamed() {
    const x = this.int(M.STREAMED);
    return x === undefined ? undefined : x === 1;
  }
  get messageCount() {
    return this.int(M.MESSAGES);
  }
  get toolCount() {
    return this.int(M.TOOLS);
  }
  get promptChars() {
    return this.int(M.PROMPT);
  }
  get ttft_ms() {
    return opt(this._t.models.nums.get(this._r, M.TTFT));
  }
  get echoedModel() {
    return this._t.models.echoed.get(this._r);
  }
  get responseModel() {
    return this._t.models.answered.get(this._r);
  }
  get inputTokens() {
    return this.int(M.INPUT);
  }
  get outputTokens() {
    return this.int(M.OUTPUT);
  }
  get cacheReadTokens() {
    return this.int(M.CACHE_READ);
  }
  get cacheWriteTokens() {
    return this.int(M.CACHE_WRITE);
  }
  get reasoningTokens() {
    return this.int(M.REASONING);
  }
  get costUsd() {
    return this._t.models.costs.get(this._r);
  }
  get errorKind() {
    return this._t.models.errors.get(this._r)?.kind;
  }
  get error() {
    return this._t.models.errors.get(this._r)?.error;
  }
  get stalledBeforeFirstToken() {
    if (this.streamed === false) return undefined;
    const { stallMs } = this._t;
    const ttft = this.ttft_ms;
    const duration = this.duration_ms;
    const stalled =
      ttft !== undefined
        ? ttft >= stallMs
        : (this.open && duration >= stallMs) || (this.errorKind === "stall" && duration >= stallMs);
    return stalled || undefined;
  }
  toJSON(): ModelSpan {
    const { turnKey, turnId, seq, provider, model, startedAt, status, duration_ms, toolCalls } = this;
    const out = { turnKey, turnId, seq, provider, model, startedAt, status, duration_ms, toolCalls };
    if (turnKey === undefined) delete (out as Partial<ModelSpan>).turnKey;
    if (turnId === undefined) delete (out as Partial<ModelSpan>).turnId;
    copyDefined(out, this, OPTIONAL_MODEL_FIELDS);
    return out;
  }
  [inspect]() {
    return this.toJSON();
  }
}

/** What a tool span view reads: the tool columns, the turns, and the call order of the rows. */
export interface ToolContext {
  tools: ToolColumns;
  turns: TurnRows;
  /** Row of each position in call order; `undefined` when rows already are in call order. */
  order: Int32Array | undefined;
}

/** A tool span; `_r` is its position in call order (its `index`). */
export class ToolSpanView implements ToolSpan {
  declare readonly _t: ToolContext;
  declare readonly _r: number;
  static of(context: ToolContext, index: number): ToolSpanView {
    return view(ToolSpanView.prototype, context, index);
  }
  private get row() {
    return this._t.order ? this._t.order[this._r]! : this._r;
  }
  get index() {
    return this._r;
  }
  get tool() {
    return this._t.tools.tool(this.row);
  }
  get callId() {
    return this._t.tools.callId(this.row);
  }
  get turnKey() {
    const turn = this._t.tools.turn(this.row);
    return turn >= 0 ? this._t.turns.key(turn) : undefined;
  }
  get callSeq() {
    return this._t.tools.callSeq(this.row);
  }
  get outputSeq() {
    return this._t.tools.outputSeq(this.row);
  }
  get startedAt() {
    return this._t.tools.startedAt(this.row);
  }
  get duration_ms() {
    return this._t.tools.duration(this.row);
  }
  get args() {
    return this._t.tools.args(this.row);
  }
  get failed() {
    return this._t.tools.failed(this.row);
  }
  get unpaired() {
    return this._t.tools.unpaired(this.row) || undefined;
  }
  toJSON(): ToolSpan {
    const { tool, callSeq, outputSeq, index, startedAt, duration_ms } = this;
    const out: ToolSpan = { tool, callSeq, outputSeq, index, startedAt, duration_ms };
    copyDefined(out, this, ["unpaired", "callId", "turnKey", "args", "failed"]);
    return out;
  }
  [inspect]() {
    return this.toJSON();
  }
}
