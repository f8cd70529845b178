/**
 * Pairing tool calls with their outputs for the trace fold. A call is found by `callId`; an output
 * without one (older logs) takes the oldest pending call of the same tool (FIFO per tool name). A
 * denial with the `callId` of a pending call withdraws that call: it never ran. Spans come out in
 * call order (by the call's `seq`), not completion order. A call is an object only while it waits
 * for its output; a finished span is a row (numbers, plus its tool, id and args) until handed out.
 */
import type { EventOf } from "../events.ts";
import { NumberRows } from "./_rows.ts";
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
  done: boolean;
}

const CALL_SEQ = 0;
const OUTPUT_SEQ = 1;
const START = 2;
const DURATION = 3;
const TURN = 4;
const FLAGS = 5;
const FAILED_KNOWN = 1;
const FAILED = 2;
const UNPAIRED = 4;

/**
 * FIFO with O(1) shift, skipping entries already taken through their callId. Taken entries are
 * dropped whenever the array doubles, so memory follows the calls still open, not the log's length.
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
  shift(): Pending | undefined {
    while (this.head < this.items.length) {
      const p = this.items[this.head++]!;
      if (!p.done) return p;
    }
    return undefined;
  }
  /** Entries not yet taken, oldest first. */
  open(): Pending[] {
    return this.items.slice(this.head).filter((p) => !p.done);
  }
}

export function createToolPairing(
  fileTools: Readonly<Record<string, readonly string[]>>,
  intern: (s: string) => string = (s) => s,
) {
  const byCallId = new Map<string, Pending>();
  const byTool = new Map<string, Queue>();
  // Finished spans, in completion order: numbers in rows, the rest in parallel arrays.
  const rows = new NumberRows(6);
  const tools: string[] = [];
  const callIds: (string | undefined)[] = [];
  const args: unknown[] = [];
  const denied: { span: Omit<DeniedSpan, "turnKey">; turn: number }[] = [];
  const changed = new Set<string>();
  let pendingCount = 0;
  let sorted = true;
  let lastCallSeq = Number.NEGATIVE_INFINITY;

  /** An output with no usable id, when only calls with ids are pending: the oldest of that tool. */
  const oldestWithId = (tool: string): Pending | undefined => {
    for (const p of byCallId.values()) if (p.tool === tool) return p;
    return undefined;
  };
  const take = (p: Pending) => {
    p.done = true;
    pendingCount--;
    if (p.callId !== undefined && byCallId.get(p.callId) === p) byCallId.delete(p.callId);
  };
  /** Row indices in call order (ties keep completion order, as a stable sort does). */
  const order = (): ArrayLike<number> => {
    const n = rows.length;
    const out = new Int32Array(n);
    for (let i = 0; i < n; i++) out[i] = i;
    if (!sorted) out.sort((a, b) => rows.get(a, CALL_SEQ) - rows.get(b, CALL_SEQ) || a - b);
    return out;
  };

  return {
    call(e: EventOf<"function.call">, turn: number) {
      const p: Pending = { tool: intern(e.tool), turn, seq: e.seq, at: e.timestamp, done: false };
      if (e.callId !== undefined) p.callId = e.callId;
      if (e.args !== undefined) p.args = e.args;
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
      const p = byId ?? byTool.get(e.tool)?.shift() ?? oldestWithId(e.tool);
      const r = rows.add();
      let flags = e.failed === undefined ? 0 : e.failed ? FAILED_KNOWN | FAILED : FAILED_KNOWN;
      if (p) {
        rows.set(r, CALL_SEQ, p.seq);
        rows.set(r, START, p.at);
        rows.set(r, DURATION, e.duration_ms ?? e.timestamp - p.at);
        rows.set(r, TURN, p.turn >= 0 ? p.turn : turn);
        tools.push(p.tool);
        callIds.push(p.callId ?? e.callId);
        args.push(p.args);
        take(p);
        if (e.failed !== true) for (const path of changedPaths(p.tool, p.args, fileTools)) changed.add(path);
      } else {
        rows.set(r, CALL_SEQ, e.seq);
        rows.set(r, START, e.timestamp - (e.duration_ms ?? 0));
        rows.set(r, DURATION, e.duration_ms ?? 0);
        rows.set(r, TURN, turn);
        tools.push(intern(e.tool));
        callIds.push(e.callId);
        args.push(undefined);
        flags |= UNPAIRED;
      }
      rows.set(r, OUTPUT_SEQ, e.seq);
      rows.set(r, FLAGS, flags);
      const callSeq = rows.get(r, CALL_SEQ);
      if (callSeq < lastCallSeq) sorted = false;
      lastCallSeq = callSeq;
    },
    denied(e: EventOf<"function.denied">, turn: number) {
      const withdrawn = e.callId === undefined ? undefined : byCallId.get(e.callId);
      if (withdrawn) take(withdrawn);
      const span: Omit<DeniedSpan, "turnKey"> = {
        tool: e.tool,
        seq: e.seq,
        at: e.timestamp,
        source: e.source,
      };
      if (e.callId !== undefined) span.callId = e.callId;
      if (e.args !== undefined) span.args = e.args;
      if (e.reason !== undefined) span.reason = e.reason;
      denied.push({ span, turn });
    },
    /** Tool spans in call order, numbered (fresh objects on every call). */
    spans(keys: readonly string[]): ToolSpan[] {
      const idx = order();
      const out = new Array<ToolSpan>(idx.length);
      for (let index = 0; index < idx.length; index++) {
        const r = idx[index]!;
        const span: ToolSpan = {
          tool: tools[r]!,
          callSeq: rows.get(r, CALL_SEQ),
          outputSeq: rows.get(r, OUTPUT_SEQ),
          index,
          startedAt: rows.get(r, START),
          duration_ms: rows.get(r, DURATION),
        };
        const flags = rows.get(r, FLAGS);
        if (flags & UNPAIRED) span.unpaired = true;
        const callId = callIds[r];
        if (callId !== undefined) span.callId = callId;
        const turn = rows.get(r, TURN);
        if (turn >= 0) span.turnKey = keys[turn]!;
        const a = args[r];
        if (a !== undefined) span.args = a;
        if (flags & FAILED_KNOWN) span.failed = (flags & FAILED) !== 0;
        out[index] = span;
      }
      return out;
    },
    /** Denied spans in log order (fresh objects on every call). */
    denials(keys: readonly string[]): DeniedSpan[] {
      return denied.map(({ span, turn }) => {
        const { tool, seq, at, source, callId, args: a, reason } = span;
        const out: DeniedSpan = { tool, seq, at, source };
        if (callId !== undefined) out.callId = callId;
        if (turn >= 0) out.turnKey = keys[turn]!;
        if (a !== undefined) out.args = a;
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
    /** Let the finished spans go (the fold is spent). */
    clear() {
      rows.clear();
      for (const list of [tools, callIds, args, denied]) list.length = 0;
    },
  };
}
