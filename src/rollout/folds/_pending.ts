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

/**
 * The id-less calls of one tool, oldest first. A call taken from the middle stays in the list,
 * marked in `taken`, until the head passes it or the list is compacted, so memory follows the
 * calls still open, not the log's length.
 */
class Queue<T> {
  private items: T[] = [];
  private head = 0;
  private limit = 64;
  constructor(private readonly taken: Set<T>) {}

  push(item: T): void {
    this.items.push(item);
    if (this.items.length >= this.limit) {
      const open: T[] = [];
      for (let i = this.head; i < this.items.length; i++) {
        const it = this.items[i]!;
        if (!this.taken.delete(it)) open.push(it);
      }
      this.items = open;
      this.head = 0;
      this.limit = Math.max(64, open.length * 2);
    }
  }

  /** The oldest open entry of `turn`, else the oldest open entry. */
  find(turn: number, turnOf: (item: T) => number): T | undefined {
    let oldest: T | undefined;
    for (let i = this.head; i < this.items.length; i++) {
      const item = this.items[i]!;
      if (this.taken.has(item)) continue;
      if (turnOf(item) === turn) return item;
      oldest ??= item;
    }
    return oldest;
  }

  /** Mark `item` taken, and move the head past the taken entries before it. */
  take(item: T): void {
    this.taken.add(item);
    while (this.head < this.items.length && this.taken.delete(this.items[this.head]!)) this.head++;
  }

  /** Open entries, oldest first. */
  open(): T[] {
    return this.items.slice(this.head).filter((item) => !this.taken.has(item));
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
  private byId: Record<string, T | T[]> = Object.create(null);
  private readonly idless = new Map<string, Queue<T>>();
  /** Id-less calls taken but still in a queue (dropped from here as the queue passes them). */
  private readonly taken = new Set<T>();
  private count = 0;

  constructor(private readonly access: PendingAccess<T>) {}

  get size(): number {
    return this.count;
  }

  add(item: T, callId: string | undefined): void {
    this.count++;
    if (callId === undefined) {
      const tool = this.access.tool(item);
      let q = this.idless.get(tool);
      if (!q) this.idless.set(tool, (q = new Queue(this.taken)));
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
    const q = this.idless.get(tool);
    const free = q?.find(turn, this.access.turn);
    if (free !== undefined) {
      q!.take(free);
      this.count--;
      if (q!.empty) this.idless.delete(tool);
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
    for (const q of this.idless.values()) out.push(...q.open());
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
