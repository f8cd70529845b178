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
 * Make `key` of `obj` an enumerable property read back from the log on every read (`fieldAt`, then
 * `map`): it reads, spreads, serialises and compares like a plain field, fresh each time.
 */
export function fieldFromLog(
  obj: object,
  key: string,
  at: { lines: LineAt; offset: number; type: RolloutEvent["type"]; seq: number },
  map?: (value: unknown) => unknown,
): void {
  const get = () => {
    const value = fieldAt(at.lines, at.offset, at.type, at.seq, key);
    return map ? map(value) : value;
  };
  Object.defineProperty(obj, key, { get, enumerable: true, configurable: true });
}
