/**
 * Deriving a thread (turns and their tool calls) from a session's meta, messages and rollout events.
 * Pure: the same inputs give the same rows, so the thread store can always be rebuilt. Messages give
 * the turns (a turn opens at each non-synthetic user message) and the calls the model made; the
 * rollout adds what messages do not say — durations, failures, denials, aborted turns — and the
 * calls compaction erased from the message log (the rollout keeps them).
 */
import { createTurnKeyer } from "../rollout/folds/turns.ts";
import { isTurnStart } from "../storage/_meta-fold.ts";
import type { EventRecord, SessionMeta, StoredMessage } from "../storage/records.ts";
import { countAtMost } from "../util/count-at-most.ts";
import { jsonEqual } from "../util/json-equal.ts";
import { QueuesByKey } from "../util/queues-by-key.ts";
import { outputText } from "./output-text.ts";
import type { DerivedThread, ToolCall, Turn } from "./types.ts";

/** The readable text of a message: its text and code parts, in order. */
export function messageText(m: StoredMessage): string {
  return m.parts
    .filter((p) => (p.type === "text" || p.type === "code") && typeof p.content === "string")
    .map((p) => p.content)
    .join("\n");
}

interface EventFacts {
  /** What the rollout says of the calls the messages hold (their durations, failures, refusals), by
   * `madeKey`: a call id the agent used again (in a later turn) is another call. */
  byCall: Map<string, { durationMs?: number; failed?: boolean; deniedBy?: string; output?: string }>;
  /** Calls and denials the messages do not hold (kept by the rollout only), with their outcomes. */
  orphans: (ToolCall & { callId?: string })[];
  aborted: number[];
  turnStarts: number[];
  /** The turn key (as the trace keys turns) of each `turn.started`, beside `turnStarts`. */
  turnKeys: (string | undefined)[];
  /** The turn key of each rollout-only call whose event named its turn (`turnId`). */
  callTurns: WeakMap<ToolCall, string>;
  /** When something in a turn ended: a response, a failed request, a call's output, an abort. */
  ends: number[];
  /** When responses came, and the provider errors (a turn that ended on one says so). */
  responses: number[];
  errors: { at: number; message: string }[];
  /** How many `function.call`s the rollout holds with each id the messages hold. */
  made: Map<string, number>;
  /** The project the last `session.started` named (a rollout-only session's project). */
  projectPath?: string;
}

/**
 * How much of what rollout-only calls printed one thread keeps, in characters: their outputs are
 * searched as message-backed calls' are until then, and later ones are not (their calls still
 * finished). Unbounded, a rollout-only session of 1.15 M events (525 MB: 192,000 outputs of 1.5 KB)
 * took 34 s and 2.5 GB to index, against 9 s and 860 MB keeping none; message logs that large are
 * held whole by the store's readers anyway.
 */
export const ROLLOUT_OUTPUT_CHARS = 8 * 1024 * 1024;

/** How long after a turn's prompt the rollout's start of that turn may come (see `finishThread`). */
const OWN_START_MS = 1000;

/**
 * The key of the `made`-th call (from 1) with `callId` the messages hold: an agent that numbers its
 * calls anew each turn (`call_1` again) made several, and each has its own output, failure and
 * refusal (they were merged into one, and every call with that id showed the last one's). The
 * first is its id itself: no key is built for a log whose calls each have their own id.
 */
const madeKey = (callId: string, made: number) => (made === 1 ? callId : `${callId}\0${made}`);

/** The events the trace files in a turn (the others name none it opens). */
const KEYED = new Set([
  "turn.aborted",
  "model.request",
  "model.first_token",
  "model.response",
  "model.error",
  "function.call",
  "function.output",
  "function.denied",
  "redirect.triggered",
  "redirect.skipped",
  "parse.error",
]);

const str = (x: unknown) => (typeof x === "string" ? x : undefined);
const num = (x: unknown) => (typeof x === "number" ? x : undefined);

/**
 * Gather what the rollout says, an event at a time: a log is never held whole to derive a thread.
 * A call the messages do not hold is paired with its output or refusal the way the trace pairs
 * them: calls that reuse an id are answered in order, the oldest first (an output with no id, or
 * with an id never named before, answers the oldest open call of its tool that has none, of its
 * turn first; one with no id, when there is none, the oldest with an id, in a rollout-only session); an
 * answered or refused call is closed,
 * so an output with an id no open call waits for is a call of its own (the trace's own span), and
 * an output written before its call is that call's; a refusal written before it is a refusal alone.
 */
function factsCollector(knownCalls: Set<string>, resultless: Set<string>) {
  const facts: EventFacts = {
    byCall: new Map(),
    made: new Map(),
    orphans: [],
    aborted: [],
    turnStarts: [],
    turnKeys: [],
    callTurns: new WeakMap(),
    ends: [],
    responses: [],
    errors: [],
  };
  /** Rollout-only calls waiting for their output or refusal, oldest first, by call id (by `\0`, the
   * tool's name, `\0` and the turn for calls with none: `idlessKey`). */
  const open = new Map<string, ToolCall[]>();
  /** The keys of each tool's queues of id-less calls, one per turn. */
  const idlessKeys = new Map<string, Set<string>>();
  const idlessKey = (tool: string, turn: string | undefined) => `\0${tool}\0${turn ?? ""}`;
  /**
   * The turn an event belongs to, keyed as the trace keys it (`rollout/folds/turns.ts`): one naming
   * none is the turn last started (or first named), and a turn id started again — after a resume,
   * or repeated — is another turn (a resumed agent numbers its turns from turn-0 again: their calls
   * were paired across the two).
   */
  const turns = createTurnKeyer();
  const turnOfEvent = (e: EventRecord): string | undefined => {
    if (e.type === "session.started") {
      turns.sessionStarted();
      return undefined;
    }
    const id = str(e.turnId);
    if (e.type === "turn.started")
      return id === undefined ? undefined : turns.start(id, e.timestamp, e.seq).turnKey;
    return KEYED.has(e.type) ? turns.keyFor(id, e.timestamp, e.seq) : undefined;
  };
  /** Outputs with an id no call waited for, by id: a call that comes later with it is theirs (a log
   * two processes wrote can hold an output before its call; the trace pairs them so). */
  const outputFirst = new Map<string, ToolCall>();
  /**
   * Refusals with an id, for an output that comes with it after all (a refused call that ran): the
   * arguments it ran with — its call's, else the refusal's — and when it started, as the trace takes
   * them (search showed a call with no arguments, at its output's time).
   */
  const refusedRan = new Map<string, { args: unknown; at: number }>();
  /** Calls without an id a refusal without one withdrew, by tool, oldest first: an output without an
   * id no call waits for is the oldest of them, run anyway (as the trace pairs it). */
  const refusedIdless = new QueuesByKey<{ args: unknown; at: number }>();
  /** Characters of rollout-only outputs kept so far (`ROLLOUT_OUTPUT_CHARS`). */
  let outputChars = 0;
  /** How many calls with each id the messages hold the rollout has made so far: an output or a
   * refusal is its id's latest call's (the first's, before any). */
  const made = facts.made;
  const knownKey = (callId: string) => madeKey(callId, made.get(callId) ?? 1);
  const entry = (callId: string) => {
    const key = knownKey(callId);
    let e = facts.byCall.get(key);
    if (!e) facts.byCall.set(key, (e = {}));
    return e;
  };
  /**
   * The ids the rollout-only calls, outputs and refusals named so far: gathered at the first output
   * whose id finds no open call (never, in a well-formed log), then kept up. Only an output naming
   * an id never named before may be ahead of its call, or answer a call that has no id (as in the
   * trace: `_pending.ts`).
   */
  let named: Set<string> | undefined;
  const namedBefore = (callId: string) => {
    if (!named) {
      named = new Set();
      for (const c of facts.orphans) if (c.callId) named.add(c.callId);
    }
    return named.has(callId);
  };
  // Until `finishThread` numbers them in their turns, an orphan's `sequence` is its place among them.
  const orphan = (e: EventRecord, callId: string | undefined): ToolCall => {
    const call: ToolCall = {
      sequence: facts.orphans.length,
      name: str(e.tool) ?? "?",
      timestamp: e.timestamp,
    };
    if (e.args !== undefined) call.args = e.args;
    if (callId) {
      call.callId = callId;
      named?.add(callId);
    }
    facts.orphans.push(call);
    return call;
  };
  /**
   * How many `session.started` found calls open (a process died with them), and the calls made
   * after each, by that number: an output with an id answers the call of the newest process that
   * used it, as the trace pairs it (a resumed agent may count its call ids from 1 again).
   */
  let resumes = 0;
  const processOf = new WeakMap<ToolCall, number>();
  /** Calls whose output came first, by the place their call takes among the orphans (see `settle`). */
  const movedTo = new Map<ToolCall, number>();
  let moves = 0;
  /** The turn a call named, for an output that names one (see `oldestOpen`, `oldestWithId`). */
  const turnOf = new WeakMap<ToolCall, string>();
  /**
   * The id-less call of `tool` an output takes: the oldest of the output's turn, else the oldest of
   * any turn, as the trace takes it (one queue per turn: a search through every open call per
   * output made thousands of calls left open in an earlier turn quadratic).
   */
  const takeIdless = (tool: string, turn: string | undefined): ToolCall | undefined => {
    const keys = idlessKeys.get(tool);
    if (!keys) return undefined;
    let key = idlessKey(tool, turn);
    if (!keys.has(key)) {
      let oldest: ToolCall | undefined;
      for (const k of keys) {
        const head = open.get(k)![0]!;
        if (!oldest || head.sequence < oldest.sequence) [oldest, key] = [head, k];
      }
    }
    const waiting = open.get(key)!;
    const call = waiting.shift();
    if (waiting.length === 0) {
      open.delete(key);
      keys.delete(key);
      if (keys.size === 0) idlessKeys.delete(tool);
    }
    return call;
  };
  /** The open call with id `key` (the oldest; of the newest process's, after a resume). */
  const oldestOpen = (key: string): ToolCall | undefined => {
    const waiting = open.get(key);
    if (!waiting) return undefined;
    let pick = 0;
    if (resumes > 0) {
      // Oldest first: the newest process's calls are the last ones (looked at from the end only).
      pick = waiting.length - 1;
      const newest = processOf.get(waiting[pick]!) ?? 0;
      while (pick > 0 && (processOf.get(waiting[pick - 1]!) ?? 0) === newest) pick--;
    }
    const [call] = waiting.splice(pick, 1);
    if (waiting.length === 0) open.delete(key);
    return call;
  };
  /**
   * The call an output with no id takes when no call without one is open: the oldest open call of
   * its tool that has an id, of the output's turn first, as the trace takes it (it was left out,
   * and the call shown as never answered). Rare: looked for through every open call.
   */
  const oldestWithId = (tool: string, turnId: string | undefined): ToolCall | undefined => {
    let best: [ToolCall, string, boolean] | undefined;
    for (const [key, waiting] of open) {
      if (key.startsWith("\0")) continue; // id-less calls
      for (const c of waiting) {
        if (c.name !== tool) continue;
        const mine = turnId !== undefined && turnOf.get(c) === turnId;
        if (!best || (mine && !best[2]) || (mine === best[2] && c.sequence < best[0].sequence))
          best = [c, key, mine];
      }
    }
    if (!best) return undefined;
    const [call, key] = best;
    const waiting = open.get(key)!;
    waiting.splice(waiting.indexOf(call), 1);
    if (waiting.length === 0) open.delete(key);
    return call;
  };
  /**
   * The open call a refusal naming no id withdraws: the newest of its tool with the same arguments
   * (either side recording none matches), with an id or none, as the trace withdraws it (left open,
   * it took the output of the call after it). Rare: a look through every open call.
   */
  const newestMatching = (tool: string, args: unknown): { call: ToolCall; key: string } | undefined => {
    let best: { call: ToolCall; key: string } | undefined;
    for (const [key, waiting] of open)
      for (const c of waiting)
        if (
          c.name === tool &&
          (!best || c.sequence > best.call.sequence) &&
          (args === undefined || c.args === undefined || jsonEqual(c.args, args))
        )
          best = { call: c, key };
    if (!best) return undefined;
    const waiting = open.get(best.key)!;
    waiting.splice(waiting.indexOf(best.call), 1);
    if (waiting.length === 0) {
      open.delete(best.key);
      const keys = idlessKeys.get(tool);
      if (keys?.delete(best.key) && keys.size === 0) idlessKeys.delete(tool);
    }
    return best;
  };
  /** An output without an id no call waits for: the oldest refused id-less call of its tool, run anyway. */
  const ranIdless = (e: EventRecord, tool: string): ToolCall | undefined => {
    const ran = refusedIdless.shift(tool);
    if (!ran) return undefined;
    const call = orphan(e, undefined);
    call.timestamp = ran.at;
    if (ran.args !== undefined) call.args = ran.args;
    return call;
  };
  const add = (e: EventRecord) => {
    const turn = turnOfEvent(e);
    const callId = str(e.callId);
    const known = callId !== undefined && knownCalls.has(callId);
    switch (e.type) {
      case "session.started": {
        const project = str(e.projectPath);
        if (project) facts.projectPath = project;
        if (open.size > 0) resumes++;
        break;
      }
      case "turn.started":
        facts.turnStarts.push(e.timestamp);
        facts.turnKeys.push(turn);
        break;
      case "turn.aborted":
        facts.aborted.push(e.timestamp);
        facts.ends.push(e.timestamp);
        break;
      case "model.response":
        facts.ends.push(e.timestamp);
        facts.responses.push(e.timestamp);
        break;
      case "model.error":
        facts.ends.push(e.timestamp);
        facts.errors.push({ at: e.timestamp, message: str(e.error) ?? `${str(e.kind) ?? "provider"} error` });
        break;
      case "function.output": {
        facts.ends.push(e.timestamp);
        // An output nothing waits for, with an id, is a call of its own; with none, in a session the
        // rollout alone holds, it answers a call with an id, else it is a call of its own; in one the
        // messages hold too, it is left out (its call may be a message's that names no id).
        const turnId = turn;
        const tool = str(e.tool) ?? "?";
        let d = known ? entry(callId) : callId === undefined ? takeIdless(tool, turnId) : oldestOpen(callId);
        // In a session the rollout alone holds, one no call waits for is a call of its own, as the
        // trace shows it (it was left out).
        if (!d && callId === undefined && knownCalls.size === 0)
          d = oldestWithId(tool, turnId) ?? ranIdless(e, tool) ?? orphan(e, undefined);
        const ran = !d && callId ? refusedRan.get(callId) : undefined;
        if (ran) {
          refusedRan.delete(callId!);
          const call = orphan(e, callId);
          call.timestamp = ran.at;
          if (ran.args !== undefined) call.args = ran.args;
          d = call;
        } else if (!d && callId) {
          // An id never named: the output of a call that had none, else one ahead of its call.
          const fresh = !namedBefore(callId);
          const idless = fresh ? takeIdless(tool, turnId) : undefined;
          if (idless) {
            idless.callId = callId;
            named!.add(callId);
            d = idless;
          } else {
            const call = orphan(e, callId);
            if (fresh) outputFirst.set(callId, call);
            d = call;
          }
        }
        if (!d) break;
        d.durationMs = num(e.duration_ms) ?? d.durationMs;
        if (e.failed === true) d.failed = true;
        // A call the rollout alone holds, or one the messages hold without its result: what it
        // printed is searched as a message-backed call's is, kept as the text search reads (its
        // head and tail when long), not whole; past the thread's budget, kept empty (the call
        // finished, and is not searched by its output).
        if ((!known || resultless.has(callId)) && e.output !== undefined) {
          const text = outputChars < ROLLOUT_OUTPUT_CHARS ? outputText(e.output) : "";
          outputChars += text.length;
          const kept = outputChars <= ROLLOUT_OUTPUT_CHARS ? text : "";
          if (known) entry(callId).output = kept;
          else (d as ToolCall).result = kept;
        }
        break;
      }
      case "function.call": {
        if (known) {
          made.set(callId, (made.get(callId) ?? 0) + 1);
          break;
        }
        const answered = callId ? outputFirst.get(callId) : undefined;
        if (answered && answered.name === (str(e.tool) ?? "?")) {
          // The call of an output written before it: one call, run, in call order.
          outputFirst.delete(callId!);
          if (e.args !== undefined) answered.args = e.args;
          answered.timestamp = e.timestamp;
          // Listed where the call came: after every call so far (sorted once, in `settle`; moving it
          // here cost a scan per call, minutes on a log of outputs far ahead of their calls).
          movedTo.set(answered, facts.orphans.length - 0.5 + ++moves * 1e-9);
          break;
        }
        const call = orphan(e, callId);
        if (resumes > 0) processOf.set(call, resumes);
        const turnId = turn;
        if (turnId !== undefined) turnOf.set(call, turnId);
        if (turnId !== undefined && str(e.turnId) !== undefined) facts.callTurns.set(call, turnId);
        let key = callId;
        if (key === undefined) {
          key = idlessKey(call.name, turnId);
          const keys = idlessKeys.get(call.name);
          if (keys) keys.add(key);
          else idlessKeys.set(call.name, new Set([key]));
        }
        const waiting = open.get(key);
        if (waiting) waiting.push(call);
        else open.set(key, [call]);
        break;
      }
      case "function.denied": {
        const by = str(e.source) ?? "unknown";
        if (known) {
          entry(callId).deniedBy = by;
          break;
        }
        // The call with its id; without one, the newest of its tool with the same arguments.
        const found = callId
          ? { call: oldestOpen(callId), key: callId }
          : newestMatching(str(e.tool) ?? "?", e.args);
        const call = found?.call;
        if (call) {
          // What was refused is what the refusal names (the trace's denial span), else the call's.
          const ran = { args: call.args ?? e.args, at: call.timestamp };
          if (!found.key.startsWith("\0")) refusedRan.set(found.key, ran);
          else refusedIdless.push(call.name, ran);
          call.deniedBy = by;
          if (e.args !== undefined) call.args = e.args;
          break;
        }
        // A refusal no open call waits for is one of its own, as in the trace: a call that comes
        // later with its id is another attempt, which ran.
        orphan(e, callId).deniedBy = by;
        if (callId) refusedRan.set(callId, { args: e.args, at: e.timestamp });
        break;
      }
    }
  };
  /** The orphans in call order, once every event is in (see `movedTo`). */
  const settle = (): EventFacts => {
    if (movedTo.size > 0) {
      const keyed = facts.orphans.map((c, i) => [movedTo.get(c) ?? i, c] as const);
      facts.orphans = keyed.sort((a, b) => a[0] - b[0]).map(([, c]) => c);
      movedTo.clear();
    }
    return facts;
  };
  return { facts, add, settle };
}

/**
 * Turns from the message log: one per non-synthetic user message, as the meta's `turnCount` counts
 * them. Messages before the first prompt (a system prompt, synthetic context) open no turn of
 * their own: they join the first turn, their tool calls with them, but what the model says to a
 * prompt comes after it, so they give it no response. With no prompt at all, the model's work is
 * turn 0 (see below).
 */
function turnsFromMessages(messages: StoredMessage[]): Turn[] {
  const turns: Turn[] = [];
  let current: Turn | undefined;
  let leading: StoredMessage[] = [];
  for (const m of messages) {
    if (!isTurnStart(m)) {
      if (current) addMessage(current, m, true);
      else leading.push(m);
      continue;
    }
    current = {
      number: turns.length + 1,
      prompt: messageText(m),
      startedAt: m.timestamp,
      endedAt: m.timestamp,
      outcome: "no_response",
      messageIds: [],
      toolCalls: [],
    };
    turns.push(current);
    for (const l of leading) addMessage(current, l, false);
    leading = [];
    addMessage(current, m, true);
  }
  // No prompt at all (system and synthetic messages, then the model's work: a session imported
  // so): its calls and replies are in turn 0, which the session does not count as a turn — they
  // were in none, and search never found the calls `session show` prints.
  if (turns.length === 0 && leading.some((m) => m.role === "assistant")) {
    const zero: Turn = {
      number: 0,
      prompt: "",
      startedAt: leading[0]!.timestamp,
      endedAt: leading[0]!.timestamp,
      outcome: "no_response",
      messageIds: [],
      toolCalls: [],
    };
    for (const m of leading) addMessage(zero, m, true);
    turns.push(zero);
  }
  return turns;
}

/** Put a message in a turn: its id, its tool calls and, when it `answers`, its text and interruption. */
function addMessage(turn: Turn, m: StoredMessage, answers: boolean): void {
  turn.messageIds.push(m.id);
  turn.endedAt = Math.max(turn.endedAt, m.timestamp);
  if (m.role !== "assistant") return;
  if (answers) {
    const text = messageText(m);
    if (text.trim()) turn.response = text; // a reply of only blanks is no reply
    if (m.interrupted) turn.outcome = "interrupted";
  }
  for (const p of m.parts) {
    if (p.type !== "tool" || !p.tool) continue;
    const call: ToolCall = { sequence: turn.toolCalls.length + 1, name: p.tool.name, timestamp: m.timestamp };
    if (p.tool.args !== undefined) call.args = p.tool.args;
    if (p.callId) call.callId = p.callId;
    if (p.result !== undefined) call.result = p.result;
    if (p.failed) call.failed = true;
    turn.toolCalls.push(call);
  }
}

/**
 * The turn a rollout timestamp falls in: the last one (in order) that started at or before it, else
 * the first. Turns are nearly always in time order, and then it is a binary search: a scan per call
 * made a rollout-only session of 160,000 events take 3 s and one of 1.3 M time out.
 */
function turnFinder(turns: Turn[]): (at: number) => Turn | undefined {
  const sorted = turns.every((t, i) => i === 0 || turns[i - 1]!.startedAt <= t.startedAt);
  if (!sorted)
    return (at) => {
      let found: Turn | undefined;
      for (const t of turns) if (t.startedAt <= at) found = t;
      return found ?? turns[0];
    };
  return (at) => {
    return turns[countAtMost(turns, at, (t) => t.startedAt) - 1] ?? turns[0];
  };
}

/** Derive the thread of one session. `meta` may be missing for a rollout-only session. */
export function deriveThread(
  id: string,
  meta: SessionMeta | undefined,
  messages: StoredMessage[],
  events: Iterable<EventRecord>,
): DerivedThread {
  const deriver = threadDeriver(id, meta, messages);
  for (const e of events) deriver.add(e);
  return deriver.finish();
}

/**
 * The calls with an id the messages hold, each with the `madeKey` of the rollout's call it is: the
 * messages' calls with one id are the rollout's last ones with it (a compaction erased the first
 * from the messages, the rollout keeps them; a log begun late lacks the first). A rollout that made
 * none with that id (it recorded only outputs) has them all under the first.
 */
function madeKeys(turns: Turn[], rolloutMade: Map<string, number>): [ToolCall, string][] {
  const held = new Map<string, number>();
  for (const t of turns)
    for (const c of t.toolCalls) if (c.callId) held.set(c.callId, (held.get(c.callId) ?? 0) + 1);
  const seen = new Map<string, number>();
  const out: [ToolCall, string][] = [];
  for (const t of turns)
    for (const c of t.toolCalls) {
      if (!c.callId) continue;
      const n = (seen.get(c.callId) ?? 0) + 1;
      seen.set(c.callId, n);
      const made = rolloutMade.get(c.callId) ?? 0;
      const at = made === 0 ? 1 : n + made - held.get(c.callId)!;
      if (at >= 1) out.push([c, madeKey(c.callId, at)]);
    }
  return out;
}

/**
 * `deriveThread`, with the rollout's events given one at a time (`add`), for a reader that streams
 * them: the facts a thread needs are kept, the events are not.
 */
export function threadDeriver(id: string, meta: SessionMeta | undefined, messages: StoredMessage[]) {
  const turns = turnsFromMessages(messages);
  const known = new Set(turns.flatMap((t) => t.toolCalls.flatMap((c) => (c.callId ? [c.callId] : []))));
  // Calls the messages hold without their result: what the rollout says they printed is searched.
  const resultless = new Set(
    turns.flatMap((t) => t.toolCalls.flatMap((c) => (c.callId && c.result === undefined ? [c.callId] : []))),
  );
  const { add, settle } = factsCollector(known, resultless);
  let count = 0;
  let firstAt: number | undefined;
  let lastAt = 0;
  let lastSeq = 0;
  return {
    add(e: EventRecord): void {
      add(e);
      if (count++ === 0) firstAt = e.timestamp;
      lastAt = e.timestamp;
      lastSeq = e.seq;
    },
    /** The `seq` of the last event added (0 for none). */
    get lastSeq(): number {
      return lastSeq;
    },
    finish(): DerivedThread {
      return finishThread(id, meta, messages, turns, settle(), { count, firstAt, lastAt });
    },
  };
}

function finishThread(
  id: string,
  meta: SessionMeta | undefined,
  messages: StoredMessage[],
  turns: Turn[],
  facts: EventFacts,
  events: { count: number; firstAt: number | undefined; lastAt: number },
): DerivedThread {
  // Rollout only: its calls go in the turns their events name, as the trace keys them (by time, a
  // batch appended in one millisecond put every call in its last turn).
  const byKey = new Map<string, Turn>();
  if (turns.length === 0) {
    // Rollout only: one turn per turn.started (or a single one if the log never started a turn).
    const starts = facts.turnStarts.length ? facts.turnStarts : events.count ? [events.firstAt!] : [];
    for (const [i, at] of starts.entries()) {
      const turn: Turn = {
        number: turns.length + 1,
        prompt: "",
        startedAt: at,
        endedAt: at,
        outcome: "no_response",
        messageIds: [],
        toolCalls: [],
      };
      turns.push(turn);
      const key = facts.turnStarts.length ? facts.turnKeys[i] : undefined;
      if (key !== undefined) byKey.set(key, turn);
    }
  }
  // Compaction keeps the session's turn count as history and its last turns in the log: those are
  // numbered as the session counts them (they were renumbered from 1, and a search hit's turn moved).
  const kept = turns.filter((t) => t.number > 0).length;
  const before = meta?.summary ? Math.max(0, meta.turnCount - kept) : 0;
  for (const t of turns) if (t.number > 0) t.number += before;
  // The turns it erased are gone from the messages, not from the rollout: their calls go in turns
  // of their own, one per `turn.started` before the first kept turn, numbered up to it (they were
  // all filed under the first kept turn), prompt unknown.
  if (before > 0 && kept > 0) {
    const first = turns[0]!.startedAt;
    // The erased turns' starts: when the rollout has a start for each turn, those before the first
    // kept turn's own (Codex writes a turn's start a few ms before its prompt: taken by time, that
    // start was one of them, and every call went one turn early), the latest start up to a second
    // after its prompt and before the next kept turn's; else those before the first kept prompt.
    // Not counted from the end: a turn with no prompt after the kept ones (a Codex `!` command's)
    // moved every erased turn one early.
    const all = [...facts.turnStarts].sort((a, b) => a - b);
    const next =
      turns.find((t) => t.number > 0 && t.startedAt > first)?.startedAt ?? Number.POSITIVE_INFINITY;
    let own = -1;
    for (let i = 0; i < all.length && all[i]! <= first + OWN_START_MS && all[i]! < next; i++) own = i;
    const starts = (
      all.length >= before + kept && own >= 0 ? all.slice(0, own) : all.filter((at) => at < first)
    ).slice(-before);
    const earliest = facts.orphans.reduce((m, c) => Math.min(c.timestamp, m), first);
    const opens = starts.length > 0 ? starts : earliest < first ? [earliest] : [];
    turns.unshift(
      ...opens.map((at, i) => ({
        number: before - opens.length + 1 + i,
        prompt: "",
        startedAt: at,
        endedAt: at,
        outcome: "no_response" as const,
        messageIds: [],
        toolCalls: [],
      })),
    );
  }
  for (const [c, key] of madeKeys(turns, facts.made)) {
    const f = facts.byCall.get(key);
    if (f?.durationMs !== undefined) c.durationMs = f.durationMs;
    if (f?.failed) c.failed = true;
    if (f?.deniedBy) c.deniedBy = f.deniedBy;
    if (f?.output !== undefined && c.result === undefined) c.result = f.output;
  }
  const turnAt = turnFinder(turns);
  for (const call of facts.orphans) {
    const named = byKey.size > 0 ? facts.callTurns.get(call) : undefined;
    const t = (named !== undefined ? byKey.get(named) : undefined) ?? turnAt(call.timestamp);
    if (!t) continue;
    t.toolCalls.push({ ...call, sequence: t.toolCalls.length + 1 });
    t.endedAt = Math.max(t.endedAt, call.timestamp);
  }
  // What happened at `at` is a turn's only if that turn had begun, and no turn without a prompt of
  // its own (a Codex `!` command's, which the rollout starts and the messages do not) began since.
  const starts = [...facts.turnStarts].sort((a, b) => a - b);
  const ownerAt = (at: number): Turn | undefined => {
    const t = turnAt(at);
    if (!t || t.startedAt > at) return undefined;
    const lo = countAtMost(starts, at, (start) => start);
    return lo > 0 && starts[lo - 1]! > t.startedAt ? undefined : t;
  };
  for (const at of facts.aborted) {
    const t = ownerAt(at);
    if (t) t.outcome = "interrupted";
  }
  // A turn lasts until the last thing in it ended (its last response, its last call's output, its
  // abort), not until the last message or call began.
  for (const at of facts.ends) {
    const t = ownerAt(at);
    if (t) t.endedAt = Math.max(t.endedAt, at);
  }
  // A turn whose last word from the model side was a provider error (a rate limit that ended the
  // session) says so: its response text, if any, came before it.
  const lastResponse = new Map<Turn, number>();
  for (const at of facts.responses) {
    const t = ownerAt(at);
    if (t) lastResponse.set(t, Math.max(lastResponse.get(t) ?? at, at));
  }
  for (const e of facts.errors) {
    const t = ownerAt(e.at);
    if (t && e.at >= (lastResponse.get(t) ?? Number.NEGATIVE_INFINITY)) t.error = e.message;
  }
  for (const t of turns) if (t.outcome === "no_response" && t.response) t.outcome = "answered";

  const first = messages[0]?.timestamp ?? events.firstAt ?? 0;
  const last = Math.max(messages[messages.length - 1]?.timestamp ?? 0, events.lastAt);
  const thread = {
    id,
    title: meta?.title ?? `(rollout only) ${id}`,
    projectPath: meta?.projectPath ?? facts.projectPath ?? "",
    status: meta?.status ?? "idle",
    createdAt: meta?.createdAt ?? first,
    updatedAt: meta?.updatedAt ?? last,
    turnCount: before + kept,
    messageCount: messages.length,
    toolCallCount: turns.reduce((n, t) => n + t.toolCalls.length, 0),
    ...(meta?.provider !== undefined ? { provider: meta.provider } : {}),
    ...(meta?.model !== undefined ? { model: meta.model } : {}),
    ...(meta?.lastTurnAt !== undefined ? { lastTurnAt: meta.lastTurnAt } : {}),
    ...(meta?.parentId !== undefined ? { parentId: meta.parentId } : {}),
    ...(meta?.goal ? { goal: meta.goal.text, goalStatus: meta.goal.status } : {}),
  };
  return { thread, turns, ...(meta ? {} : { untitled: true }) };
}
