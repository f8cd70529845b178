/**
 * Pairing tool calls with their outputs for the trace fold, by the rule the replay fold shares
 * (`_pending.ts`: by `callId`, the oldest of calls that used one id; else a pending call of the same
 * tool, id-less ones first, the output's turn first, oldest first). A denial with the `callId` of a
 * pending call withdraws that call: it never ran. An output naming an id already answered or denied
 * takes no other call's slot: it is an unpaired span with its own id (a denied call that ran anyway
 * shows as run, which is what `deniedNeverRan` looks for). An output that came before its call (a
 * new id) is unpaired until the call comes, and is that call's span from then. Spans come out in call order (by the call's
 * `seq`), not completion order. A call is an object only while it waits for its output; a
 * finished span is a row of `ToolColumns`, and the Trace's spans are views of rows.
 */

import { jsonEqual } from "../../util/json-equal.ts";
import type { LineAt } from "../../util/line-at.ts";
import { QueuesByKey } from "../../util/queues-by-key.ts";
import type { EventOf } from "../events.ts";
import { KeptValues, keptField } from "./_line-fields.ts";
import { earlyOutput, PendingCalls } from "./_pending.ts";
import { IntRows, NumberRows, StringTable } from "./_rows.ts";
import { TextColumn } from "./_text-column.ts";
import { type ToolContext, ToolSpanView } from "./_views.ts";
import { changedPaths } from "./changed-files.ts";
import type { DeniedSpan, ToolSpan, Trace } from "./trace-types.ts";

interface Pending {
  tool: string;
  callId: string | undefined;
  /** Turn row (`-1`: none). */
  turn: number;
  seq: number;
  at: number;
  /**
   * The arguments' code in `ToolColumns.kept`, kept when the call is made: a call waiting for its
   * output does not hold the arguments themselves (a real log's are large, and a young collection
   * while they wait promotes them).
   */
  args: number | undefined;
  /** The paths the call writes (file-writing tools), taken from its arguments when it is made. */
  paths: string[] | undefined;
}

/** A refused call, for an output that may come after all (it ran anyway). */
interface Refused {
  /** Where its arguments are kept (the call's, else the refusal's), read only if an output comes:
   * kept as text per refusal, they took the real-shaped bench log's peak from 108 to 124 MB. */
  from?: { code: number; type: "function.call" | "function.denied"; seq: number };
  paths?: string[];
  at: number;
  /** The withdrawn call's seq (none: a refusal recorded without its call). */
  callSeq?: number;
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

  /** A finished span: its call (tool, id, its arguments' code in `kept`, seq) and output (seq, start, duration, turn, flags). */
  add(
    call: { tool: string; callId?: string | undefined; args?: number | undefined; seq: number },
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
    if (call.args !== undefined) this.ints.set(r, ARGS, call.args);
  }

  /**
   * The call of a span whose output came first (`PendingCalls.keepEarly`): the span is paired from
   * now on, runs from the call, and holds its seq, turn (if it named one) and arguments.
   */
  callArrived(
    r: number,
    call: { seq: number; at: number; turn: number; args: number | undefined },
    duration: number,
  ): void {
    this.ints.set(r, CALL_SEQ, call.seq);
    this.nums.set(r, START, call.at);
    this.nums.set(r, DURATION, duration);
    if (call.turn >= 0) this.ints.set(r, TURN, call.turn + 1);
    this.ints.set(r, FLAGS, this.ints.get(r, FLAGS) & ~UNPAIRED);
    if (call.args !== undefined) this.ints.set(r, ARGS, call.args);
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

export function createToolPairing(
  fileTools: Readonly<Record<string, readonly string[]>>,
  strings: StringTable = new StringTable(),
) {
  const columns = new ToolColumns(strings);
  /** Denials; `args`: their arguments' index in `columns.kept`. */
  const denied: { span: Omit<DeniedSpan, "turnKey" | "args">; turn: number; args?: number }[] = [];
  const pending = new PendingCalls<Pending>({
    tool: (p) => p.tool,
    turn: (p) => p.turn,
    order: (p) => p.seq,
    // The spans' ids and the denials': read only if an output's id finds no open call.
    *closedIds() {
      for (let r = 0; r < columns.length; r++) {
        const id = columns.callId(r);
        if (id !== undefined) yield id;
      }
      for (const { span } of denied) if (span.callId !== undefined) yield span.callId;
    },
  });
  const changed = new Set<string>();
  /**
   * Refused calls by id, with their arguments: an output that comes later with that id ran anyway,
   * and is that call (with no arguments, a refused `Write /etc/passwd` that ran passed
   * `changedFiles` and a `git push --force` passed `forbidBashMatches`). Few: refusals are rare.
   */
  const refused = new Map<string, Refused>();
  /**
   * Calls without an id withdrawn by a refusal without one, by tool, oldest first: an output without
   * an id that finds no open call of its tool is the oldest of them, run anyway. (Left open, a
   * refused `ls` took the output of the `pwd` run after it.)
   */
  const refusedIdless = new QueuesByKey<Refused>();
  let sorted = true;
  let lastCallSeq = Number.NEGATIVE_INFINITY;

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
    /** The log's bytes from `offset` as read (see `KeptValues.block`). */
    block(bytes: Uint8Array, offset: number) {
      columns.kept.block(bytes, offset);
    },
    /** A `session.started`: calls after it are a new process's (see `PendingCalls.sessionStarted`). */
    sessionStarted(seq: number) {
      pending.sessionStarted(seq);
    },
    /** Whether arguments read now are kept as their lines' places (so not needed parsed). */
    argumentsInLog: (): boolean => columns.kept.leftInLog,
    call(e: EventOf<"function.call">, turn: number, line?: number) {
      // Every field set in one literal: one object shape for every call (cheaper to make and read).
      const paths = e.args === undefined ? undefined : changedPaths(e.tool, e.args, fileTools);
      const early = pending.claimEarly(e.callId, e.tool);
      if (early !== undefined) {
        const args = e.args === undefined ? undefined : columns.kept.add(line, e.args);
        const at = e.timestamp;
        columns.callArrived(
          early.row,
          { seq: e.seq, at, turn, args },
          early.durationMs ?? Math.max(0, early.at - at),
        );
        if (early.failed !== true && paths) for (const path of paths) changed.add(path);
        sorted = false;
        return;
      }
      const p: Pending = {
        tool: e.tool,
        callId: e.callId,
        turn,
        seq: e.seq,
        at: e.timestamp,
        args: e.args === undefined ? undefined : columns.kept.add(line, e.args),
        paths: paths && paths.length > 0 ? paths : undefined,
      };
      pending.add(p, e.callId);
    },
    output(e: EventOf<"function.output">, turn: number) {
      const p = pending.answer(e.tool, turn, e.callId);
      const flags = e.failed === undefined ? 0 : e.failed ? FAILED_KNOWN | FAILED : FAILED_KNOWN;
      let callSeq = e.seq;
      if (p) {
        callSeq = p.seq;
        if (p.callId === undefined && e.callId !== undefined) p.callId = e.callId;
        // An output stamped before its call (clocks of two processes) took no time, not less.
        const took = e.duration_ms ?? Math.max(0, e.timestamp - p.at);
        columns.add(p, e.seq, p.at, took, p.turn >= 0 ? p.turn : turn, flags);
        if (e.failed !== true && p.paths) for (const path of p.paths) changed.add(path);
      } else {
        const was = e.callId === undefined ? refusedIdless.shift(e.tool) : refused.get(e.callId);
        if (was && e.callId !== undefined) refused.delete(e.callId);
        // Its arguments kept whole, not as their line's place: the span they go to is the output's
        // (its seq is not the line's).
        const from = was?.from;
        const args =
          from && columns.kept.add(undefined, columns.kept.get(from.code, from.type, from.seq, "args"));
        callSeq = was?.callSeq ?? e.seq;
        const call = { tool: e.tool, callId: e.callId, args, seq: callSeq };
        // A refused call that ran anyway ran from its call on (it showed 0 ms: ten minutes passed a
        // 60 s bound).
        const start = was ? was.at : e.timestamp - (e.duration_ms ?? 0);
        columns.add(
          call,
          e.seq,
          start,
          e.duration_ms ?? Math.max(0, e.timestamp - start),
          turn,
          flags | UNPAIRED,
        );
        if (e.failed !== true && was?.paths) for (const path of was.paths) changed.add(path);
        if (!was) pending.keepEarly(e.callId, earlyOutput(columns.length - 1, e));
      }
      if (callSeq < lastCallSeq) sorted = false;
      lastCallSeq = callSeq;
    },
    denied(e: EventOf<"function.denied">, turn: number, line?: number) {
      // Without an id, the newest open call of the tool with the same arguments (see `_pending.ts`).
      const newest =
        e.callId === undefined
          ? pending.denyNewest(
              e.tool,
              (p) =>
                e.args === undefined ||
                p.args === undefined ||
                jsonEqual(columns.kept.get(p.args, "function.call", p.seq, "args"), e.args),
            )
          : undefined;
      const withdrawn = e.callId === undefined ? newest?.item : pending.deny(e.callId);
      const refusedId = e.callId ?? newest?.callId;
      const span: Omit<DeniedSpan, "turnKey" | "args"> = {
        tool: e.tool,
        seq: e.seq,
        at: e.timestamp,
        source: e.source,
      };
      if (e.callId !== undefined) span.callId = e.callId;
      if (e.reason !== undefined) span.reason = e.reason;
      const args = e.args === undefined ? undefined : columns.kept.add(line, e.args);
      denied.push(args === undefined ? { span, turn } : { span, turn, args });
      if (refusedId !== undefined || withdrawn !== undefined) {
        // Where the call's own arguments are, else the refusal's.
        const from =
          withdrawn?.args !== undefined
            ? { code: withdrawn.args, type: "function.call" as const, seq: withdrawn.seq }
            : args !== undefined
              ? { code: args, type: "function.denied" as const, seq: e.seq }
              : undefined;
        // The files it writes, by the same arguments (a call made without any wrote what its
        // refusal named: changedFiles missed it).
        const paths =
          withdrawn?.args !== undefined
            ? withdrawn.paths
            : e.args === undefined
              ? undefined
              : changedPaths(e.tool, e.args, fileTools);
        const entry: Refused = {
          ...(from ? { from } : {}),
          ...(paths && paths.length > 0 ? { paths } : {}),
          at: withdrawn ? withdrawn.at : e.timestamp,
          ...(withdrawn ? { callSeq: withdrawn.seq } : {}),
        };
        if (refusedId !== undefined) refused.set(refusedId, entry);
        else refusedIdless.push(e.tool, entry);
      }
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
    pending(keyOf: (turn: number) => string): Trace["pendingCalls"] {
      if (pending.size === 0) return [];
      return pending.open().map((p) => {
        const entry: Trace["pendingCalls"][number] = { tool: p.tool, seq: p.seq, at: p.at };
        if (p.callId !== undefined) entry.callId = p.callId;
        if (p.turn >= 0) entry.turnKey = keyOf(p.turn);
        const code = p.args;
        if (code !== undefined)
          keptField(entry, "args", () => columns.kept.get(code, "function.call", p.seq, "args"));
        if (p.paths) entry.paths = [...p.paths];
        return entry;
      });
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
