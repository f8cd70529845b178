/**
 * SessionBuilder: the agent-neutral half of every importer. A parser reads its format and calls
 * these methods; the builder keeps the bookkeeping every agent shares — turns, tool calls paired by
 * the agent's call id, token totals, titles by priority — and derives the rollout events. Its state
 * is plain JSON, saved between runs, so a grown transcript continues exactly where it stopped.
 *
 * Tool calls are held until their result arrives: only then do we know whether the call ran
 * (`function.call` + `function.output`) or was refused (`function.denied`, never a failed call).
 */

import type { DenySource } from "../rollout/events.ts";
import type { EventDraft, Part, StoredMessage, TokenTotals } from "../storage/records.ts";
import { cutText, headOf } from "../util/cut-text.ts";
import { drop, has, own, put } from "../util/dict.ts";
import { idHash } from "../util/id-hash.ts";
import { isCount, isTimeMs } from "../util/number-schemas.ts";
import { NumberSet } from "../util/number-set.ts";
import { messageIdFor } from "./ids.ts";
import { within } from "./live.ts";
import { normalizeProjectPath } from "./project-path.ts";
import { redactDeep } from "./redact.ts";
import { foldHead, joinedHead } from "./text.ts";
import type { ImportedMeta, ImportedSession, TitleSource } from "./types.ts";

export interface PendingCall {
  tool: string;
  args: unknown;
  at: number;
  turnId?: string;
  messageId?: string;
  /** `function.call` already written (flushed unanswered by an earlier, final read). */
  emitted?: boolean;
  /** Its place among the session's calls (`BuilderState.calls`): the order the model made them. */
  n?: number;
  /** Hook runs for it read before its `function.call` was written: they go in after it (`hookForCall`). */
  hooks?: HookRun[];
}

/** A hook run, as `SessionBuilder.hook` takes it. */
export interface HookRun {
  key: string;
  at: number;
  command: string;
  hookEvent?: string;
  blocked?: boolean;
}

export interface BuilderState {
  id: string;
  turnId?: string;
  turnSeq: number;
  tokens: TokenTotals;
  pending: Record<string, PendingCall>;
  /** How many calls were made: numbers them (`PendingCall.n`). */
  calls?: number;
  /** Messages that may still change (an open streamed response, unanswered tool parts, the last
   * assistant message), kept across reads. */
  held: Record<string, StoredMessage>;
  /** Held messages whose response is still open (`hold` until `release`), by id. */
  responding?: Record<string, true>;
  lastAssistantId?: string;
  firstAt?: number;
  lastAt?: number;
  title?: { text: string; source: TitleSource };
  provider?: string;
  model?: string;
  projectPath?: string;
  parentId?: string;
  /** The session's `session.started` (reason `import`) was handed out (see `result`). */
  started?: boolean;
  /**
   * A turn begun whose `turn.started` waits for something in it (`deferTurnStart`): a Codex turn
   * that holds only a command the user ran (`!ls`) and its abort is no turn of the agent's.
   */
  turnPending?: { id: string; at: number };
  /** When the current turn started: a request of it is not written before (the time the transcript
   * gives a response's start may be an entry before the prompt that opened the turn). */
  turnAt?: number;
  /** The event ids given out so far (`NumberSet.pack`): see `SessionBuilder.eventIds`. */
  eventIds?: string;
}

/** Token usage of one provider response, in freecode's names. */
export interface ResponseUsage {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  reasoning?: number;
}

const NONE: ReadonlySet<string> = new Set();

/** The hook runs held with `p` (`hookForCall`), taken off it to be written. */
function takeHooks(p: PendingCall): HookRun[] {
  const hooks = p.hooks ?? [];
  delete p.hooks;
  return hooks;
}

/** A finite number ≥ 0: what a cost must be. */
const isCost = (x: unknown): x is number => typeof x === "number" && Number.isFinite(x) && x >= 0;

/**
 * A count as a source gave it: a whole number ≥ 0 (within the safe range), else 0 — a mangled field
 * is not a count, and the store refuses a message whose usage holds one.
 */
export const count = (x: unknown): number => (isCount(x) ? x : 0);

/** A duration or time difference as a number (0 when a mangled time made it NaN). */
/** A time taken as an event holds it: finite and ≥ 0 (a clock that went back in a transcript is 0). */
const elapsed = (x: number): number => (Number.isFinite(x) && x >= 0 ? x : 0);

/** Usage with every count made a count (`reasoning` kept absent when it was). */
function countsOf(u: ResponseUsage): ResponseUsage {
  const out: ResponseUsage = {
    input: count(u.input),
    output: count(u.output),
    cacheRead: count(u.cacheRead),
    cacheWrite: count(u.cacheWrite),
  };
  if (u.reasoning !== undefined) out.reasoning = count(u.reasoning);
  return out;
}

const TITLE_RANK: Record<TitleSource, number> = { user: 4, generated: 3, import: 2, prompt: 1 };
/**
 * How many partial results a held message may block before it is handed over as it is (see
 * `result`): with parts every 4 MiB, a tool call may wait through ~16 MiB of transcript (a long
 * inline subagent run) for its result before the rest is written without it.
 */
const HELD_PARTS = 4;
/** Output kept in `function.output` events: a summary, not the whole tool output. */
const OUTPUT_CHARS = 2000;

/**
 * Whether a session whose last recorded change was at `lastAt` has gone idle: one with no change
 * for an hour is not running any more, so a call it left open was cut off (a crash, a kill).
 * Shorter would cut off a live call (a subagent at work, a question waiting for its answer), and
 * the rollout keeps that abort for good; longer leaves a fresh crash unmarked (a session that never
 * changes again is not read again). Used by the whole-document importers (OpenCode, Gemini).
 */
export const idleSince = (lastAt: number, now = Date.now()): boolean =>
  !within(lastAt, 60 * 60 * 1000 + 1, now);

/** A fresh builder state for session `id`. */
export const newBuilderState = (id: string): BuilderState => ({
  id,
  turnSeq: 0,
  tokens: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, reasoning: 0 },
  pending: {},
  held: {},
});

/** Plain text of a tool result (a string, or text blocks), cut to the event summary size. */
export function outputSummary(result: unknown): string | undefined {
  let text: string | undefined;
  if (typeof result === "string") text = result;
  else if (Array.isArray(result)) text = joinedHead(result, OUTPUT_CHARS);
  else if (result !== undefined && result !== null) text = JSON.stringify(result);
  if (text === undefined) return undefined;
  return text.length > OUTPUT_CHARS ? `${headOf(text, OUTPUT_CHARS)}…` : text;
}

/** What a parser adds to a result's meta (the builder knows the rest). */
export type ResultMeta = Omit<ImportedMeta, "id" | "title" | "titleSource" | "createdAt" | "updatedAt">;

export class SessionBuilder {
  readonly s: BuilderState;
  private events: EventDraft[] = [];
  private readonly out = new Map<string, StoredMessage>();
  private readonly fresh = new Set<string>();
  /**
   * The event ids given out, as `idHash` numbers, to tell a repeated key (a call id a server reuses,
   * `call_0`; a damaged transcript) from a new one: kept as strings, a long transcript's ids made
   * the whole import ~10% slower. Two ids that hash alike make the later one `#2`: still unique, and
   * the same on every run over the same lines, wherever reads cut them: the set is saved with the
   * state (`BuilderState.eventIds`; a read that began after the first `call_0` gave the second the
   * same id, which the writer then dropped as stored).
   */
  private readonly eventIds: NumberSet;
  /** Whether `eventIds` holds ids `s.eventIds` does not yet: packed when the state is saved
   * (`saved`), not with every part a long read writes (each pack is the whole set again). */
  private idsChanged = false;
  /** Stored messages an interrupt marks, for the writer (see `turnAbort`). */
  private lateInterrupts: string[] = [];
  /** Held messages the last partial result met, with how many partial results met them. */
  private heldAtLastPart = new Map<string, number>();

  constructor(
    state: BuilderState,
    private readonly redact = false,
  ) {
    this.s = state;
    this.eventIds = NumberSet.parse(state.eventIds);
  }

  get id(): string {
    return this.s.id;
  }

  /** The state to save, with the event ids given out so far. */
  saved(): BuilderState {
    if (this.idsChanged) {
      this.s.eventIds = this.eventIds.pack();
      this.idsChanged = false;
    }
    return this.s;
  }

  /** Apply `--redact` to anything that lands in a message or an event. */
  r<T>(value: T): T {
    return this.redact ? redactDeep(value) : value;
  }

  /** Record that something happened at `at` (first/last activity). */
  touch(at: number): void {
    if (!isTimeMs(at)) return;
    if (this.s.firstAt === undefined || at < this.s.firstAt) this.s.firstAt = at;
    if (this.s.lastAt === undefined || at > this.s.lastAt) this.s.lastAt = at;
  }

  /** Offer a title; a more trusted source wins, `lastWins` lets a re-generated title replace itself. */
  title(text: string | undefined, source: TitleSource, lastWins = false): void {
    const cur = this.s.title;
    const rank = TITLE_RANK[source];
    // Decided before cleaning: every later prompt of a long session offers a title that cannot win.
    if (cur && !(rank > TITLE_RANK[cur.source] || (rank === TITLE_RANK[cur.source] && lastWins))) return;
    if (!text) return;
    // Masked before it is cut: a key cut to `sk_live_51Hq…` no longer has a key's shape.
    const whole = this.r(text);
    // A prompt title keeps 50 characters: fold only the head of a long prompt.
    const clean = source === "prompt" ? foldHead(whole, 51) : whole.replace(/\s+/g, " ").trim();
    if (!clean) return;
    const value = source === "prompt" ? cutText(clean, 50) : clean;
    this.s.title = { text: value, source };
  }

  private ev(type: string, key: string, at: number, fields: Record<string, unknown>): void {
    // Something of the pending turn's own (a call an earlier turn left unanswered, written now,
    // is that turn's: it does not open this one).
    if (this.s.turnPending && type !== "turn.started" && fields.turnId === this.s.turnPending.id)
      this.startPendingTurn();
    let id = `${this.s.id}:${type}:${key}`;
    let h = idHash(id);
    for (let n = 2; this.eventIds.has(h); n++) {
      id = `${this.s.id}:${type}:${key}#${n}`;
      h = idHash(id);
    }
    this.eventIds.add(h);
    this.idsChanged = true;
    // A time from a mangled field is not a number: the event keeps its place (the last time seen)
    // rather than failing the write. (Durations and counts are made numbers where they are made.)
    const timestamp = isTimeMs(at) ? at : (this.s.lastAt ?? 0);
    this.touch(timestamp);
    this.events.push({ type, id, timestamp, ...fields });
  }

  /** The current turn id, opening an implicit first turn when the source has none yet. */
  turn(at: number): string {
    if (this.s.turnId === undefined) this.turnStart(`turn-${this.s.turnSeq}`, at);
    return this.s.turnId!;
  }

  turnStart(rawTurnId: string, at: number): void {
    const turnId = String(rawTurnId);
    if (this.s.turnId === turnId) return;
    if (this.s.turnPending) delete this.s.turnPending; // the turn before held nothing: no turn
    this.s.turnId = turnId;
    this.s.turnSeq++;
    this.s.turnAt = at;
    this.ev("turn.started", turnId, at, { turnId });
  }

  /**
   * A turn that counts once something happens in it: its `turn.started` (with its own time) is
   * written before the first event or message of the turn, and a turn aborted or followed by
   * another with nothing in it leaves no trace (`turnAbort` says so).
   */
  deferTurnStart(rawTurnId: string, at: number): void {
    const turnId = String(rawTurnId);
    if (this.s.turnId === turnId) return;
    this.s.turnId = turnId;
    this.s.turnSeq++;
    this.s.turnAt = at;
    this.s.turnPending = { id: turnId, at };
  }

  private startPendingTurn(): void {
    const p = this.s.turnPending!;
    delete this.s.turnPending;
    this.ev("turn.started", p.id, p.at, { turnId: p.id });
  }

  /** The turn was aborted; false when it held nothing (`deferTurnStart`): then nothing is written. */
  turnAbort(key: string, at: number, reason = "interrupted"): boolean {
    if (this.s.turnPending) {
      delete this.s.turnPending;
      return false;
    }
    this.ev("turn.aborted", key, at, { turnId: this.turn(at), reason });
    const id = this.s.lastAssistantId;
    const last = id === undefined ? undefined : this.find(id);
    if (last) last.interrupted = true;
    // Let go after an earlier read: the writer marks the stored message.
    else if (id !== undefined) this.lateInterrupts.push(id);
    return true;
  }

  /** Add a new message (its tool parts are registered with `toolCall`). */
  addMessage(m: StoredMessage): StoredMessage {
    if (this.s.turnPending) this.startPendingTurn();
    // A source's ids are used as they are when they are valid ids; an odd one (empty, spaces, a
    // mangled value) gets a stable valid form here, and every lookup below maps it the same way.
    const id = messageIdFor(String(m.id));
    const given = this.r(m);
    const msg = given.id === id ? given : { ...given, id };
    if (!isTimeMs(msg.timestamp)) msg.timestamp = this.s.lastAt ?? 0;
    this.touch(msg.timestamp);
    this.out.set(msg.id, msg);
    this.fresh.add(msg.id);
    if (msg.role === "assistant") {
      // Held while it is the last one: an abort marks it interrupted, even in a later read.
      const prev = this.s.lastAssistantId;
      this.s.lastAssistantId = msg.id;
      put(this.s.held, msg.id, msg);
      if (prev !== undefined) this.settle(prev);
    }
    return msg;
  }

  /**
   * Take a message of this run out of the session (a Gemini rewind dropped it): it is not stored,
   * and is returned as derived (its usage, its tool parts). Its events stay.
   */
  withdraw(raw: string): StoredMessage | undefined {
    const id = messageIdFor(raw);
    const m = this.out.get(id);
    this.out.delete(id);
    this.fresh.delete(id);
    drop(this.s.held, id);
    if (this.s.responding) drop(this.s.responding, id);
    if (this.s.lastAssistantId === id) delete this.s.lastAssistantId;
    return m;
  }

  /** A message of this session by id: from this run, or held over from an earlier one. */
  find(raw: string): StoredMessage | undefined {
    const id = messageIdFor(raw);
    const m = this.out.get(id);
    if (m) return m;
    const held = own(this.s.held, id);
    if (held) this.out.set(id, held); // changed after it was stored: the writer patches it
    return held;
  }

  /** Keep a message open, across runs too, while its response streams in (until `release`). */
  hold(m: StoredMessage): void {
    put(this.s.held, m.id, m);
    put((this.s.responding ??= {}), m.id, true);
  }

  /** The message's response is complete; it stays held while a tool call of it is unanswered. */
  release(raw: string): void {
    const id = messageIdFor(raw);
    if (this.s.responding) drop(this.s.responding, id);
    this.settle(id);
  }

  /** Let go of a held message nothing can change any more: its response is complete (usage is
   * set when it is), every tool call in it answered, and it is not the last assistant message. */
  private settle(id: string, keepLast = true): void {
    const m = own(this.s.held, id);
    if (
      !m ||
      (this.s.responding && own(this.s.responding, id)) ||
      (keepLast && id === this.s.lastAssistantId)
    )
      return;
    if (!m.parts.some((p) => p.type === "tool" && p.callId && has(this.s.pending, p.callId)))
      drop(this.s.held, id);
  }

  /** A tool call the model asked for; its events are written when its result arrives. */
  toolCall(callId: string, tool: string, args: unknown, at: number, rawMessageId?: string): void {
    const messageId = rawMessageId === undefined ? undefined : messageIdFor(rawMessageId);
    const n = (this.s.calls = (this.s.calls ?? 0) + 1);
    put(this.s.pending, callId, { tool, args: this.r(args), at, turnId: this.turn(at), messageId, n });
    if (messageId && this.out.has(messageId)) put(this.s.held, messageId, this.out.get(messageId)!);
  }

  /** Whether `callId` is a call waiting for its result. */
  isPending(callId: string): boolean {
    return has(this.s.pending, callId);
  }

  pendingCall(callId: string): PendingCall | undefined {
    return own(this.s.pending, callId);
  }

  /**
   * The result of a call: `function.call` + `function.output`, or `function.denied` when refused.
   * Returns false for a result whose call is unknown (the caller counts it).
   */
  toolResult(
    callId: string,
    r: {
      at: number;
      output: unknown;
      failed?: boolean;
      denied?: { source: DenySource; reason?: string };
      durationMs?: number;
    },
  ): boolean {
    const p = own(this.s.pending, callId);
    if (!p) return false;
    const output = this.r(r.output);
    const turnId = p.turnId ?? this.turn(r.at);
    if (r.denied) {
      const reason = r.denied.reason === undefined ? undefined : this.r(r.denied.reason);
      // Its hooks ran before the refusal (a `PreToolUse` hook, one that refused it).
      this.runHooks(takeHooks(p));
      this.ev("function.denied", callId, r.at, {
        turnId,
        tool: p.tool,
        args: p.args,
        source: r.denied.source,
        ...(reason ? { reason } : {}),
        callId,
      });
    } else {
      this.callsBefore(callId, p, r.at);
      const duration = r.durationMs ?? Math.max(0, r.at - p.at);
      this.ev("function.output", callId, r.at, {
        turnId,
        tool: p.tool,
        output: outputSummary(output),
        failed: r.failed === true,
        duration_ms: elapsed(duration),
        callId,
      });
    }
    drop(this.s.pending, callId);
    const m = p.messageId ? this.find(p.messageId) : undefined;
    const part = m?.parts.find((x: Part) => x.type === "tool" && x.callId === callId);
    if (part) {
      part.result = output;
      if (r.failed || r.denied) part.failed = true;
      if (r.denied) part.denied = r.denied.source;
    }
    if (p.messageId) this.settle(p.messageId);
    return true;
  }

  /**
   * The calls of `p`'s turn made before its output (at `outputAt`) and still unwritten: written
   * now, ahead of the output, with `p`'s own call in its place among them. The log keeps the order
   * the model made its calls in, which eval's sequences and the trace read: parallel calls often
   * finish out of order (a third of the corpus's responses with several calls), and writing each
   * call with its result put them in finishing order. `p` itself may be written already (its response ended first): a call made
   * while it ran still goes before its result. One of them refused later has both a call and a
   * denial, which the folds read as refused (the call withdrawn); a refusal brings out no calls,
   * so that a call refused beside it (OpenCode's parallel calls share one time) has no call.
   */
  private callsBefore(
    callId: string,
    p: PendingCall,
    outputAt: number,
    refused: ReadonlySet<string> = NONE,
  ): void {
    const until = Math.max(p.at, outputAt);
    const hooks: HookRun[] = [];
    for (const [id, q] of this.pendingInOrder()) {
      if (q.emitted || refused.has(id)) continue;
      if (id === callId || (q.turnId === p.turnId && q.at <= until)) this.emitCall(id, q, hooks);
    }
    this.runHooks(hooks);
  }

  /**
   * Write now `callId`'s call, if unwritten, and the unwritten calls of its turn made before it: its
   * result is known to come (a parser holds it, see `claude-held.ts`), after something that must
   * come after the call (the end of the response that made it). Not the calls in `refused`: their
   * refusals are held too, and a refused call has no `function.call`.
   */
  writeCallsThrough(callId: string, refused: ReadonlySet<string>): void {
    const p = own(this.s.pending, callId);
    if (p) this.callsBefore(callId, p, p.at, refused);
  }

  /**
   * Write now the calls among `callIds` still unanswered: the response that made them ended (its
   * `model.response` comes next, their outputs later), or their turn is being aborted and no output
   * will come, so each goes in the log before the abort (`finish` would write it after).
   */
  writeUnanswered(callIds: Iterable<string>): void {
    const hooks: HookRun[] = [];
    for (const callId of callIds) {
      const p = this.pendingCall(callId);
      if (p && !p.emitted) this.emitCall(callId, p, hooks);
    }
    this.runHooks(hooks);
  }

  /**
   * The calls waiting for their results, in the order they were made (by `PendingCall.n`): not the
   * dictionary's, which lists keys that look like integers (`"7"`) first. Calls read before the
   * numbering (a saved state) come first, in the dictionary's order.
   */
  private pendingInOrder(): [string, PendingCall][] {
    const all = Object.entries(this.s.pending);
    const made = (i: number) => all[i]![1].n ?? i - all.length;
    return all
      .map((_, i) => i)
      .sort((a, b) => made(a) - made(b))
      .map((i) => all[i]!);
  }

  /**
   * Write `p`'s `function.call`; its hooks (`hookForCall`) go in after it, or into `later` when
   * calls are written in a batch: after the batch, by time (a hook ran after the calls made before it).
   */
  private emitCall(callId: string, p: PendingCall, later?: HookRun[]): void {
    p.emitted = true;
    this.ev("function.call", callId, p.at, {
      ...(p.turnId ? { turnId: p.turnId } : {}),
      tool: p.tool,
      args: p.args,
      callId,
    });
    const hooks = takeHooks(p);
    if (later) later.push(...hooks);
    else this.runHooks(hooks);
  }

  /**
   * A hook run for the call `callId` (Claude Code's `PreToolUse`, named by its `toolUseID`): held
   * with the call while its `function.call` is unwritten, and written right after it (or before its
   * refusal), so the log has the call before the hook that ran for it. Returns false when the call
   * is written already or unknown (the caller writes the hook as any other).
   */
  hookForCall(callId: string, run: HookRun): boolean {
    const p = own(this.s.pending, callId);
    if (!p || p.emitted) return false;
    (p.hooks ??= []).push(run);
    return true;
  }

  /** Write hook runs held with calls, in the order they ran. */
  private runHooks(hooks: HookRun[]): void {
    for (const h of hooks.sort((a, b) => a.at - b.at))
      this.hook(h.key, h.at, h.command, h.hookEvent, h.blocked);
  }

  /**
   * A request to the model whose response is not known yet (a message its agent will write again,
   * with its usage): the request alone, under the key `modelResponse` uses later, so the response
   * lands beside it when it comes. Returns the turn it is in.
   */
  modelRequest(key: string, r: { startAt: number; at: number; provider: string; model: string }): string {
    const turnId = this.turn(r.startAt);
    // Not before its turn began (a span inside its turn's), nor after its response.
    const at = Math.min(Math.max(r.startAt, this.s.turnAt ?? r.startAt), r.at);
    this.ev("model.request", key, at, {
      turnId,
      provider: r.provider,
      model: r.model,
    });
    return turnId;
  }

  /**
   * One provider response: `model.request` at its start (unless `requested`: written already, when
   * the response began), `model.response` with usage at its end.
   */
  modelResponse(
    key: string,
    r: {
      startAt: number;
      at: number;
      provider: string;
      model: string;
      usage?: ResponseUsage;
      toolCalls?: string[];
      textChars?: number;
      thinkingChars?: number;
      messageId?: string;
      /** The provider's id for the response, when the transcript has one (see `model.response`). */
      providerId?: string;
      requested?: boolean;
      /** What the agent recorded the response cost (USD), when it did. */
      costUsd?: number;
    },
  ): void {
    const turnId = r.requested ? this.turn(r.startAt) : this.modelRequest(key, r);
    const startAt = Math.min(r.startAt, r.at);
    const u = r.usage && countsOf(r.usage);
    this.ev("model.response", key, r.at, {
      turnId,
      provider: r.provider,
      model: r.model,
      ...(r.providerId !== undefined ? { responseId: r.providerId } : {}),
      duration_ms: elapsed(r.at - startAt),
      ...(u
        ? {
            inputTokens: u.input,
            outputTokens: u.output,
            cacheReadTokens: u.cacheRead,
            cacheWriteTokens: u.cacheWrite,
            ...(u.reasoning !== undefined ? { reasoningTokens: u.reasoning } : {}),
          }
        : {}),
      toolCalls: r.toolCalls ?? [],
      textChars: count(r.textChars),
      thinkingChars: count(r.thinkingChars),
      ...(isCost(r.costUsd) ? { costUsd: r.costUsd } : {}),
    });
    if (!u) return;
    const t = this.s.tokens;
    t.input += u.input;
    t.output += u.output;
    t.cacheRead += u.cacheRead;
    t.cacheWrite += u.cacheWrite;
    t.reasoning = (t.reasoning ?? 0) + (u.reasoning ?? 0);
    const m = r.messageId ? this.find(r.messageId) : undefined;
    if (m) {
      m.responseId = key;
      m.usage = {
        inputTokens: u.input,
        outputTokens: u.output,
        cacheReadInputTokens: u.cacheRead,
        cacheCreationInputTokens: u.cacheWrite,
        ...(u.reasoning !== undefined ? { reasoningTokens: u.reasoning } : {}),
      };
    }
  }

  /** A failed provider request (API error, rate limit). */
  modelError(
    key: string,
    r: { startAt: number; at: number; provider: string; model: string; error: string },
  ) {
    const turnId = this.turn(r.startAt);
    const startAt = Math.min(r.startAt, r.at);
    this.ev("model.request", key, startAt, { turnId, provider: r.provider, model: r.model });
    this.ev("model.error", key, r.at, {
      turnId,
      provider: r.provider,
      model: r.model,
      duration_ms: elapsed(r.at - startAt),
      kind: "provider",
      error: headOf(this.r(r.error), 500),
    });
  }

  compaction(key: string, at: number, beforeTokens: number, afterTokens: number, extra = {}): void {
    this.ev("compact.occurred", key, at, {
      beforeTokens: count(beforeTokens),
      afterTokens: count(afterTokens),
      ...extra,
    });
  }

  subagent(kind: "start" | "stop", key: string, at: number, subagentId: string, detail?: string): void {
    const field = kind === "start" ? { task: this.r(detail) } : { result: this.r(detail) };
    this.ev(`subagent.${kind}`, key, at, { subagentId, ...(detail ? field : {}) });
  }

  /** A hook run; `hookName` is often the hook's whole command line, so it is redacted like one. */
  hook(key: string, at: number, command: string, hookEvent?: string, blocked?: boolean): void {
    const hookName = this.r(command);
    this.ev("hook.triggered", key, at, {
      hookName,
      ...(hookEvent ? { hookEvent } : {}),
      ...(blocked ? { blocked } : {}),
    });
    if (blocked) this.ev("hook.blocked", key, at, { hookName });
  }

  /**
   * End of this read. `final` writes `function.call` for calls still unanswered (a crashed or
   * interrupted session); a late result then adds only its `function.output`. Except the calls
   * `waits` keeps (a session still at work: `live.ts`): one may yet be answered, or refused (a call
   * written as a call and refused later had both a call and a denial). Returns whether one waits.
   */
  finish(final: boolean, waits?: (callId: string) => boolean): boolean {
    if (!final) return false;
    let open = false;
    for (const [callId, p] of this.pendingInOrder()) {
      if (p.emitted) continue;
      if (waits?.(callId)) open = true;
      else this.emitCall(callId, p);
    }
    // The saved state would otherwise carry every session's last answer (imports.json is rewritten
    // on every pass); an abort read later marks the stored answer through the writer instead.
    if (this.s.lastAssistantId !== undefined) this.settle(this.s.lastAssistantId, false);
    return open;
  }

  /**
   * The session as derived in this run (new messages, changed ones, events). `partial` takes what
   * is ready and hands it over, dropped from the builder: the events so far, and the messages up to
   * the first one held (an open response, unanswered tool calls, the last assistant message: it may
   * still change), unless `HELD_PARTS` partial results met it held already. One held that long is
   * handed over as it is (a call whose result never comes must not keep the rest of a long
   * transcript in memory); it stays held, and if it does change, it comes back as changed and the
   * writer patches it (a rewrite of the session's messages: rare, by this margin). So memory
   * follows the open part of a session, not the file. With nothing ready, `partial` returns
   * `undefined` and keeps everything.
   */
  /**
   * The session's first event: where it ran (so a trace read from the log alone knows its project:
   * eval places changed paths in it), its parent, that it came from an import. Only what the first
   * lines settle: the model is not known until a response is read, and a log must not depend on
   * where a read was cut. Its id is fixed, so a document derived again writes it once.
   */
  private started(meta: ResultMeta, firstEventAt: number): EventDraft {
    const projectPath = meta.projectPath ? normalizeProjectPath(meta.projectPath) : undefined;
    return {
      type: "session.started",
      id: `${this.s.id}:session.started:import`,
      timestamp: Math.min(this.s.firstAt ?? firstEventAt, firstEventAt),
      reason: "import",
      ...(projectPath ? { projectPath } : {}),
      ...(meta.parentId ? { parentId: meta.parentId } : {}),
    };
  }

  result(meta: ResultMeta, partial?: false): ImportedSession;
  result(meta: ResultMeta, partial: true): ImportedSession | undefined;
  result(meta: ResultMeta, partial = false): ImportedSession | undefined {
    const messages: StoredMessage[] = [];
    const changed: StoredMessage[] = [];
    const heldNow = new Map<string, number>();
    for (const [id, m] of this.out) {
      if (partial && has(this.s.held, id)) {
        const parts = (this.heldAtLastPart.get(id) ?? 0) + 1;
        heldNow.set(id, parts);
        if (parts <= HELD_PARTS) break;
      }
      (this.fresh.has(id) ? messages : changed).push(m);
    }
    if (partial) {
      this.heldAtLastPart = heldNow;
      if (messages.length + changed.length === 0) return undefined;
      for (const m of messages) this.fresh.delete(m.id);
      for (const list of [messages, changed]) for (const m of list) this.out.delete(m.id);
    }
    const events = this.events;
    if (partial) this.events = [];
    if (!this.s.started && events.length > 0) {
      events.unshift(this.started(meta, events[0]!.timestamp ?? this.s.firstAt ?? 0));
      this.s.started = true;
    }
    const interrupted = this.lateInterrupts;
    this.lateInterrupts = [];
    const now = this.s.firstAt ?? 0;
    return {
      meta: {
        ...meta,
        id: this.s.id,
        title: this.s.title?.text ?? "(untitled import)",
        titleSource: this.s.title?.source ?? "import",
        createdAt: now,
        updatedAt: this.s.lastAt ?? now,
      },
      messages,
      changed,
      events,
      mode: "delta",
      ...(partial ? { partial } : {}),
      ...(interrupted.length > 0 ? { interrupted } : {}),
      tokens: { ...this.s.tokens },
    };
  }
}
