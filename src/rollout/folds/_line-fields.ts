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
 * Fields of one log read back on demand. `define(obj, key, …)` makes `key` of `obj` an enumerable
 * property read back from the event's line on every read (then passed through `map`): it reads,
 * spreads, serialises and compares like a plain field, fresh each time. Where the line is lives on
 * the object under two hidden (symbol, non-enumerable) keys, and every object shares one getter per
 * key: a closure per field cost ~250 bytes (the function, its scope and the captured record), which
 * on a replay of 322,000 calls was most of its memory.
 */
export function logFields(lines: LineAt, map: Partial<Record<string, (value: unknown) => unknown>> = {}) {
  const keys = new Map<string, { get: () => unknown; offset: symbol; seq: symbol; type: symbol }>();
  const keyFor = (key: string) => {
    let k = keys.get(key);
    if (k) return k;
    const offset = Symbol(`${key} line`);
    const seq = Symbol(`${key} seq`);
    const type = Symbol(`${key} type`);
    const f = map[key];
    const get = function (this: Record<symbol, unknown>) {
      const value = fieldAt(
        lines,
        this[offset] as number,
        this[type] as RolloutEvent["type"],
        this[seq] as number,
        key,
      );
      return f ? f(value) : value;
    };
    k = { get, offset, seq, type };
    keys.set(key, k);
    return k;
  };
  return {
    lines,
    define(obj: object, key: string, type: RolloutEvent["type"], offset: number, seq: number): void {
      const k = keyFor(key);
      Object.defineProperty(obj, k.offset, { value: offset });
      Object.defineProperty(obj, k.seq, { value: seq });
      Object.defineProperty(obj, k.type, { value: type });
      Object.defineProperty(obj, key, { get: k.get, enumerable: true, configurable: true });
    },
  };
}

export type LogFields = ReturnType<typeof logFields>;
