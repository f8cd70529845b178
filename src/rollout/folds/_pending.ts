/**
 * Tool calls waiting for their output, and the one pairing rule the trace and replay folds share.
 * An output takes the pending call with its `callId`; of several calls that used the same id, the
 * oldest (calls with one id are answered in order). An output without an id (older logs) takes a
 * pending call of the same tool: one without a call id before one with (an output that lacks an id
 * answers a call that lacked one); an output whose id no call has takes only one without an id (a
 * call with another id waits for its own output). Within each, the oldest of the output's turn
 * before the oldest of any turn (a call whose output was lost in an earlier turn does not take a later turn's output).
 * A denial naming an id withdraws that call (`deny`); one naming none, the newest open call of its
 * tool with the same arguments, whatever its id (`denyNewest`).
 * An id is closed once an output or a denial has named it, or a call filed under it was answered: a
 * later output naming it, with no open call of that id, answers no other call (a second output, or
 * the output of a denied call that ran anyway, is its own: taking another call's slot would show
 * that call as run and hide the one that did). An output naming an id never named before may come
 * ahead of its call (two processes writing one log): it is kept (`keepEarly`), and the call of its
 * id and tool, when it comes, is that output's (`claimEarly`) instead of waiting for another.
 *
 * Closed ids cost nothing until an output's id first finds no open call (never, in a well-formed
 * log). Until then a closed id is the own id of a call answered or withdrawn, which the fold has in
 * its rows and hands over then (`closedIds`), or a denial's that found no call (a refusal recorded
 * without its call, as imports record user rejections: few, kept here); the set is kept from there
 * on. A set of every answered id from the start cost the trace fold ~25 MB of peak RSS on the
 * bench's logs (322,000 calls), over its 150 MB target on the real-shaped one; so did one gathered
 * at the first such refusal, which the real-shaped log has early.
 *
 * Memory: the common case (every call has an id, answered soon) costs one entry per open call and
 * nothing else: no key strings built per call and no per-turn lists, which the replay fold once made
 * for every call. Those were garbage that lived just long enough to be promoted by a young
 * collection, and on a 525 MB log they held ~60 MB until a full one.
 *
 * Speed: the last `RECENT` calls with an id sit in a short list searched by string comparison; an
 * older call still open is moved to a prototype-less object keyed by id. Keying every call by its
 * id made each id (a fresh string from the parser) an atom and a property: ~100 ms of a 1M-event
 * fold with 228,000 calls, against ~6 ms for the short list. Ids are not keys of a `Map` either:
 * 322,000 calls set and deleted in a `Map` (two open at a time) left 48 MB of promoted garbage (its
 * storage re-made on every rehash, and the deleted keys), in an object 2.4 MB. A small counting
 * filter of the moved ids (a few of their characters) spares most outputs a look in the object
 * once a call that is never answered has been moved there.
 */

import { countAtMost } from "../../util/count-at-most.ts";

/** How the index reads its items (rows, or the trace's pending objects). */
export interface PendingAccess<T> {
  tool(item: T): string;
  turn(item: T): number;
  /** Call order: smaller is older. */
  order(item: T): number;
  /**
   * The ids of the calls answered or withdrawn so far (the ids they were added with; more is no
   * harm). Read once, at the first output whose id finds no open call.
   */
  closedIds?(): Iterable<string>;
}

/**
 * The id-less calls of one tool, in one queue per turn, each oldest first: an output takes the
 * oldest of its turn from that turn's head, else the oldest head of any turn. (One queue searched
 * from its head for the output's turn took a scan per output past every call left open in earlier
 * turns: 60,000 of them made a log's next 60,000 outputs quadratic.) A queue's taken head is
 * dropped once it is half the queue, and an empty queue goes, so memory follows the calls still
 * open, not the log's length.
 */
class Queue<T> {
  private readonly turns = new Map<number, { items: T[]; head: number }>();
  private size = 0;

  constructor(private readonly access: PendingAccess<T>) {}

  push(item: T): void {
    const turn = this.access.turn(item);
    let q = this.turns.get(turn);
    if (!q) this.turns.set(turn, (q = { items: [], head: 0 }));
    q.items.push(item);
    this.size++;
  }

  /** Take the oldest open entry of `turn`, else the oldest open entry. */
  take(turn: number): T | undefined {
    let key = turn;
    let q = this.turns.get(turn);
    if (!q) {
      let oldest: T | undefined;
      for (const [k, c] of this.turns) {
        const head = c.items[c.head]!;
        if (oldest === undefined || this.access.order(head) < this.access.order(oldest))
          [oldest, key, q] = [head, k, c];
      }
      if (!q) return undefined;
    }
    const item = q.items[q.head++]!;
    this.size--;
    if (q.head === q.items.length) this.turns.delete(key);
    else if (q.head >= 64 && q.head * 2 >= q.items.length) {
      q.items = q.items.slice(q.head);
      q.head = 0;
    }
    return item;
  }

  /** Take `item`, an open entry (a refusal answers one anywhere in its queue). */
  remove(item: T): void {
    const turn = this.access.turn(item);
    const q = this.turns.get(turn)!;
    q.items.splice(q.items.indexOf(item, q.head), 1);
    this.size--;
    if (q.head === q.items.length) this.turns.delete(turn);
  }

  /** Open entries, oldest first. */
  open(): T[] {
    const out: T[] = [];
    for (const q of this.turns.values()) for (let i = q.head; i < q.items.length; i++) out.push(q.items[i]!);
    return out.sort((a, b) => this.access.order(a) - this.access.order(b));
  }

  get empty(): boolean {
    return this.size === 0;
  }
}

/** How many of the newest calls with an id are kept in the short list. */
const RECENT = 16;
const FILTER_BITS = 12;

/** A few characters of an id, mixed: the slot of the moved-ids filter. */
function slotOf(id: string): number {
  const n = id.length;
  if (n === 0) return 0;
  const h =
    n * 0x9e37 +
    id.charCodeAt(n - 1) * 0x2f1 +
    id.charCodeAt(n >> 1) * 0x3b5 +
    id.charCodeAt(0) * 0x1f +
    (n > 2 ? id.charCodeAt(n - 2) * 0x65 + id.charCodeAt(n - 3) * 0x1d3 : 0);
  return (h ^ (h >>> FILTER_BITS)) & ((1 << FILTER_BITS) - 1);
}

/** An output kept for a call that may follow it (see `PendingCalls.keepEarly`). */
export interface EarlyOutput {
  /** The fold's row of the output. */
  row: number;
  tool: string;
  /** The output's timestamp and its own measure of the run, if it gave one. */
  at: number;
  durationMs: number | undefined;
  failed: boolean | undefined;
}

/** The output `e`, the fold's row `row`, as one its call may follow (`PendingCalls.keepEarly`). */
export function earlyOutput(
  row: number,
  e: { tool: string; timestamp: number; duration_ms?: number | undefined; failed?: boolean | undefined },
): EarlyOutput {
  return { row, tool: e.tool, at: e.timestamp, durationMs: e.duration_ms, failed: e.failed };
}

/** Open calls of one fold. */
export class PendingCalls<T> {
  /** The newest calls with an id, oldest first (see above). */
  private readonly recentIds: string[] = [];
  private readonly recentItems: T[] = [];
  /**
   * Older calls with an id still open: the call, or the calls (oldest first) when an id was used
   * again. No prototype, so any id (`__proto__`, `constructor`) is an ordinary key. Every call here
   * is older than every call in the short list.
   */
  private readonly byId: Record<string, T | T[]> = Object.create(null);
  /** How many calls `byId` holds, and per filter slot (made at the first move). */
  private moved = 0;
  private filter: Int32Array | undefined;
  /** Id-less calls by tool (also prototype-less: a queue is dropped when it empties). */
  private readonly idless: Record<string, Queue<T>> = Object.create(null);
  private count = 0;
  /** Closed ids, gathered when first needed (see above). */
  private closed: Set<string> | undefined;
  /** Ids of denials that found no open call, until `closed` is gathered. */
  private readonly unannounced = new Set<string>();
  /** The id the call `takeFor` took last was added with (`undefined`: none). */
  private takenId: string | undefined;
  /** Whether the last `answer` found no call for an id never named before (see `early`). */
  private freshId = false;
  /**
   * Outputs that came before their calls, by id: a log two processes wrote (a tool runner and the
   * agent) can hold an output ahead of the call it answers. The call, when it comes, is that output's
   * (`claimEarly`): counted once, not as an output with no call and a call never answered. Rare.
   */
  private early: Map<string, EarlyOutput[]> | undefined;
  /**
   * Where each `session.started` that found calls still open cut the calls (the `order` of the
   * first call after it): a process that died left them, and the one resuming the session may use
   * their ids again (an agent counting its calls from 1). An output with such an id answers the
   * call of the newest process that made one, not the dead one's.
   */
  private readonly resumes: number[] = [];

  constructor(private readonly access: PendingAccess<T>) {}

  get size(): number {
    return this.count;
  }

  add(item: T, callId: string | undefined): void {
    this.count++;
    if (callId === undefined) {
      const tool = this.access.tool(item);
      let q = this.idless[tool];
      if (!q) this.idless[tool] = q = new Queue(this.access);
      q.push(item);
      return;
    }
    if (this.recentIds.length === RECENT) this.moveOldest();
    this.recentIds.push(callId);
    this.recentItems.push(item);
  }

  /** The call an output answers, by the rule above (`undefined`: none, the output is its own). */
  answer(tool: string, turn: number, callId: string | undefined): T | undefined {
    if (callId !== undefined) {
      const byId = this.takeId(callId);
      if (byId !== undefined) {
        this.closed?.add(callId);
        return byId;
      }
      const closed = this.closedSet();
      if (closed.has(callId)) return undefined;
      closed.add(callId);
    }
    // An output with an id of its own answers no call with another id: that call's output may yet
    // come, and this one's call may follow it (`keepEarly`). Only a call with no id can be its call.
    const item = this.takeFor(tool, turn, callId !== undefined);
    if (item !== undefined && this.takenId !== undefined) this.closed?.add(this.takenId);
    this.freshId = item === undefined && callId !== undefined;
    return item;
  }

  /**
   * After an `answer` that found no call: keep the output as one its call may follow, if it named
   * an id never named before (a second output of an answered id is its own, as ever).
   */
  keepEarly(callId: string | undefined, output: EarlyOutput): void {
    if (!this.freshId || callId === undefined) return;
    this.freshId = false;
    this.early ??= new Map();
    const list = this.early.get(callId);
    if (list) list.push(output);
    else this.early.set(callId, [output]);
  }

  /** A call with `callId` of `tool`: the output that came before it, if one did (oldest first). */
  claimEarly(callId: string | undefined, tool: string): EarlyOutput | undefined {
    if (this.early === undefined || callId === undefined) return undefined;
    const list = this.early.get(callId);
    const i = list ? list.findIndex((o) => o.tool === tool) : -1;
    if (i < 0) return undefined;
    const [output] = list!.splice(i, 1);
    if (list!.length === 0) this.early.delete(callId);
    return output;
  }

  /** A denial naming `callId`: the open call it withdraws, if any; the id is closed either way. */
  deny(callId: string): T | undefined {
    const item = this.takeId(callId);
    if (item !== undefined) this.closed?.add(callId);
    else (this.closed ?? this.unannounced).add(callId);
    return item;
  }

  /**
   * A denial naming no call id: it answers the newest open call of `tool` that `matches` it (the
   * same arguments), id or none, which is taken. Its id, if it had one, is closed as `deny` closes
   * it. A scan of the open calls: refusals without an id are rare.
   */
  denyNewest(
    tool: string,
    matches: (item: T) => boolean,
  ): { item: T; callId: string | undefined } | undefined {
    let best: { item: T; callId: string | undefined; recent: number } | undefined;
    const newer = (item: T) =>
      this.access.tool(item) === tool &&
      (best === undefined || this.access.order(item) > this.access.order(best.item)) &&
      matches(item);
    for (let i = 0; i < this.recentItems.length; i++)
      if (newer(this.recentItems[i]!))
        best = { item: this.recentItems[i]!, callId: this.recentIds[i], recent: i };
    for (const id in this.byId) {
      const known = this.byId[id]!;
      for (const item of Array.isArray(known) ? known : [known])
        if (newer(item)) best = { item, callId: id, recent: -1 };
    }
    for (const item of this.idless[tool]?.open() ?? [])
      if (newer(item)) best = { item, callId: undefined, recent: -2 };
    if (best === undefined) return undefined;
    const { item, callId, recent } = best;
    if (recent >= 0) this.removeRecent(recent);
    else if (recent === -1) this.removeMoved(callId!, item);
    else {
      const q = this.idless[tool]!;
      q.remove(item);
      this.count--;
      if (q.empty) delete this.idless[tool];
    }
    if (callId !== undefined) (this.closed ?? this.unannounced).add(callId);
    return { item, callId };
  }

  /**
   * A `session.started` (a process starts or resumes the session): calls from `order` on are the
   * new process's (see `resumes`).
   */
  sessionStarted(order: number): void {
    if (this.count > 0) this.resumes.push(order);
  }

  /** Take the call with `callId` (the oldest, if several used it; of the newest process's, after a resume). */
  takeId(callId: string): T | undefined {
    if (this.resumes.length > 0) return this.takeNewestProcess(callId);
    if (this.moved > 0 && this.filter![slotOf(callId)]! > 0) {
      const known = this.byId[callId];
      if (known !== undefined) {
        const item = Array.isArray(known) ? known[0]! : known;
        this.removeMoved(callId, item);
        return item;
      }
    }
    const ids = this.recentIds;
    for (let i = 0; i < ids.length; i++) {
      if (ids[i] === callId) {
        const item = this.recentItems[i]!;
        this.removeRecent(i);
        return item;
      }
    }
    return undefined;
  }

  /**
   * Take the call an output of `tool` in `turn` without a known id answers (see the rule above);
   * `idless`: only a call that has no id (the output names an id of its own).
   */
  takeFor(tool: string, turn: number, idless = false): T | undefined {
    const q = this.idless[tool];
    const free = q?.take(turn);
    this.takenId = undefined;
    if (free !== undefined) {
      this.count--;
      if (q!.empty) delete this.idless[tool];
      return free;
    }
    if (idless) return undefined;
    // The oldest call of the tool in the turn, else of any turn: moved calls are the older ones.
    let inTurn: T | undefined;
    let any: T | undefined;
    let inTurnAt = -1;
    let anyAt = -1;
    const older = (a: T | undefined, item: T) =>
      a === undefined || this.access.order(item) < this.access.order(a);
    let inTurnId = "";
    let anyId = "";
    for (const id in this.byId) {
      const known = this.byId[id]!;
      for (const item of Array.isArray(known) ? known : [known]) {
        if (this.access.tool(item) !== tool) continue;
        if (this.access.turn(item) === turn && older(inTurn, item)) [inTurn, inTurnId] = [item, id];
        if (older(any, item)) [any, anyId] = [item, id];
      }
    }
    for (let i = 0; i < this.recentItems.length; i++) {
      const item = this.recentItems[i]!;
      if (this.access.tool(item) !== tool) continue;
      if (inTurn === undefined && this.access.turn(item) === turn) [inTurn, inTurnAt] = [item, i];
      if (any === undefined) [any, anyAt] = [item, i];
    }
    const [pick, at, id] = inTurn !== undefined ? [inTurn, inTurnAt, inTurnId] : [any, anyAt, anyId];
    if (pick === undefined) return undefined;
    this.takenId = at >= 0 ? this.recentIds[at] : id;
    if (at >= 0) this.removeRecent(at);
    else this.removeMoved(id, pick);
    return pick;
  }

  /** How many cuts (`resumes`, in increasing order) are at or before `order`: the call's process. */
  private processOf(order: number): number {
    return countAtMost(this.resumes, order, (cut) => cut);
  }

  /**
   * `takeId` once a session was resumed with calls open: the oldest call of the newest process that
   * used the id. The newest call with the id is found first (the short list from its end, else the
   * end of the id's moved calls: both are oldest first, and moved calls are the older), then older
   * ones while they are of its process: a few looks, not one per open call (a log of thousands of
   * resumes, each leaving a call open under a reused id, folded in cubic time).
   */
  private takeNewestProcess(callId: string): T | undefined {
    let best: T | undefined;
    let bestRecent = -1;
    let process = -1;
    const ids = this.recentIds;
    for (let i = ids.length - 1; i >= 0; i--) {
      if (ids[i] !== callId) continue;
      const item = this.recentItems[i]!;
      const p = this.processOf(this.access.order(item));
      if (process >= 0 && p !== process) return this.takeFound(callId, best!, bestRecent);
      [best, bestRecent, process] = [item, i, p];
    }
    if (this.moved > 0 && this.filter![slotOf(callId)]! > 0) {
      const known = this.byId[callId];
      const list = known === undefined ? [] : Array.isArray(known) ? known : [known];
      for (let i = list.length - 1; i >= 0; i--) {
        const p = this.processOf(this.access.order(list[i]!));
        if (process >= 0 && p !== process) break;
        [best, bestRecent, process] = [list[i]!, -1, p];
      }
    }
    return best === undefined ? undefined : this.takeFound(callId, best, bestRecent);
  }

  /** Take `item`, found at `recent` in the short list (`-1`: among the moved calls of `callId`). */
  private takeFound(callId: string, item: T, recent: number): T {
    if (recent >= 0) this.removeRecent(recent);
    else this.removeMoved(callId, item, true);
    return item;
  }

  /** Every open call, oldest first. */
  open(): T[] {
    const out: T[] = [];
    for (const id in this.byId) {
      const known = this.byId[id]!;
      if (Array.isArray(known)) out.push(...known);
      else out.push(known);
    }
    out.push(...this.recentItems);
    for (const tool in this.idless) out.push(...this.idless[tool]!.open());
    return out.sort((a, b) => this.access.order(a) - this.access.order(b));
  }

  /** The closed ids: the fold's at the first need (see above), then kept up here. */
  private closedSet(): Set<string> {
    if (this.closed === undefined) {
      this.closed = new Set(this.access.closedIds?.());
      for (const id of this.unannounced) this.closed.add(id);
      this.unannounced.clear();
    }
    return this.closed;
  }

  /** Move the oldest call of the short list to `byId`. */
  private moveOldest(): void {
    const id = this.recentIds[0]!;
    const item = this.recentItems[0]!;
    this.removeRecent(0);
    this.count++; // still open
    const known = this.byId[id];
    if (known === undefined) this.byId[id] = item;
    else if (Array.isArray(known)) known.push(item);
    else this.byId[id] = [known, item];
    this.filter ??= new Int32Array(1 << FILTER_BITS);
    this.filter[slotOf(id)]!++;
    this.moved++;
  }

  /** Drop entry `i` of the short list (kept in order, without making a new array). */
  private removeRecent(i: number): void {
    const ids = this.recentIds;
    const items = this.recentItems;
    for (let j = i + 1; j < ids.length; j++) {
      ids[j - 1] = ids[j]!;
      items[j - 1] = items[j]!;
    }
    ids.pop();
    items.pop();
    this.count--;
  }

  private removeMoved(callId: string, item: T, fromEnd = false): void {
    const known = this.byId[callId];
    if (Array.isArray(known)) {
      known.splice(fromEnd ? known.lastIndexOf(item) : known.indexOf(item), 1);
      if (known.length === 1) this.byId[callId] = known[0]!;
    } else delete this.byId[callId];
    this.filter![slotOf(callId)]!--;
    this.moved--;
    this.count--;
  }
}
