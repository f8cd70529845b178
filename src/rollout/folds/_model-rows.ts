/**
 * Model spans as rows for the trace fold: a `model.request` opens a row, `model.first_token` sets its
 * time to first token, `model.response` / `model.error` close it. A close takes the open request of
 * the same turn, else the oldest open one (turn ids restart on resume); a close with no open request
 * makes an orphan span from the event alone. The Trace's `ModelSpan`s are views over these rows
 * (`_model-view.ts`).
 */

import type { EventOf, ModelErrorKind } from "../events.ts";
import { recordedCost } from "../recorded-cost.ts";
import { datedAlike } from "./_model-id.ts";
import { IntRows, NumberRows, type StringTable } from "./_rows.ts";

// Doubles: times and durations.
export const START = 0;
export const DURATION = 1;
export const TTFT = 2;
// Integers. TURN is the turn row + 1 (0: no turn).
export const TURN = 0;
export const STATUS = 1;
export const STREAMED = 2;
export const MESSAGES = 3;
export const TOOLS = 4;
export const PROMPT = 5;
export const INPUT = 6;
export const OUTPUT = 7;
export const CACHE_READ = 8;
export const CACHE_WRITE = 9;
export const REASONING = 10;
export const PROVIDER = 11;
export const MODEL = 12;
export const CALLS = 13;
export const SEQ = 14;

/** STATUS values: open, closed by a response, closed by an error. */
export const OPEN = 0;
export const OK = 1;
export const ERROR = 2;

type Close = EventOf<"model.response"> | EventOf<"model.error">;

/** How many tool-call name lists a fold compares with before looking one up by key. */
const RECENT_LISTS = 8;

/** Model spans of one session. */
export class ModelRows {
  readonly nums = new NumberRows(3);
  readonly ints = new IntRows(15);
  /** Rare fields, by row. */
  readonly echoed = new Map<number, string>();
  /** The model a response named, where it is not the one its request named (a dated id of it, or
   * another model that answered): what it is priced at, as `usage` prices it. */
  readonly answered = new Map<number, string>();
  /** What the agent recorded a response cost (USD: an imported OpenCode step's). */
  readonly costs = new Map<number, number>();
  readonly errors = new Map<number, { kind: ModelErrorKind; error?: string }>();
  /** Orphan rows and the turn id their event named. */
  readonly orphans = new Map<number, string>();
  /** Distinct tool-call name lists (list 0 is empty), numbered by their joined names. */
  private readonly lists: (readonly string[])[] = [[]];
  private readonly listIds = new Map<string, number>();
  private readonly open: number[] = [];
  /** The lists last looked up (ids), and where the next one goes. */
  private readonly recentLists: number[] = [];
  private nextRecent = 0;

  private readonly providerId: (s: string) => number;
  private readonly modelId: (s: string) => number;

  constructor(readonly strings: StringTable) {
    this.providerId = strings.recent();
    this.modelId = strings.recent();
  }

  get length(): number {
    return this.nums.length;
  }

  request(e: EventOf<"model.request">, turnRow: number): void {
    const r = this.row(e.provider, e.model);
    this.ints.set(r, TURN, turnRow + 1);
    this.ints.set(r, SEQ, e.seq);
    this.nums.set(r, START, e.timestamp);
    this.ints.set(r, STATUS, OPEN);
    this.nums.set(r, DURATION, 0);
    if (e.streamed !== undefined) this.ints.set(r, STREAMED, e.streamed ? 1 : 0);
    if (e.messageCount !== undefined) this.ints.set(r, MESSAGES, e.messageCount);
    if (e.toolCount !== undefined) this.ints.set(r, TOOLS, e.toolCount);
    if (e.promptChars !== undefined) this.ints.set(r, PROMPT, e.promptChars);
    this.open.push(r);
  }

  firstToken(e: EventOf<"model.first_token">, turnRow: number): void {
    // The turn's oldest open request still waiting for its first token and not said unstreamed: a
    // first token names no model, and given to the oldest it overwrote one recorded already (or
    // went to a `streamed: false` request, and the streamed one showed none).
    const waiting = this.open.find(
      (r) =>
        this.ints.get(r, TURN) === turnRow + 1 &&
        this.ints.get(r, STREAMED) !== 0 &&
        Number.isNaN(this.nums.get(r, TTFT)),
    );
    // Else the turn's oldest open request, said unstreamed or not; never another turn's (a stray
    // first token gave a request of an earlier turn a time to first token it never had, and hid its
    // stall).
    const r = waiting ?? this.open.find((o) => this.ints.get(o, TURN) === turnRow + 1) ?? -1;
    if (r >= 0) this.nums.set(r, TTFT, e.ttft_ms);
  }

  response(e: EventOf<"model.response">, turnRow: number): void {
    const r = this.close(e, turnRow, OK);
    if (e.ttft_ms !== undefined) this.nums.set(r, TTFT, e.ttft_ms);
    if (e.echoedModel !== undefined) this.echoed.set(r, e.echoedModel);
    if (r >= 0 && e.model !== this.strings.get(this.ints.get(r, MODEL))) this.answered.set(r, e.model);
    const cost = recordedCost(e);
    if (cost !== undefined) this.costs.set(r, cost);
    const ints = this.ints;
    if (e.inputTokens !== undefined) ints.set(r, INPUT, e.inputTokens);
    if (e.outputTokens !== undefined) ints.set(r, OUTPUT, e.outputTokens);
    if (e.cacheReadTokens !== undefined) ints.set(r, CACHE_READ, e.cacheReadTokens);
    if (e.cacheWriteTokens !== undefined) ints.set(r, CACHE_WRITE, e.cacheWriteTokens);
    if (e.reasoningTokens !== undefined) ints.set(r, REASONING, e.reasoningTokens);
    ints.set(r, CALLS, e.toolCalls ? this.listId(e.toolCalls) : 0);
  }

  error(e: EventOf<"model.error">, turnRow: number): void {
    const r = this.close(e, turnRow, ERROR);
    this.errors.set(r, e.error === undefined ? { kind: e.kind } : { kind: e.kind, error: e.error });
  }

  /** The tool-call names of a row's response (a shared array: copy before handing it out). */
  toolCalls(r: number): readonly string[] {
    const n = this.ints.get(r, CALLS);
    return Number.isNaN(n) ? this.lists[0]! : this.lists[n]!;
  }

  private row(provider: string, model: string): number {
    const r = this.nums.add();
    this.ints.add();
    this.ints.set(r, PROVIDER, this.providerId(provider));
    this.ints.set(r, MODEL, this.modelId(model));
    return r;
  }

  /** Close the open request this event answers (or an orphan row); sets status and duration. */
  private close(e: Close, turnRow: number, status: number): number {
    let r = this.takeOpen(turnRow, true, e.provider, e.model);
    if (r < 0) r = this.orphan(e);
    this.ints.set(r, STATUS, status);
    // A response stamped before its request (clocks of two processes) took no time, not less.
    this.nums.set(r, DURATION, e.duration_ms ?? Math.max(0, e.timestamp - this.nums.get(r, START)));
    return r;
  }

  /**
   * The open request of this turn, else the oldest open one; `-1` if none is open. Given the
   * answer's provider and model, one of this turn that names them comes first: a main model and a
   * side one (a title, a summary, a subagent) in flight at once each close their own request (the
   * other's was taken, and its tokens priced at the wrong model's rate).
   */
  private takeOpen(turnRow: number, close: boolean, provider?: string, model?: string): number {
    const open = this.open;
    if (open.length === 0) return -1;
    let i = -1;
    if (open.length > 1 && provider !== undefined && model !== undefined) {
      const p = this.providerId(provider);
      const m = this.modelId(model);
      i = open.findIndex(
        (r) =>
          this.ints.get(r, TURN) === turnRow + 1 &&
          this.ints.get(r, PROVIDER) === p &&
          this.ints.get(r, MODEL) === m,
      );
      // A response may name the dated id of the model its request named (`claude-sonnet-4-20250514`
      // for `claude-sonnet-4`), or the reverse; only a date counts (`gpt-4o-mini` is not `gpt-4o`'s).
      if (i < 0)
        i = open.findIndex((r) => {
          if (this.ints.get(r, TURN) !== turnRow + 1 || this.ints.get(r, PROVIDER) !== p) return false;
          const asked = this.strings.get(this.ints.get(r, MODEL));
          return datedAlike(model, asked);
        });
    }
    if (i < 0) {
      i = 0;
      for (let k = 0; k < open.length; k++) {
        if (this.ints.get(open[k]!, TURN) === turnRow + 1) {
          i = k;
          break;
        }
      }
    }
    const r = open[i]!;
    if (close) open.splice(i, 1);
    return r;
  }

  /** A response or error with no request in the log: a closed span built from the event alone. */
  private orphan(e: Close): number {
    const duration = e.duration_ms ?? 0;
    const r = this.row(e.provider, e.model);
    this.ints.set(r, SEQ, e.seq);
    this.nums.set(r, START, e.timestamp - duration);
    this.nums.set(r, DURATION, duration);
    this.orphans.set(r, e.turnId);
    return r;
  }

  private listId(names: readonly string[]): number {
    if (names.length === 0) return 0;
    // Responses ask for a few lists over and over: compare with the last ones before building a key
    // (a joined string hashed into the map was ~50 ms of the real-shaped 1M-event fold).
    const recent = this.recentLists;
    const n = names.length;
    same: for (let k = 0; k < recent.length; k++) {
      const list = this.lists[recent[k]!]!;
      if (list.length !== n) continue;
      for (let i = 0; i < n; i++) if (list[i] !== names[i]) continue same;
      return recent[k]!;
    }
    const id = this.lookupList(names);
    recent[this.nextRecent] = id;
    this.nextRecent = (this.nextRecent + 1) % RECENT_LISTS;
    return id;
  }

  private lookupList(names: readonly string[]): number {
    const key = `${names.length}:${names.join("\0")}`;
    const known = this.listIds.get(key);
    if (known !== undefined) return known;
    const n = this.lists.push(names.map((s) => this.strings.intern(s))) - 1;
    if (this.listIds.size < 10_000) this.listIds.set(key, n);
    return n;
  }
}
