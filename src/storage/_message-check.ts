/**
 * A hand-written check equivalent to `MessageSchema` for the hot paths (loading a 100k-message
 * history, appending in a loop): it only answers yes or no, ~10× faster than a schema parse. On
 * "no", callers run the valibot schema to get the precise error; on "yes" the value is used as is.
 * `test/storage/message-check.test.ts` holds the two to the same verdicts.
 *
 * Also the size limit every adapter applies on write (through `checkMessages`): a message whose
 * JSON line is over `MAX_MESSAGE_BYTES` is refused, whatever the adapter stores it as.
 */
import { badInput } from "../errors.ts";
import { MAX_JSON_DEPTH, nestsAtMost } from "../util/json-depth.ts";

const ROLES = new Set(["user", "assistant", "system"]);
const PART_TYPES = new Set(["text", "code", "tool", "image"]);
const ID = /^[A-Za-z0-9._:@+=-]+$/;
const USAGE_FIELDS = [
  "inputTokens",
  "outputTokens",
  "cacheReadInputTokens",
  "cacheCreationInputTokens",
  "reasoningTokens",
];
const PART_STRINGS = ["content", "language", "callId", "data", "mediaType", "altText"];

// Like valibot objects: arrays are objects too (only fields are checked).
const isObject = (x: unknown): x is Record<string, unknown> => typeof x === "object" && x !== null;
const optString = (x: unknown) => x === undefined || typeof x === "string";
const optNumber = (x: unknown) => x === undefined || Number.isFinite(x);

/** Whether `id` passes `IdSchema`. */
export function isValidId(id: unknown): boolean {
  return typeof id === "string" && id.length >= 1 && id.length <= 128 && ID.test(id) && !id.includes("..");
}

function partOk(p: unknown): boolean {
  if (!isObject(p) || typeof p.type !== "string" || !PART_TYPES.has(p.type)) return false;
  for (const f of PART_STRINGS) if (!optString(p[f])) return false;
  if (p.failed !== undefined && typeof p.failed !== "boolean") return false;
  if (p.tool !== undefined && (!isObject(p.tool) || typeof p.tool.name !== "string")) return false;
  return true;
}

/** Whether `x` passes `MessageSchema` (same verdict, no error detail). */
export function isValidMessage(x: unknown): boolean {
  if (!isObject(x) || !isValidId(x.id) || typeof x.role !== "string" || !ROLES.has(x.role)) return false;
  if (!Number.isFinite(x.timestamp) || !Array.isArray(x.parts)) return false;
  for (const p of x.parts) if (!partOk(p)) return false;
  if (x.interrupted !== undefined && typeof x.interrupted !== "boolean") return false;
  if (!optString(x.responseId) || !optString(x.synthetic)) return false;
  if (x.usage !== undefined) {
    if (!isObject(x.usage)) return false;
    for (const f of USAGE_FIELDS) if (!optNumber(x.usage[f])) return false;
  }
  return true;
}

/** The largest message the store accepts: its JSON line, in UTF-8 bytes (a 9 MiB line is refused). */
export const MAX_MESSAGE_BYTES = 8 * 1024 * 1024;

/**
 * An upper bound of the UTF-8 bytes of `JSON.stringify(x)`, or Infinity once past `budget` (or for
 * what is costly to bound: deep nesting, `toJSON`). It spares the append path a second stringify
 * of every message; only a message that might be too large is stringified to be measured.
 */
function jsonBytesAtMost(x: unknown, budget: number, depth = 0): number {
  switch (typeof x) {
    case "string":
      return x.length * 6 + 2; // a UTF-16 unit is at most 6 bytes of JSON (`\u001f`)
    case "number":
      return 24; // -2.2250738585072014e-308
    case "object": {
      if (x === null) return 4;
      if (depth > 32 || typeof (x as { toJSON?: unknown }).toJSON === "function") return Infinity;
      let n = 2;
      if (Array.isArray(x)) {
        for (const item of x)
          if ((n += 1 + jsonBytesAtMost(item, budget - n, depth + 1)) > budget) return Infinity;
      } else {
        // `for…in` with an own-key test, not `Object.entries`: no array of pairs per object (this
        // runs for every message appended; it cost more than the message's stringify).
        const o = x as Record<string, unknown>;
        for (const k in o) {
          if (!Object.hasOwn(o, k)) continue;
          n += k.length * 6 + 4 + jsonBytesAtMost(o[k], budget - n, depth + 1);
          if (n > budget) return Infinity;
        }
      }
      return n;
    }
    case "bigint":
      return Infinity;
    default:
      return 5; // true, false; undefined and functions are left out or `null`
  }
}

const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1).replace(/\.0$/, "")} MiB`;

/** `message`, unless its JSON line is over `MAX_MESSAGE_BYTES` (`index` names it in a batch). */
export function checkMessageSize<M extends { id: string }>(message: M, index?: number): M {
  if (jsonBytesAtMost(message, MAX_MESSAGE_BYTES) <= MAX_MESSAGE_BYTES) return message;
  if (!nestsAtMost(message))
    throw badInput(`message ${message.id} nests more than ${MAX_JSON_DEPTH} levels deep`, {
      field: index === undefined ? undefined : `[${index}]`,
    });
  const bytes = Buffer.byteLength(JSON.stringify(message));
  if (bytes <= MAX_MESSAGE_BYTES) return message;
  throw badInput(`message ${message.id} is ${mib(bytes)}, over the ${mib(MAX_MESSAGE_BYTES)} limit`, {
    field: index === undefined ? undefined : `[${index}]`,
  });
}
