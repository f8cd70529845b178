/**
 * Fields a fold leaves in the log: an event read from a log file can be found again by where its
 * line starts (`util/line-at.ts`), so a fold keeps that offset instead of a copy of a large field
 * (tool arguments, outputs) and reads the field back when it is asked for. The line read back is
 * checked to be the same event (`type` and `seq`): a log changed since it was read is an error
 * (`conflict`), never another event's field.
 */
import { conflict } from "../../errors.ts";
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

/**
 * Fields of events kept for rows (a call's arguments, an output): each as where its event's line
 * starts when the events come from a log file (`lines` set), else as JSON text. `add` returns a
 * code the caller keeps in its own row (an even number for a line's place, odd for a text, so a
 * row needs no second field); `get` gives a fresh value on every read.
 */
export class KeptValues {
  /** The log the events come from (set when the source is a file). */
  lines: LineAt | undefined;
  private readonly texts = new TextColumn();

  /** Keep `value`, the field of an event whose line starts at `line` (when known); its code. */
  add(line: number | undefined, value: unknown): number {
    if (line !== undefined && this.lines) return line * 2;
    return this.texts.add(JSON.stringify(value)) * 2 + 1;
  }

  /** Whether the value of `code` is read back from the log (rather than kept as text). */
  inLog(code: number): boolean {
    return code % 2 === 0;
  }

  /** The value of `code`: field `key` of the `type` event of `seq`. */
  get(code: number, type: RolloutEvent["type"], seq: number, key: string): unknown {
    if (code % 2 === 0) return fieldAt(this.lines!, code / 2, type, seq, key);
    return JSON.parse(this.texts.get((code - 1) / 2));
  }
}
