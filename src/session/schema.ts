/**
 * The session schemas (the persisted shapes live in storage/records.ts; re-exported here for the
 * session API) and the shape of messages given from outside (`session append` input): ids and
 * timestamps may be left out and are filled in.
 */
import * as v from "valibot";
import { IdSchema, PartSchema } from "../storage/records.ts";
import { isCount, timeMs } from "../util/number-schemas.ts";

export {
  MessageSchema,
  type Part,
  PartSchema,
  SESSION_STATUSES,
  type SessionMeta,
  SessionMetaSchema,
  type SessionStatus,
  type StoredMessage,
  type Usage,
  UsageSchema,
} from "../storage/records.ts";

/** The roles a message may have; anything else is rejected. */
export const ROLES = ["user", "assistant", "system"] as const;

/** A JSON object (not an array, not null, not a class instance): what a tool call's args must be. */
export const isPlainObject = (x: unknown): x is Record<string, unknown> =>
  x !== null && typeof x === "object" && !Array.isArray(x) && Object.getPrototypeOf(x) === Object.prototype;

/**
 * A part as given by a caller: a tool call's `args` must be a JSON object, what providers take as a
 * tool's input. A string or an array is refused here, not wrapped or passed on (`"rm -rf /"` given
 * as args is a caller's bug to see at once). Messages already stored are read as they are.
 */
const PartInputSchema = v.pipe(
  v.looseObject({
    ...PartSchema.entries,
    tool: v.optional(
      v.looseObject({
        name: v.string(),
        args: v.optional(
          v.custom<Record<string, unknown>>(
            isPlainObject,
            (issue) =>
              `tool args must be a JSON object, not ${Array.isArray(issue.input) ? "an array" : issue.input === null ? "null" : typeof issue.input}`,
          ),
        ),
      }),
    ),
  }),
  // A text or code part says something: its words go in `content` (one given as `text`, Anthropic's
  // name, was stored and then shown blank).
  v.check(
    (p) => (p.type !== "text" && p.type !== "code") || typeof p.content === "string",
    (issue) =>
      `a ${(issue.input as { type?: string }).type} part's words go in "content"${(issue.input as { text?: unknown }).text !== undefined ? ' (not "text")' : ""}`,
  ),
);

/**
 * A token count a caller gives: a whole number ≥ 0 within the safe range. The store adds them to
 * the session's totals, which `session import` requires to be such (a -5 was stored, exported, and
 * the export then refused). Checked where messages come in from callers, not in the store: a
 * message an older version stored with another count is still compacted, migrated and copied.
 */
const tokenCount = v.pipe(
  v.number(),
  v.check(
    (n) => isCount(n),
    (issue) => `a token count must be a whole number ≥ 0 (got ${String(issue.input)})`,
  ),
);

/** A message's usage as a caller gives it: its token counts whole numbers ≥ 0. */
export const UsageInputSchema = v.looseObject({
  inputTokens: v.optional(tokenCount),
  outputTokens: v.optional(tokenCount),
  cacheReadInputTokens: v.optional(tokenCount),
  cacheCreationInputTokens: v.optional(tokenCount),
  reasoningTokens: v.optional(tokenCount),
});

/** A message as given by a caller: `id` and `timestamp` optional. */
export const MessageInputSchema = v.looseObject({
  id: v.optional(IdSchema),
  role: v.picklist(ROLES, `role must be one of ${ROLES.join(", ")}`),
  parts: v.array(PartInputSchema),
  timestamp: v.optional(timeMs()),
  interrupted: v.optional(v.boolean()),
  usage: v.optional(UsageInputSchema),
  responseId: v.optional(v.string()),
  synthetic: v.optional(v.string()),
});
export type MessageInput = v.InferOutput<typeof MessageInputSchema>;
