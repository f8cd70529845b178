/**
 * Model spans as rows for the trace fold: a `model.request` opens a row, `model.first_token` sets its
 * time to first token, `model.response` / `model.error` close it. A close takes the open request of
 * the same turn, else the oldest open one (turn ids restart on resume); a close with no open request
 * makes an orphan span from the event alone. Spans become `ModelSpan` objects in `toSpans`, with
 * their fields in the order the fold has always written them (so `trace --json` stays byte-stable).
 */
import type { EventOf, ModelErrorKind } from "../events.ts";
import { NumberRows } from "./_rows.ts";
import type { ModelSpan, SpanStatus } from "./trace-types.ts";

const TURN = 0;
const SEQ = 1;
const START = 2;
const STATUS = 3;
const DURATION = 4;
const TTFT = 5;
const STREAMED = 6;
const MESSAGES = 7;
const TOOLS = 8;
const PROMPT = 9;
const INPUT = 10;
const OUTPUT = 11;
const CACHE_READ = 12;
const CACHE_WRITE = 13;
const REASONING = 14;
const WIDTH = 15;
const STATUSES: SpanStatus[] = ["in_flight", "ok", "error"];
const NO_CALLS: readonly string[] = [];

type Close = EventOf<"model.response"> | EventOf<"model.error">;
type NumberField = "messageCount" | "toolCount" | "promptChars" | "ttft_ms" | `${string}Tokens`;

/** Set an optional number field unless it is absent (NaN). */
function put(span: ModelSpan, key: NumberField, x: number): void {
  if (!Number.isNaN(x)) (span as unknown as Record<string, number>)[key] = x;
}

/** Model spans of one session. */
export class ModelRows {
  private readonly rows = new NumberRows(WIDTH);
  private readonly providers: string[] = [];
  private readonly models: string[] = [];
  private readonly toolCalls: (readonly string[])[] = [];
  /** Rare fields, by row. */
  private readonly echoed = new Map<number, string>();
  private readonly errors = new Map<number, { kind: ModelErrorKind; error?: string }>();
  private readonly orphans = new Map<number, string>();
  /** Tool-call name lists seen, one array per distinct list (copied when handed out). */
  private readonly callLists = new Map<string, readonly string[]>();
  private readonly open: number[] = [];

  constructor(private readonly intern: (s: string) => string) {}

  get length(): number {
    return this.rows.length;
  }

  request(e: EventOf<"model.request">, turnRow: number): void {
    const r = this.rows.add();
    this.rows.set(r, TURN, turnRow);
    this.rows.set(r, SEQ, e.seq);
    this.rows.set(r, START, e.timestamp);
    this.rows.set(r, STATUS, 0);
    this.rows.set(r, DURATION, 0);
    if (e.streamed !== undefined) this.rows.set(r, STREAMED, e.streamed ? 1 : 0);
    if (e.messageCount !== undefined) this.rows.set(r, MESSAGES, e.messageCount);
    if (e.toolCount !== undefined) this.rows.set(r, TOOLS, e.toolCount);
    if (e.promptChars !== undefined) this.rows.set(r, PROMPT, e.promptChars);
    this.providers.push(this.intern(e.provider));
    this.models.push(this.intern(e.model));
    this.toolCalls.push(NO_CALLS);
    this.open.push(r);
  }

  firstToken(e: EventOf<"model.first_token">, turnRow: number): void {
    const r = this.takeOpen(turnRow, false);
    if (r >= 0) this.rows.set(r, TTFT, e.ttft_ms);
  }

  response(e: EventOf<"model.response">, turnRow: number): void {
    const r = this.close(e, turnRow, 1);
    const set = (field: number, x: number | undefined) => x !== undefined && this.rows.set(r, field, x);
    set(TTFT, e.ttft_ms);
    if (e.echoedModel !== undefined) this.echoed.set(r, e.echoedModel);
    set(INPUT, e.inputTokens);
    set(OUTPUT, e.outputTokens);
    set(CACHE_READ, e.cacheReadTokens);
    set(CACHE_WRITE, e.cacheWriteTokens);
    set(REASONING, e.reasoningTokens);
    this.toolCalls[r] = e.toolCalls ? this.callList(e.toolCalls) : NO_CALLS;
  }

  error(e: EventOf<"model.error">, turnRow: number): void {
    const r = this.close(e, turnRow, 2);
    this.errors.set(r, e.error === undefined ? { kind: e.kind } : { kind: e.kind, error: e.error });
  }

  /** The spans as objects (not yet aged: `ageSpan` does that). */
  toSpans(keys: readonly string[], turnIdOf: (row: number) => string): ModelSpan[] {
    const rows = this.rows;
    const out = new Array<ModelSpan>(rows.length);
    for (let r = 0; r < out.length; r++) {
      const turn = rows.get(r, TURN);
      const orphan = this.orphans.size > 0 ? this.orphans.get(r) : undefined;
      const span: ModelSpan = {
        turnKey: orphan === undefined ? keys[turn]! : `${orphan}#?`,
        turnId: orphan ?? turnIdOf(turn),
        seq: rows.get(r, SEQ),
        provider: this.providers[r]!,
        model: this.models[r]!,
        startedAt: rows.get(r, START),
        status: STATUSES[rows.get(r, STATUS)]!,
        duration_ms: rows.get(r, DURATION),
        toolCalls: this.toolCalls[r]!.slice(),
      };
      const streamed = rows.get(r, STREAMED);
      if (!Number.isNaN(streamed)) span.streamed = streamed === 1;
      put(span, "messageCount", rows.get(r, MESSAGES));
      put(span, "toolCount", rows.get(r, TOOLS));
      put(span, "promptChars", rows.get(r, PROMPT));
      put(span, "ttft_ms", rows.get(r, TTFT));
      const echoed = this.echoed.size > 0 ? this.echoed.get(r) : undefined;
      if (echoed !== undefined) span.echoedModel = echoed;
      put(span, "inputTokens", rows.get(r, INPUT));
      put(span, "outputTokens", rows.get(r, OUTPUT));
      put(span, "cacheReadTokens", rows.get(r, CACHE_READ));
      put(span, "cacheWriteTokens", rows.get(r, CACHE_WRITE));
      put(span, "reasoningTokens", rows.get(r, REASONING));
      const error = this.errors.size > 0 ? this.errors.get(r) : undefined;
      if (error) {
        span.errorKind = error.kind;
        if (error.error !== undefined) span.error = error.error;
      }
      out[r] = span;
    }
    return out;
  }

  clear(): void {
    this.rows.clear();
    for (const list of [this.providers, this.models, this.toolCalls, this.open]) list.length = 0;
    for (const map of [this.echoed, this.errors, this.orphans, this.callLists]) map.clear();
  }

  /** Close the open request this event answers (or an orphan row); sets status and duration. */
  private close(e: Close, turnRow: number, status: number): number {
    let r = this.takeOpen(turnRow, true);
    if (r < 0) r = this.orphan(e);
    this.rows.set(r, STATUS, status);
    this.rows.set(r, DURATION, e.duration_ms ?? e.timestamp - this.rows.get(r, START));
    return r;
  }

  /** The open request of this turn, else the oldest open one; `-1` if none is open. */
  private takeOpen(turnRow: number, close: boolean): number {
    const open = this.open;
    if (open.length === 0) return -1;
    let i = 0;
    for (let k = 0; k < open.length; k++) {
      if (this.rows.get(open[k]!, TURN) === turnRow) {
        i = k;
        break;
      }
    }
    const r = open[i]!;
    if (close) open.splice(i, 1);
    return r;
  }

  /** A response or error with no request in the log: a closed span built from the event alone. */
  private orphan(e: Close): number {
    const duration = e.duration_ms ?? 0;
    const r = this.rows.add();
    this.rows.set(r, SEQ, e.seq);
    this.rows.set(r, START, e.timestamp - duration);
    this.rows.set(r, DURATION, duration);
    this.providers.push(this.intern(e.provider));
    this.models.push(this.intern(e.model));
    this.toolCalls.push(NO_CALLS);
    this.orphans.set(r, e.turnId);
    return r;
  }

  private callList(names: readonly string[]): readonly string[] {
    const key = `${names.length}:${names.join("\0")}`;
    const known = this.callLists.get(key);
    if (known) return known;
    const list = names.map(this.intern);
    if (this.callLists.size < 10_000) this.callLists.set(key, list);
    return list;
  }
}
