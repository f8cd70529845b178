/**
 * Pairing tool calls with their outputs for the trace fold. A call is found by `callId`. An output
 * without a known one (older logs) takes a pending call of the same tool: one without a call id
 * before one with (an output that lacks an id answers a call that lacked one), and within each, the
 * oldest of the output's turn before the oldest of any turn (a call whose output was lost in an
 * earlier turn does not take a later turn's output). The replay fold pairs by the same rule. A
 * denial with the `callId` of a pending call withdraws that call: it never ran. Spans come out in
 * call order (by the call's `seq`), not completion order. A call is an object only while it waits
 * for its output; a finished span is a row of `ToolColumns`, and the Trace's spans are views of rows.
 */

import type { LineAt } from "../../util/line-at.ts";
import type { EventOf } from "../events.ts";
import { KeptValues, keptField } from "./_line-fields.ts";
import { IntRows, NumberRows, StringTable } from "./_rows.ts";
import { TextColumn } from "./_text-column.ts";
import { type ToolContext, ToolSpanView } from "./_views.ts";
import { changedPaths } from "./changed-files.ts";
import type { DeniedSpan, ToolSpan, Trace } from "./trace-types.ts";

interface Pending {
  tool: string;
  callId?: string;
  /** Turn row (`-1`: none). */
  turn: number;
  seq: number;
  at: number;
  args?: unknown;
  /** Where the call's line starts in the log, when its arguments are read back from there. */
  line?: number;
  done: boolean;
}

// Doubles: times and durations.
const START = 0;
const DURATION = 1;
// Integers: TURN is the turn row + 1 (0: none); CALL_ID indexes a text column, ARGS `KeptValues`.
const TURN = 0;
const FLAGS = 1;
const TOOL = 2;
const CALL_ID = 3;
const ARGS = 4;
const CALL_SEQ = 5;
const OUTPUT_SEQ = 6;
const FAILED_KNOWN = 1;
const FAILED = 2;
const UNPAIRED = 4;

/**
 * Finished tool spans, in completion order: numbers in rows, the tool name numbered, the call id in
 * a text column. The arguments are the largest part of a real log's calls (a written file's content,
 * a patch): a call read from a log file keeps only where its line starts, and its arguments are read
 * back from the line when asked for (`KeptValues`); a call from elsewhere keeps them as JSON text.
 * The views of `_views.ts` read them.
 */
export class ToolColumns {
  readonly nums = new NumberRows(2, true);
  readonly ints = new IntRows(7);
  /** The calls' arguments (their lines' places when the source is a file). */
  readonly kept = new KeptValues();
  private readonly ids = new TextColumn();

  private readonly toolId: (s: string) => number;

  constructor(private readonly strings: StringTable) {
    this.toolId = strings.recent(4);
  }

  get length(): number {
    return this.nums.length;
  }

  /** A finished span: its call (tool, id, args, seq) and output (seq, start, duration, turn, flags). */
  add(
    call: { tool: string; callId?: string | undefined; args?: unknown; line?: number; seq: number },
    outputSeq: number,
    start: number,
    duration: number,
    turn: number,
    flags: number,
  ): void {
    const r = this.nums.add();
    this.ints.add();
    this.ints.set(r, CALL_SEQ, call.seq);
    this.ints.set(r, OUTPUT_SEQ, outputSeq);
    this.nums.set(r, START, start);
    this.nums.set(r, DURATION, duration);
    this.ints.set(r, TURN, turn + 1);
    this.ints.set(r, FLAGS, flags);
    this.ints.set(r, TOOL, this.toolId(call.tool));
    if (call.callId !== undefined) this.ints.set(r, CALL_ID, this.ids.add(call.callId));
    if (call.args !== undefined) this.ints.set(r, ARGS, this.kept.add(call.line, call.args));
  }

  tool(r: number): string {
    return this.strings.get(this.ints.get(r, TOOL));
  }
  callSeq(r: number): number {
    return this.ints.get(r, CALL_SEQ);
  }
  outputSeq(r: number): number {
    return this.ints.get(r, OUTPUT_SEQ);
  }
  startedAt(r: number): number {
    return this.nums.get(r, START);
  }
  duration(r: number): number {
    return this.nums.get(r, DURATION);
  }
  /** The turn row, `-1` for none. */
  turn(r: number): number {
    return this.ints.get(r, TURN) - 1;
  }
  unpaired(r: number): boolean {
    return (this.ints.get(r, FLAGS) & UNPAIRED) !== 0;
  }

  callId(r: number): string | undefined {
    const i = this.ints.get(r, CALL_ID);
    return Number.isNaN(i) ? undefined : this.ids.get(i);
  }

  /** The call's arguments, parsed afresh (read back from the log's line when kept as its place). */
  args(r: number): unknown {
    const i = this.ints.get(r, ARGS);
    return Number.isNaN(i) ? undefined : this.kept.get(i, "function.call", this.callSeq(r), "args");
  }

  /** True failed, false succeeded, `undefined` unknown. */
  failed(r: number): boolean | undefined {
    const flags = this.ints.get(r, FLAGS);
    return flags & FAILED_KNOWN ? (flags & FAILED) !== 0 : undefined;
  }
}

/**
 * The pending calls of one tool without a call id, oldest first, skipping entries already taken.
 * Taken entries are dropped whenever the array doubles, so memory follows the calls still open, not
 * the log's length.
 */
class Queue {
  private items: Pending[] = [];
  private head = 0;
  private limit = 1024;
  push(p: Pending) {
    this.items.push(p);
    if (this.items.length >= this.limit) {
      this.items = this.open();
      this.head = 0;
      this.limit = Math.max(1024, this.items.length * 2);
    }
  }
  /** The oldest open entry of `turn`, else the oldest open entry (not taken: the caller takes it). */
  find(turn: number): Pending | undefined {
    let oldest: Pending | undefined;
    for (let i = this.head; i < this.items.length; i++) {
      const p = this.items[i]!;
      if (p.done) {
        if (i === this.head) this.head++;
        continue;
      }
      if (p.turn === turn) return p;
      oldest ??= p;
    }
    return oldest;
  }
  /** Entries not yet taken, oldest first. */
  open(): Pending[] {
    return this.items.slice(this.head).filter((p) => !p.done);
  }
}

export function createToolPairing(
  fileTools: Readonly<Record<string, readonly string[]>>,
  strings: StringTable = new StringTable(),
) {
  const byCallId = new Map<string, Pending>();
  const byTool = new Map<string, Queue>();
  const columns = new ToolColumns(strings);
  /** Denials; `args`: their arguments' index in `columns.kept`. */
  const denied: { span: Omit<DeniedSpan, "turnKey" | "args">; turn: number; args?: number }[] = [];
  const changed = new Set<string>();
  let pendingCount = 0;
  let sorted = true;
  let lastCallSeq = Number.NEGATIVE_INFINITY;

  /** An output with no usable id, when only calls with ids are pending: the oldest of that tool in
   * the output's turn, else of any turn. */
  const oldestWithId = (tool: string, turn: number): Pending | undefined => {
    let oldest: Pending | undefined;
    for (const p of byCallId.values()) {
      if (p.tool !== tool) continue;
      if (p.turn === turn) return p;
      oldest ??= p;
    }
    return oldest;
  };
  const take = (p: Pending) => {
    p.done = true;
    pendingCount--;
    if (p.callId !== undefined && byCallId.get(p.callId) === p) byCallId.delete(p.callId);
  };
  /** Row indices in call order (ties keep completion order, as a stable sort does); `undefined`
   * when the rows are in call order already (the usual case: outputs come in call order). */
  const order = (): Int32Array | undefined => {
    if (sorted) return undefined;
    const out = new Int32Array(columns.length);
    for (let i = 0; i < out.length; i++) out[i] = i;
    return out.sort((a, b) => columns.callSeq(a) - columns.callSeq(b) || a - b);
  };

  return {
    /** The log the events come from: calls read from it keep their line's place, not their arguments. */
    readFrom(lines: LineAt) {
      columns.kept.lines = lines;
    },
    call(e: EventOf<"function.call">, turn: number, line?: number) {
      const p: Pending = { tool: e.tool, turn, seq: e.seq, at: e.timestamp, done: false };
      if (e.callId !== undefined) p.callId = e.callId;
      if (e.args !== undefined) p.args = e.args;
      if (line !== undefined) p.line = line;
      pendingCount++;
      // Calls with an id are found by it; only id-less calls need the per-tool FIFO.
      if (e.callId !== undefined) {
        byCallId.set(e.callId, p);
        return;
      }
      let q = byTool.get(e.tool);
      if (!q) byTool.set(e.tool, (q = new Queue()));
      q.push(p);
    },
    output(e: EventOf<"function.output">, turn: number) {
      const byId = e.callId === undefined ? undefined : byCallId.get(e.callId);
      const p = byId ?? byTool.get(e.tool)?.find(turn) ?? oldestWithId(e.tool, turn);
      const flags = e.failed === undefined ? 0 : e.failed ? FAILED_KNOWN | FAILED : FAILED_KNOWN;
      let callSeq = e.seq;
      if (p) {
        callSeq = p.seq;
        take(p);
        if (p.callId === undefined && e.callId !== undefined) p.callId = e.callId;
        columns.add(p, e.seq, p.at, e.duration_ms ?? e.timestamp - p.at, p.turn >= 0 ? p.turn : turn, flags);
        if (e.failed !== true) for (const path of changedPaths(p.tool, p.args, fileTools)) changed.add(path);
      } else {
        const call = { tool: e.tool, callId: e.callId, args: undefined, seq: e.seq };
        columns.add(
          call,
          e.seq,
          e.timestamp - (e.duration_ms ?? 0),
          e.duration_ms ?? 0,
          turn,
          flags | UNPAIRED,
        );
      }
      if (callSeq < lastCallSeq) sorted = false;
      lastCallSeq = callSeq;
    },
    denied(e: EventOf<"function.denied">, turn: number, line?: number) {
      const withdrawn = e.callId === undefined ? undefined : byCallId.get(e.callId);
      if (withdrawn) take(withdrawn);
      const span: Omit<DeniedSpan, "turnKey" | "args"> = {
        tool: e.tool,
        seq: e.seq,
        at: e.timestamp,
        source: e.source,
      };
      if (e.callId !== undefined) span.callId = e.callId;
      if (e.reason !== undefined) span.reason = e.reason;
      denied.push(
        e.args === undefined ? { span, turn } : { span, turn, args: columns.kept.add(line, e.args) },
      );
    },
    /** Tool spans in call order, numbered, as views over the columns. */
    spans(turns: ToolContext["turns"]): ToolSpan[] {
      const ctx: ToolContext = { tools: columns, turns, order: order() };
      const out = new Array<ToolSpan>(columns.length);
      for (let index = 0; index < out.length; index++) out[index] = ToolSpanView.of(ctx, index);
      return out;
    },
    /** Denied spans in log order (fresh objects on every call; `args` read afresh on each read). */
    denials(keyOf: (turn: number) => string): DeniedSpan[] {
      return denied.map(({ span, turn, args }) => {
        const { tool, seq, at, source, callId, reason } = span;
        const out: DeniedSpan = { tool, seq, at, source };
        if (callId !== undefined) out.callId = callId;
        if (turn >= 0) out.turnKey = keyOf(turn);
        if (args !== undefined)
          keptField(out, "args", () => columns.kept.get(args, "function.denied", seq, "args"));
        if (reason !== undefined) out.reason = reason;
        return out;
      });
    },
    pending(): Trace["pendingCalls"] {
      if (pendingCount === 0) return [];
      const out: Trace["pendingCalls"] = [];
      const open = [...byCallId.values()];
      for (const q of byTool.values()) open.push(...q.open());
      for (const p of open) {
        const entry: Trace["pendingCalls"][number] = { tool: p.tool, seq: p.seq, at: p.at };
        if (p.callId !== undefined) entry.callId = p.callId;
        if (p.args !== undefined) entry.args = p.args;
        out.push(entry);
      }
      return out.sort((a, b) => a.seq - b.seq);
    },
    changedFiles: (): string[] => [...changed].sort(),
    /** The sum of the finished spans' durations. */
    totalMs(): number {
      let ms = 0;
      for (let r = 0; r < columns.length; r++) ms += columns.duration(r);
      return ms;
    },
  };
}
