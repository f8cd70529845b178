/**
 * Pairing tool calls with their outputs for the trace fold. A call is found by `callId`; an output
 * without one (older logs) takes the oldest pending call of the same tool (FIFO per tool name). A
 * denial with the `callId` of a pending call withdraws that call: it never ran. Spans come out in
 * call order (by the call's `seq`), not completion order.
 */
import type { EventOf } from "../events.ts";
import { changedPaths } from "./changed-files.ts";
import type { DeniedSpan, ToolSpan, Trace } from "./trace-types.ts";

interface Pending {
  tool: string;
  callId?: string;
  turnKey?: string;
  seq: number;
  at: number;
  args?: unknown;
  done: boolean;
}

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
  const spans: ToolSpan[] = [];
  const denied: DeniedSpan[] = [];
  const changed = new Set<string>();
  let pendingCount = 0;
  let sorted = true;

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

  return {
    call(e: EventOf<"function.call">, turnKey: string | undefined) {
      const p: Pending = { tool: intern(e.tool), seq: e.seq, at: e.timestamp, done: false };
      if (e.callId !== undefined) p.callId = e.callId;
      if (turnKey !== undefined) p.turnKey = turnKey;
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
    output(e: EventOf<"function.output">, turnKey: string | undefined) {
      const byId = e.callId === undefined ? undefined : byCallId.get(e.callId);
      const p = byId ?? byTool.get(e.tool)?.shift() ?? oldestWithId(e.tool);
      const span: ToolSpan = p
        ? {
            tool: p.tool,
            callSeq: p.seq,
            outputSeq: e.seq,
            index: 0,
            startedAt: p.at,
            duration_ms: e.duration_ms ?? e.timestamp - p.at,
          }
        : {
            tool: e.tool,
            callSeq: e.seq,
            outputSeq: e.seq,
            index: 0,
            startedAt: e.timestamp - (e.duration_ms ?? 0),
            duration_ms: e.duration_ms ?? 0,
            unpaired: true,
          };
      const callId = p?.callId ?? e.callId;
      if (callId !== undefined) span.callId = callId;
      const key = p?.turnKey ?? turnKey;
      if (key !== undefined) span.turnKey = key;
      if (p?.args !== undefined) span.args = p.args;
      if (e.failed !== undefined) span.failed = e.failed;
      if (p) {
        take(p);
        if (e.failed !== true) for (const path of changedPaths(p.tool, p.args, fileTools)) changed.add(path);
      }
      if (spans.length > 0 && spans[spans.length - 1]!.callSeq > span.callSeq) sorted = false;
      spans.push(span);
    },
    denied(e: EventOf<"function.denied">, turnKey: string | undefined) {
      const withdrawn = e.callId === undefined ? undefined : byCallId.get(e.callId);
      if (withdrawn) take(withdrawn);
      const span: DeniedSpan = { tool: e.tool, seq: e.seq, at: e.timestamp, source: e.source };
      if (e.callId !== undefined) span.callId = e.callId;
      if (turnKey !== undefined) span.turnKey = turnKey;
      if (e.args !== undefined) span.args = e.args;
      if (e.reason !== undefined) span.reason = e.reason;
      denied.push(span);
    },
    /** Tool spans in call order, numbered (copies: the fold keeps going). */
    /** Tool spans in call order, numbered: copies, or (`inPlace`, the last call) the spans themselves. */
    spans(inPlace = false): ToolSpan[] {
      if (!sorted) {
        spans.sort((a, b) => a.callSeq - b.callSeq);
        sorted = true;
      }
      if (!inPlace) return spans.map((s, index) => ({ ...s, index }));
      spans.forEach((s, index) => void (s.index = index));
      return spans;
    },
    denials: (inPlace = false): DeniedSpan[] => (inPlace ? denied : denied.map((d) => ({ ...d }))),
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
  };
}
