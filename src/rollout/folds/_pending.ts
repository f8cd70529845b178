/**
 * Tool calls waiting for their output, and the one pairing rule the trace and replay folds share.
 * An output takes the pending call with its `callId`; of several calls that used the same id, the
 * oldest (calls with one id are answered in order). An output without a known id (older logs) takes
 * a pending call of the same tool: one without a call id before one with (an output that lacks an id
 * answers a call that lacked one), and within each the oldest of the output's turn before the oldest
 * of any turn (a call whose output was lost in an earlier turn does not take a later turn's output).
 *
 * Memory: the common case (every call has an id, answered soon) costs one entry per open call and
 * nothing else: no key strings built per call and no per-turn lists, which the replay fold once made
 * for every call. Those were garbage that lived just long enough to be promoted by a young
 * collection, and on a 525 MB log they held ~60 MB until a full one. For the same reason the ids
 * are keys of a prototype-less object, not of a `Map`: 322,000 calls set and deleted in a `Map`
 * (two open at a time) left 48 MB of promoted garbage (its storage re-made on every rehash, and the
 * deleted keys), in an object 2.4 MB.
 */

/** How the index reads its items (rows, or the trace's pending objects). */
export interface PendingAccess<T> {
  tool(item: T): string;
  turn(item: T): number;
  /** Call order: smaller is older. */
  order(item: T): number;
}

/** A taken entry's place in a queue (an index would shift as the queue is compacted). */
const TAKEN: unique symbol = Symbol("taken");

/**
 * The id-less calls of one tool, oldest first. A call taken from the middle leaves a `TAKEN` mark in
 * its place until the head passes it or the list is compacted, so memory follows the calls still
 * open, not the log's length (and no set of taken entries churns: see the note above).
 */
class Queue<T> {
  private items: (T | typeof TAKEN)[] = [];
  private head = 0;
  private limit = 64;

  push(item: T): void {
    this.items.push(item);
    if (this.items.length >= this.limit) {
      this.items = this.open();
      this.head = 0;
      this.limit = Math.max(64, this.items.length * 2);
    }
  }

  /** Take the oldest open entry of `turn`, else the oldest open entry. */
  take(turn: number, turnOf: (item: T) => number): T | undefined {
    let oldest = -1;
    let pick = -1;
    for (let i = this.head; i < this.items.length; i++) {
      const item = this.items[i]!;
      if (item === TAKEN) continue;
      if (turnOf(item) === turn) {
        pick = i;
        break;
      }
      if (oldest < 0) oldest = i;
    }
    if (pick < 0) pick = oldest;
    if (pick < 0) return undefined;
    const item = this.items[pick] as T;
    this.items[pick] = TAKEN;
    while (this.head < this.items.length && this.items[this.head] === TAKEN) this.head++;
    return item;
  }

  /** Open entries, oldest first. */
  open(): T[] {
    const out: T[] = [];
    for (let i = this.head; i < this.items.length; i++) {
      const item = this.items[i]!;
      if (item !== TAKEN) out.push(item);
    }
    return out;
  }

  get empty(): boolean {
    return this.head >= this.items.length;
  }
}

/** Open calls of one fold. */
export class PendingCalls<T> {
  /**
   * Calls with an id: the call, or the calls (oldest first) when an id was used again. No prototype,
   * so any id (`__proto__`, `constructor`) is an ordinary key.
   */
  private readonly byId: Record<string, T | T[]> = Object.create(null);
  /** Id-less calls by tool (also prototype-less: a queue is dropped when it empties). */
  private readonly idless: Record<string, Queue<T>> = Object.create(null);
  private count = 0;

  constructor(private readonly access: PendingAccess<T>) {}

  get size(): number {
    return this.count;
  }

  add(item: T, callId: string | undefined): void {
    this.count++;
    if (callId === undefined) {
      const tool = this.access.tool(item);
      let q = this.idless[tool];
      if (!q) this.idless[tool] = q = new Queue();
      q.push(item);
      return;
    }
    const known = this.byId[callId];
    if (known === undefined) this.byId[callId] = item;
    else if (Array.isArray(known)) known.push(item);
    else this.byId[callId] = [known, item];
  }

  /** Take the call with `callId` (the oldest, if several used it). */
  takeId(callId: string): T | undefined {
    const known = this.byId[callId];
    if (known === undefined) return undefined;
    let item: T;
    if (Array.isArray(known)) {
      item = known.shift()!;
      if (known.length === 1) this.byId[callId] = known[0]!;
    } else {
      item = known;
      delete this.byId[callId];
    }
    this.count--;
    return item;
  }

  /** Take the call an output of `tool` in `turn` without a known id answers (see the rule above). */
  takeFor(tool: string, turn: number): T | undefined {
    const q = this.idless[tool];
    const free = q?.take(turn, this.access.turn);
    if (free !== undefined) {
      this.count--;
      if (q!.empty) delete this.idless[tool];
      return free;
    }
    let inTurn: [string, T] | undefined;
    let any: [string, T] | undefined;
    const older = (a: [string, T] | undefined, item: T) =>
      a === undefined || this.access.order(item) < this.access.order(a[1]);
    for (const id in this.byId) {
      const known = this.byId[id]!;
      for (const item of Array.isArray(known) ? known : [known]) {
        if (this.access.tool(item) !== tool) continue;
        if (this.access.turn(item) === turn && older(inTurn, item)) inTurn = [id, item];
        if (older(any, item)) any = [id, item];
      }
    }
    const pick = inTurn ?? any;
    if (pick === undefined) return undefined;
    this.removeId(pick[0], pick[1]);
    return pick[1];
  }

  /** Every open call, oldest first. */
  open(): T[] {
    const out: T[] = [];
    for (const id in this.byId) {
      const known = this.byId[id]!;
      if (Array.isArray(known)) out.push(...known);
      else out.push(known);
    }
    for (const tool in this.idless) out.push(...this.idless[tool]!.open());
    return out.sort((a, b) => this.access.order(a) - this.access.order(b));
  }

  private removeId(callId: string, item: T): void {
    const known = this.byId[callId];
    if (Array.isArray(known)) {
      known.splice(known.indexOf(item), 1);
      if (known.length === 1) this.byId[callId] = known[0]!;
    } else delete this.byId[callId];
    this.count--;
  }
}
