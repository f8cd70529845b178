/**
 * The session schemas (the persisted shapes live in storage/records.ts; re-exported here for the
 * session API) and the shape of messages given from outside (`session append` input): ids and
 * timestamps may be left out and are filled in.
 */
import * as v from "valibot";
import { IdSchema, PartSchema } from "../storage/records.ts";
import { isCount, timeMs } from "../util/number-schemas.ts";
import { closest } from "../util/unknown-field.ts";

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
  // A tool's output goes in `result`, its arguments in `tool.args`: given under other APIs' names
  // (`output`, `input`), they were stored and never read (`session show` said "no result", search
  // did not find it).
  v.check(
    (p) => p.type !== "tool" || (p.output === undefined && p.content === undefined),
    (issue) =>
      `a tool part's output goes in "result" (not "${(issue.input as { output?: unknown }).output !== undefined ? "output" : "content"}")`,
  ),
  v.check(
    (p) => p.tool?.input === undefined || p.tool.args !== undefined,
    'a tool call\'s arguments go in "tool.args" (not "tool.input")',
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

const TOKEN_COUNTS = [
  "inputTokens",
  "outputTokens",
  "cacheReadInputTokens",
  "cacheCreationInputTokens",
  "reasoningTokens",
] as const;

/** A count's name without case, `_` or `-`: `input_tokens` is `inputTokens`. */
const flat = (key: string) => key.toLowerCase().replace(/[_-]/g, "");
/** Other APIs' and the rollout's names for the counts (flattened). */
const COUNT_ALIASES: Record<string, (typeof TOKEN_COUNTS)[number]> = {
  prompttokens: "inputTokens",
  completiontokens: "outputTokens",
  cachereadtokens: "cacheReadInputTokens",
  cachedtokens: "cacheReadInputTokens",
  cachewritetokens: "cacheCreationInputTokens",
  cachecreationtokens: "cacheCreationInputTokens",
};
const countFor = (key: string) =>
  TOKEN_COUNTS.find((k) => flat(k) === flat(key)) ?? COUNT_ALIASES[flat(key)] ?? closest(key, TOKEN_COUNTS);

/** A message's token counts, whole numbers ≥ 0; other keys are kept as they are. What an export
 * document's messages are held to: one an older version wrote keeps the keys it was given. */
export const UsageCountsSchema = v.looseObject(
  Object.fromEntries(TOKEN_COUNTS.map((k) => [k, v.optional(tokenCount)])) as Record<
    (typeof TOKEN_COUNTS)[number],
    v.OptionalSchema<typeof tokenCount, undefined>
  >,
);

/**
 * A message's usage as a caller gives it: its token counts whole numbers ≥ 0, under their names.
 * Other keys are kept as they are (a cost, a provider's own figures), but not a token count under
 * another name (`cacheReadTokens`, the rollout's; `input_tokens`, Anthropic's): it was stored,
 * counted nowhere, and barred the response's real usage for good (a response carries usage once).
 */
export const UsageInputSchema = v.pipe(
  UsageCountsSchema,
  v.rawCheck(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    const usage = dataset.value as Record<string, unknown>;
    for (const key of Object.keys(usage)) {
      // A total is derived, not a count of its own: kept.
      if (
        !/tokens?$/i.test(key) ||
        (TOKEN_COUNTS as readonly string[]).includes(key) ||
        flat(key) === "totaltokens"
      )
        continue;
      const hint = countFor(key);
      addIssue({
        message: `unknown token count "${key}"${hint ? ` (did you mean ${hint}?)` : ""}: the counts are ${TOKEN_COUNTS.join(", ")}`,
        path: [{ type: "object", origin: "value", input: usage, key, value: usage[key] }],
      });
      return;
    }
  }),
);

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
