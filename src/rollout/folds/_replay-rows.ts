/**
 * The replay fold's calls as rows (see `_rows.ts` for why rows): a call is a row of numbers, its tool
 * numbered in a string table, its call id in a text column. Its arguments and output are either left
 * in the log (the offset of the line that holds them, read back when asked for: `_line-fields.ts`)
 * or, for events that did not come from a file, kept as JSON text. Turns are `TurnRows`; a turn's
 * calls are found through each call's turn row, in the order the calls came.
 */
import type { LineAt } from "../../util/line-at.ts";
import { fieldAt } from "./_line-fields.ts";
import { IntRows, NumberRows, type StringTable } from "./_rows.ts";
import { TextColumn } from "./_text-column.ts";

// Doubles.
const AT = 0;
const DURATION = 1;
// Integers. TURN is the turn row + 1.
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
const ARGS_IN_LOG = 16;
const OUTPUT_IN_LOG = 32;

/** Where a field of an event is: its line in the log, or the value itself. */
export type Kept = { line: number } | { value: unknown };

/** The calls of one replay. */
export class CallRows {
  private readonly nums = new NumberRows(2);
  private readonly ints = new IntRows(8);
  private readonly ids = new TextColumn();
  private readonly texts = new TextColumn();
  private readonly toolId: (s: string) => number;
  lines: LineAt | undefined;

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

  setArgs(r: number, args: Kept): void {
    this.keep(r, ARGS, ARGS_IN_LOG, args);
  }

  /** The output arrived: the call is done. */
  finish(
    r: number,
    output: Kept | undefined,
    outputSeq: number,
    failed: boolean | undefined,
    duration: number,
  ) {
    let flags = this.ints.get(r, FLAGS) | DONE;
    if (failed !== undefined) flags |= failed ? FAILED_KNOWN | FAILED : FAILED_KNOWN;
    this.ints.set(r, FLAGS, flags);
    this.ints.set(r, OUTPUT_SEQ, outputSeq);
    this.nums.set(r, DURATION, duration);
    if (output) this.keep(r, OUTPUT, OUTPUT_IN_LOG, output);
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
  hasCallId(r: number): boolean {
    return !Number.isNaN(this.ints.get(r, CALL_ID));
  }
  hasArgs(r: number): boolean {
    return !Number.isNaN(this.ints.get(r, ARGS));
  }
  hasOutput(r: number): boolean {
    return !Number.isNaN(this.ints.get(r, OUTPUT));
  }
  /** The call's arguments, fresh on every read. */
  args(r: number): unknown {
    return this.read(r, ARGS, ARGS_IN_LOG, "function.call", this.seq(r), "args");
  }
  /** The call's output (clipped), fresh on every read. */
  output(r: number): unknown {
    const value = this.read(
      r,
      OUTPUT,
      OUTPUT_IN_LOG,
      "function.output",
      this.ints.get(r, OUTPUT_SEQ),
      "output",
    );
    return this.ints.get(r, FLAGS) & OUTPUT_IN_LOG ? this.clip(value) : value;
  }

  private keep(r: number, field: number, inLog: number, kept: Kept): void {
    if ("line" in kept && this.lines) {
      this.ints.set(r, field, kept.line);
      this.ints.set(r, FLAGS, this.ints.get(r, FLAGS) | inLog);
    } else {
      const value = "value" in kept ? kept.value : undefined;
      // An output from memory is clipped as it is kept (there is nothing to read back).
      const stored = field === OUTPUT ? this.clip(value) : value;
      this.ints.set(r, field, this.texts.add(JSON.stringify(stored)));
    }
  }

  private read(
    r: number,
    field: number,
    inLog: number,
    type: "function.call" | "function.output",
    seq: number,
    key: string,
  ): unknown {
    const at = this.ints.get(r, field);
    if (Number.isNaN(at)) return undefined;
    if (this.ints.get(r, FLAGS) & inLog) return fieldAt(this.lines!, at, type, seq, key);
    return JSON.parse(this.texts.get(at));
  }
}
