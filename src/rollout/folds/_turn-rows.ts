/**
 * The trace fold's turns as rows: the keying rules of `turns.ts` (a key is `<turnId>#<epoch>`; the
 * epoch moves on after a `session.started` that follows activity, and when a `turn.started` repeats
 * an id of the current epoch; an event naming an unknown turn opens an implicit one), with a turn
 * stored as a row of numbers and its id numbered in a string table. Spans refer to a turn by row
 * (`-1`: none); key strings are built when asked for.
 */
import { IntRows, NumberRows, StringTable } from "./_rows.ts";

const STARTED = 0;
const LAST = 1;
const EPOCH = 0;
const FLAGS = 1;
const ID = 2;
const SEQ = 3;
const IMPLICIT = 1;
const ABORTED = 2;

/** Turns of one session, keyed as `turns.ts` keys them. */
export class TurnRows {
  private readonly rows = new NumberRows(2, true);
  private readonly ints = new IntRows(4);
  private readonly reasons = new Map<number, string>();
  private seen = new Map<string, number>();
  private epoch = 1;
  private hitId: string | undefined;
  private hitRow = -1;
  private last = -1;

  constructor(private readonly strings: StringTable = new StringTable()) {}

  get length(): number {
    return this.rows.length;
  }

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
    // Events of one turn come together: the last id looked up is the usual answer.
    let row = turnId === undefined ? this.last : turnId === this.hitId ? this.hitRow : this.lookup(turnId);
    if (row < 0 && turnId !== undefined) row = this.open(turnId, at, seq, true);
    if (row >= 0 && at > this.rows.get(row, LAST)) this.rows.set(row, LAST, at);
    return row;
  }

  /**
   * The implicit turn the replay opens for events that come before any turn: id `(none)`, key
   * `(none)#0`; later events naming no turn land in it too (it is the latest turn). It is not a turn
   * of the epoch (no event can name it), so the turns after it are keyed as the trace keys them.
   */
  openNone(at: number, seq: number): number {
    const row = this.open("(none)", at, seq, true, false);
    this.ints.set(row, EPOCH, 0);
    return row;
  }

  private lookup(turnId: string): number {
    const row = this.seen.get(turnId) ?? -1;
    if (row >= 0) [this.hitId, this.hitRow] = [turnId, row];
    return row;
  }

  abort(row: number, reason: string | undefined): void {
    this.ints.set(row, FLAGS, this.ints.get(row, FLAGS) | ABORTED);
    if (reason !== undefined) this.reasons.set(row, reason);
  }

  turnId(row: number): string {
    return this.strings.get(this.ints.get(row, ID));
  }

  /** The turn's key, `<turnId>#<epoch>`. */
  key(row: number): string {
    return `${this.turnId(row)}#${this.ints.get(row, EPOCH)}`;
  }

  startedAt(row: number): number {
    return this.rows.get(row, STARTED);
  }

  seq(row: number): number {
    return this.ints.get(row, SEQ);
  }

  lastAt(row: number): number {
    return this.rows.get(row, LAST);
  }

  implicit(row: number): boolean {
    return (this.ints.get(row, FLAGS) & IMPLICIT) !== 0;
  }

  aborted(row: number): boolean {
    return (this.ints.get(row, FLAGS) & ABORTED) !== 0;
  }

  abortReason(row: number): string | undefined {
    return this.reasons.get(row);
  }

  private open(turnId: string, at: number, seq: number, implicit: boolean, named = true): number {
    const n = this.strings.id(turnId);
    const row = this.rows.add();
    this.ints.add();
    this.rows.set(row, STARTED, at);
    this.ints.set(row, SEQ, seq);
    this.rows.set(row, LAST, at);
    this.ints.set(row, EPOCH, this.epoch);
    this.ints.set(row, FLAGS, implicit ? IMPLICIT : 0);
    this.ints.set(row, ID, n);
    if (named) this.seen.set(this.strings.get(n), row);
    this.hitId = undefined;
    this.last = row;
    return row;
  }

  private nextEpoch(): void {
    this.epoch++;
    this.seen = new Map();
    this.hitId = undefined;
  }
}
