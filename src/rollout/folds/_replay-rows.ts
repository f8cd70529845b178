/**
 * The replay fold's calls as rows (see `_rows.ts` for why rows): a call is a row of numbers, its tool
 * numbered in a string table, its call id in a text column. Its arguments and output are
 * `KeptValues` (`_line-fields.ts`): left in the log (the place of the line that holds them, read
 * back when asked for) or, for events that did not come from a file, kept as JSON text. Turns are `TurnRows`; a turn's
 * calls are found through each call's turn row, in the order the calls came.
 */
import { KeptValues } from "./_line-fields.ts";
import { IntRows, NumberRows, type StringTable } from "./_rows.ts";
import { TextColumn } from "./_text-column.ts";

// Doubles.
const AT = 0;
const DURATION = 1;
// Integers. TURN is the turn row + 1; ARGS and OUTPUT index the `KeptValues`.
const TURN = 0;
const TOOL = 1;
const SEQ = 2;
const FLAGS = 3;
const CALL_ID = 4;
const ARGS = 5;
const OUTPUT = 6;
const OUTPUT_SEQ = 7;

const DONE = 1;
const FAILED_KNOWN = 2;
const FAILED = 4;
/** Refused after it was announced: it never ran, and leaves its turn's calls. */
const WITHDRAWN = 8;

/** The calls of one replay. */
export class CallRows {
  private readonly nums = new NumberRows(2);
  private readonly ints = new IntRows(8);
  private readonly ids = new TextColumn();
  /** Arguments and outputs (their lines' places when the source is a file). */
  readonly kept = new KeptValues();
  private readonly toolId: (s: string) => number;

  constructor(
    private readonly strings: StringTable,
    /** Applied to an output as it is read (the replay's `maxOutputChars`). */
    private readonly clip: (output: unknown) => unknown,
  ) {
    this.toolId = strings.recent(4);
  }

  get length(): number {
    return this.nums.length;
  }

  /** A new call (open until `finish`); returns its row. */
  add(tool: string, seq: number, at: number, turn: number, callId: string | undefined): number {
    const r = this.nums.add();
    this.ints.add();
    this.ints.set(r, TOOL, this.toolId(tool));
    this.ints.set(r, SEQ, seq);
    this.nums.set(r, AT, at);
    this.ints.set(r, TURN, turn + 1);
    this.ints.set(r, FLAGS, 0);
    if (callId !== undefined) this.ints.set(r, CALL_ID, this.ids.add(callId));
    return r;
  }

  /** The call's arguments; `line`: where the call's line starts, when the source is a file. */
  setArgs(r: number, line: number | undefined, args: unknown): void {
    this.ints.set(r, ARGS, this.kept.add(line, args));
  }

  /** The output arrived: the call is done (`line`: where the output's line starts, if known). */
  finish(
    r: number,
    output: { line: number | undefined; value: unknown } | undefined,
    outputSeq: number,
    failed: boolean | undefined,
    duration: number,
  ) {
    let flags = this.ints.get(r, FLAGS) | DONE;
    if (failed !== undefined) flags |= failed ? FAILED_KNOWN | FAILED : FAILED_KNOWN;
    this.ints.set(r, FLAGS, flags);
    this.ints.set(r, OUTPUT_SEQ, outputSeq);
    this.nums.set(r, DURATION, duration);
    // Kept as text, an output is kept clipped; read back from the log, it is clipped when read.
    if (output) this.ints.set(r, OUTPUT, this.kept.add(output.line, this.clip(output.value)));
  }

  /** An id-less call answered by an output that names an id: the call is known by it from now on (as in the trace). */
  setCallId(r: number, callId: string): void {
    this.ints.set(r, CALL_ID, this.ids.add(callId));
  }

  /** Whether a row's call came after its output (`callArrived`): rows are then not in call order. */
  reordered = false;

  /** The call of a row whose output came first: its seq, start, turn and the run's length. */
  callArrived(r: number, seq: number, at: number, turn: number, duration: number): void {
    this.reordered = true;
    this.ints.set(r, SEQ, seq);
    this.nums.set(r, AT, at);
    this.ints.set(r, TURN, turn + 1);
    this.nums.set(r, DURATION, duration);
  }

  withdraw(r: number): void {
    this.ints.set(r, FLAGS, this.ints.get(r, FLAGS) | WITHDRAWN);
  }

  tool(r: number): string {
    return this.strings.get(this.ints.get(r, TOOL));
  }
  seq(r: number): number {
    return this.ints.get(r, SEQ);
  }
  at(r: number): number {
    return this.nums.get(r, AT);
  }
  /** The turn row. */
  turn(r: number): number {
    return this.ints.get(r, TURN) - 1;
  }
  done(r: number): boolean {
    return (this.ints.get(r, FLAGS) & DONE) !== 0;
  }
  withdrawn(r: number): boolean {
    return (this.ints.get(r, FLAGS) & WITHDRAWN) !== 0;
  }
  /** True failed, false succeeded, `undefined` not said. */
  failed(r: number): boolean | undefined {
    const flags = this.ints.get(r, FLAGS);
    return flags & FAILED_KNOWN ? (flags & FAILED) !== 0 : undefined;
  }
  duration(r: number): number | undefined {
    const d = this.nums.get(r, DURATION);
    return Number.isNaN(d) ? undefined : d;
  }
  callId(r: number): string | undefined {
    const i = this.ints.get(r, CALL_ID);
    return Number.isNaN(i) ? undefined : this.ids.get(i);
  }
  hasArgs(r: number): boolean {
    return !Number.isNaN(this.ints.get(r, ARGS));
  }
  hasOutput(r: number): boolean {
    return !Number.isNaN(this.ints.get(r, OUTPUT));
  }
  /** The call's arguments, fresh on every read. */
  args(r: number): unknown {
    const i = this.ints.get(r, ARGS);
    return Number.isNaN(i) ? undefined : this.kept.get(i, "function.call", this.seq(r), "args");
  }
  /** The call's output (clipped), fresh on every read. */
  output(r: number): unknown {
    const i = this.ints.get(r, OUTPUT);
    if (Number.isNaN(i)) return undefined;
    const value = this.kept.get(i, "function.output", this.ints.get(r, OUTPUT_SEQ), "output");
    return this.kept.inLog(i) ? this.clip(value) : value;
  }
}
