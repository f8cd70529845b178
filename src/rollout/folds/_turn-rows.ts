/**
 * The trace fold's turns as rows: the keying rules of `turns.ts` (a key is `<turnId>#<epoch>`; the
 * epoch moves on after a `session.started` that follows activity, and when a `turn.started` repeats
 * an id of the current epoch; an event naming an unknown turn opens an implicit one), with a turn
 * stored as a row of numbers and its id interned. Spans refer to a turn by row (`-1`: none); key
 * strings are built once per turn when a Trace is handed out.
 */
import { createInterner, NumberRows } from "./_rows.ts";
import type { TraceTurn } from "./trace-types.ts";

const EPOCH = 0;
const STARTED = 1;
const SEQ = 2;
const LAST = 3;
const FLAGS = 4;
const IMPLICIT = 1;
const ABORTED = 2;

/** Turns of one session, keyed as `turns.ts` keys them. */
export class TurnRows {
  private readonly rows = new NumberRows(5);
  private readonly ids: string[] = [];
  private readonly reasons = new Map<number, string>();
  private seen = new Map<string, number>();
  private epoch = 1;
  private last = -1;

  constructor(private readonly intern: (s: string) => string = createInterner()) {}

  /** A `turn.started`: opens a turn (a repeated id starts a new epoch first). */
  start(turnId: string, at: number, seq: number): number {
    if (this.seen.has(turnId)) this.nextEpoch();
    return this.open(turnId, at, seq, false);
  }

  /** A `session.started`: later turns belong to a new epoch (if this one saw any). */
  sessionStarted(): void {
    if (this.seen.size > 0) this.nextEpoch();
  }

  /**
   * The row of the turn an event names (or, naming none, the latest turn; `-1` if there is none),
   * opening an implicit turn for an unknown id, and moving the turn's last-seen time.
   */
  rowFor(turnId: string | undefined, at: number, seq: number): number {
    let row = turnId === undefined ? this.last : (this.seen.get(turnId) ?? -1);
    if (row < 0 && turnId !== undefined) row = this.open(turnId, at, seq, true);
    if (row >= 0 && at > this.rows.get(row, LAST)) this.rows.set(row, LAST, at);
    return row;
  }

  abort(row: number, reason: string | undefined): void {
    this.rows.set(row, FLAGS, this.rows.get(row, FLAGS) | ABORTED);
    if (reason !== undefined) this.reasons.set(row, reason);
  }

  turnId(row: number): string {
    return this.ids[row]!;
  }

  /** Key strings of every turn, by row (one string per turn, shared by its spans). */
  keys(): string[] {
    const out = new Array<string>(this.ids.length);
    for (let r = 0; r < out.length; r++) out[r] = `${this.ids[r]}#${this.rows.get(r, EPOCH)}`;
    return out;
  }

  /** The turns as Trace objects (fields in the order the fold has always written them). */
  toTurns(keys: readonly string[]): TraceTurn[] {
    const out = new Array<TraceTurn>(this.ids.length);
    for (let r = 0; r < out.length; r++) {
      const rows = this.rows;
      const turn: TraceTurn = {
        turnKey: keys[r]!,
        turnId: this.ids[r]!,
        startedAt: rows.get(r, STARTED),
        seq: rows.get(r, SEQ),
        lastAt: rows.get(r, LAST),
      };
      const flags = rows.get(r, FLAGS);
      if (flags & IMPLICIT) turn.implicit = true;
      if (flags & ABORTED) {
        turn.aborted = true;
        const reason = this.reasons.get(r);
        if (reason !== undefined) turn.abortReason = reason;
      }
      out[r] = turn;
    }
    return out;
  }

  /** Let the rows go (the fold is spent). */
  clear(): void {
    this.rows.clear();
    this.ids.length = 0;
    this.reasons.clear();
    this.seen = new Map();
  }

  private open(turnId: string, at: number, seq: number, implicit: boolean): number {
    const id = this.intern(turnId);
    const row = this.rows.add();
    this.rows.set(row, EPOCH, this.epoch);
    this.rows.set(row, STARTED, at);
    this.rows.set(row, SEQ, seq);
    this.rows.set(row, LAST, at);
    this.rows.set(row, FLAGS, implicit ? IMPLICIT : 0);
    this.ids.push(id);
    this.seen.set(id, row);
    this.last = row;
    return row;
  }

  private nextEpoch(): void {
    this.epoch++;
    this.seen = new Map();
  }
}
