/**
 * Fields a fold leaves in the log: an event read from a log file can be found again by where its
 * line starts (`util/line-at.ts`), so a fold keeps that offset instead of a copy of a large field
 * (tool arguments, outputs) and reads the field back when it is asked for. The line read back is
 * checked to be the same event (`type` and `seq`): a log changed since it was read is an error
 * (`conflict`), never another event's field.
 */
import { conflict } from "../../errors.ts";
import { put } from "../../util/dict.ts";
import type { LineAt } from "../../util/line-at.ts";
import type { RolloutEvent } from "../events.ts";
import { TextColumn } from "./_text-column.ts";

const NAMES: Partial<Record<RolloutEvent["type"], string>> = {
  "function.call": "call",
  "function.output": "output",
  "function.denied": "denial",
};

/** `field` of the `type` event of `seq` whose line starts at `offset`. */
export function fieldAt(
  lines: LineAt,
  offset: number,
  type: RolloutEvent["type"],
  seq: number,
  field: string,
): unknown {
  let event: Record<string, unknown> | undefined;
  try {
    event = JSON.parse(lines.at(offset));
  } catch (error) {
    if (!(error instanceof SyntaxError)) throw error;
  }
  if (event?.type !== type || event.seq !== seq) {
    throw conflict(
      `${lines.path}: the line at byte ${offset} is not the ${NAMES[type] ?? type} of seq ${seq} any more: the log changed since it was read`,
    );
  }
  return event[field];
}

/**
 * Make `key` of `obj` an enumerable property read afresh on every read (`read`): it reads, spreads,
 * serialises and compares like a plain field. For the plain objects the folds hand out (refusals),
 * whose arguments are `KeptValues`.
 */
export function keptField(obj: object, key: string, read: () => unknown): void {
  Object.defineProperty(obj, key, { get: read, enumerable: true, configurable: true });
}

/** A log read whole in one block of at most this many bytes has its fields held (see below). */
const HOLD_BYTES = 256 * 1024;

// What a code says (its last two bits): where the value is.
const IN_LOG = 0;
const TEXT = 1;
const HELD = 2;

/** A fresh copy of a parsed JSON value (strings are immutable and shared; `__proto__` keys kept). */
function copyJson(x: unknown): unknown {
  if (typeof x !== "object" || x === null) return x;
  if (Array.isArray(x)) return x.map(copyJson);
  const out: Record<string, unknown> = {};
  const o = x as Record<string, unknown>;
  for (const k in o) put(out, k, copyJson(o[k]));
  return out;
}

/**
 * Fields of events kept for rows (a call's arguments, an output). From a log file, each is where
 * its event's line starts, read back when asked for; but a log read whole in one small block (most
 * sessions: at most `HOLD_BYTES`) holds the parsed values themselves, since they are few: eval,
 * which folds thousands of such logs and reads ~20 arguments of each, parsed a whole line per read
 * (~2.6 µs; a copy of the held value is ~0.2 µs). Events from elsewhere keep them as JSON text.
 * `add` returns a code the caller keeps in its own row (the kind in its last two bits, so a row
 * needs no second field); `get` gives a fresh value on every read.
 */
export class KeptValues {
  /** The log the events come from (set when the source is a file). */
  lines: LineAt | undefined;
  private readonly texts = new TextColumn();
  private readonly held: unknown[] = [];
  private hold = false;

  /**
   * The log's bytes from `offset`, as the reader read them (see `RolloutSink.block`): a whole small
   * log has its fields held from now on; another block is handed to the line reader, so that its
   * lines are read back without reading the file again.
   */
  block(bytes: Uint8Array, offset: number): void {
    this.hold = this.lines !== undefined && offset === 0 && bytes.length <= HOLD_BYTES;
    if (!this.hold) this.lines?.seed(bytes, offset);
  }

  /** Keep `value`, the field of an event whose line starts at `line` (when known); its code. */
  add(line: number | undefined, value: unknown): number {
    if (line !== undefined && this.lines) {
      if (this.hold) return (this.held.push(value) - 1) * 4 + HELD;
      return line * 4 + IN_LOG;
    }
    return this.texts.add(JSON.stringify(value)) * 4 + TEXT;
  }

  /** Whether values added now are read back from the log when asked for (not kept parsed). */
  get leftInLog(): boolean {
    return this.lines !== undefined && !this.hold;
  }

  /** Whether the value of `code` is read back from the log (rather than kept whole). */
  inLog(code: number): boolean {
    return code % 4 === IN_LOG;
  }

  /** The value of `code`: field `key` of the `type` event of `seq`. */
  get(code: number, type: RolloutEvent["type"], seq: number, key: string): unknown {
    const kind = code % 4;
    const i = (code - kind) / 4;
    if (kind === IN_LOG) return fieldAt(this.lines!, i, type, seq, key);
    if (kind === HELD) return copyJson(this.held[i]);
    return JSON.parse(this.texts.get(i));
  }
}
