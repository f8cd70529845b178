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
import { MAX_JSON_DEPTH } from "../util/json-depth.ts";
import { jsonBytesOver, mib } from "../util/json-size.ts";

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

/** `message`, unless its JSON line is over `MAX_MESSAGE_BYTES` (`index` names it in a batch). */
export function checkMessageSize<M extends { id: string }>(message: M, index?: number): M {
  const field = index === undefined ? undefined : `[${index}]`;
  const bytes = jsonBytesOver(message, MAX_MESSAGE_BYTES);
  if (bytes === undefined) return message;
  if (bytes === "too deep")
    throw badInput(`message ${message.id} nests more than ${MAX_JSON_DEPTH} levels deep`, { field });
  throw badInput(`message ${message.id} is ${mib(bytes)}, over the ${mib(MAX_MESSAGE_BYTES)} limit`, {
    field,
  });
}
