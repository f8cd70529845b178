/**
 * The persisted shapes: session meta, messages and the rollout event envelope. Storage owns them
 * (everything above it reads and writes these); every line read from disk is validated against them.
 * Objects are "loose": fields a later version adds survive a round-trip through an older one.
 */
import * as v from "valibot";
import { LockOwnerSchema } from "../util/lock.ts";
import { finiteNumber } from "../util/number-schemas.ts";

/*
 * Times are finite numbers here (what reads accept: data an older version stored reads back); new
 * records are also held to what a `Date` can hold where they enter (`_validate.ts`, `_events.ts`).
 */

/** Session ids and message ids: no path separators, no `..`, no NUL, at most 128 characters. */
export const IdSchema = v.pipe(
  v.string(),
  v.minLength(1, "id must not be empty"),
  v.maxLength(128, "id must be at most 128 characters"),
  v.regex(/^[A-Za-z0-9._:@+=-]+$/, "id may contain only letters, digits and . _ : @ + = -"),
  v.check((s) => s !== "." && s !== "..", "id must not be . or .."),
  v.check((s) => !s.includes(".."), "id must not contain '..'"),
);

/**
 * Session ids: an id, and not starting with `.` — a session's id names its directory, and the files
 * adapter keeps its temporary directories under dot-names and skips them, so a `.hidden` session
 * would be stored yet never listed or migrated. Checked wherever a meta is (every adapter).
 */
export const SessionIdSchema = v.pipe(
  IdSchema,
  v.check((s) => !s.startsWith("."), "session id must not start with '.' (dot-names are reserved)"),
);

export const SESSION_STATUSES = ["idle", "running", "interrupted", "archived", "deleted"] as const;
export type SessionStatus = (typeof SESSION_STATUSES)[number];

export const TokenTotalsSchema = v.object({
  input: finiteNumber(),
  output: finiteNumber(),
  cacheRead: finiteNumber(),
  cacheWrite: finiteNumber(),
  reasoning: v.optional(finiteNumber()),
});
export type TokenTotals = v.InferOutput<typeof TokenTotalsSchema>;

export const SessionMetaSchema = v.looseObject({
  id: SessionIdSchema,
  title: v.string(),
  /** Where the title came from: set by the user, generated, the first prompt, or an import. */
  titleSource: v.optional(v.picklist(["user", "generated", "prompt", "import"])),
  projectPath: v.string(),
  provider: v.optional(v.string()),
  model: v.optional(v.string()),
  status: v.picklist(SESSION_STATUSES),
  /** The status before archive/delete, restored by unarchive/restore. */
  previousStatus: v.optional(v.picklist(SESSION_STATUSES)),
  /** An archived session deleted: the status it had before it was archived (restore gives it back). */
  archivedFrom: v.optional(v.picklist(SESSION_STATUSES)),
  createdAt: finiteNumber(),
  updatedAt: finiteNumber(),
  lastTurnAt: v.optional(finiteNumber()),
  turnCount: finiteNumber(),
  messageCount: finiteNumber(),
  parentId: v.optional(IdSchema),
  /** For forks at a point: the message the fork was taken at. */
  forkedAt: v.optional(v.string()),
  tokens: v.optional(TokenTotalsSchema),
  tags: v.optional(v.array(v.string())),
  pinned: v.optional(v.boolean()),
  unread: v.optional(v.boolean()),
  /** The process that has the session `running`, for crash recovery. */
  owner: v.optional(v.object({ pid: finiteNumber(), start: v.nullable(finiteNumber()), host: v.string() })),
  /** A session recreated from an export document (`session import`): the id it had, and when it was exported. */
  /** `incomplete`: set while an import writes the rest (its log); a process killed meanwhile left it. */
  copiedFrom: v.optional(
    v.object({
      id: IdSchema,
      exportedAt: finiteNumber(),
      incomplete: v.optional(v.literal(true)),
      /** The process making the copy, while `incomplete`. */
      by: v.optional(LockOwnerSchema),
    }),
  ),
  /** Where an imported session came from. */
  source: v.optional(v.looseObject({ agent: v.string(), id: v.string(), path: v.optional(v.string()) })),
  /** Goal tracking (thread store). */
  goal: v.optional(
    v.object({ text: v.string(), status: v.picklist(["pending", "active", "completed", "failed"]) }),
  ),
  /** The latest provider response that carried `usage` (guards the one-usage-per-response rule). */
  usageResponseId: v.optional(v.string()),
  /** A title generation in flight (`session/title-generate.ts`): its token, so an older answer
   * or one that lands after a rename is not written. */
  titleGeneration: v.optional(v.object({ id: v.string(), startedAt: finiteNumber() })),
  /** The latest compaction summary. */
  summary: v.optional(v.looseObject({ text: v.string(), createdAt: finiteNumber() })),
});
export type SessionMeta = v.InferOutput<typeof SessionMetaSchema>;

export const UsageSchema = v.looseObject({
  inputTokens: v.optional(finiteNumber()),
  outputTokens: v.optional(finiteNumber()),
  cacheReadInputTokens: v.optional(finiteNumber()),
  cacheCreationInputTokens: v.optional(finiteNumber()),
  reasoningTokens: v.optional(finiteNumber()),
});
export type Usage = v.InferOutput<typeof UsageSchema>;

export const PartSchema = v.looseObject({
  type: v.picklist(["text", "code", "tool", "image"]),
  content: v.optional(v.string()),
  language: v.optional(v.string()),
  tool: v.optional(v.looseObject({ name: v.string(), args: v.optional(v.unknown()) })),
  /** Tool output, on the same part as the call. */
  result: v.optional(v.unknown()),
  /** The tool failed (error result). */
  failed: v.optional(v.boolean()),
  /** The provider's own tool call id, when known (imports keep it). */
  callId: v.optional(v.string()),
  data: v.optional(v.string()),
  mediaType: v.optional(v.string()),
  altText: v.optional(v.string()),
});
export type Part = v.InferOutput<typeof PartSchema>;

export const MessageSchema = v.looseObject({
  id: IdSchema,
  role: v.picklist(["user", "assistant", "system"]),
  parts: v.array(PartSchema),
  timestamp: finiteNumber(),
  interrupted: v.optional(v.boolean()),
  /** Token usage of one provider response: on at most one message per `responseId`. */
  usage: v.optional(UsageSchema),
  /** Which provider response produced this message (several messages may share one). */
  responseId: v.optional(v.string()),
  synthetic: v.optional(v.string()),
});
export type StoredMessage = v.InferOutput<typeof MessageSchema>;

/**
 * The rollout line envelope (freecode's flat shape): the type's own fields sit beside these.
 * Storage does not interpret `type`; `rollout/events.ts` validates the full catalogue.
 */
export const EventEnvelopeSchema = v.looseObject({
  type: v.pipe(v.string(), v.minLength(1)),
  id: v.string(),
  seq: v.pipe(v.number(), v.integer(), v.minValue(1)),
  aggregateID: v.string(),
  timestamp: finiteNumber(),
});
export type EventRecord = v.InferOutput<typeof EventEnvelopeSchema> & Record<string, unknown>;

/** An event before it is stored: storage assigns `seq` (and `id`/`aggregateID` when missing). */
export type EventDraft = Omit<EventRecord, "seq" | "id" | "aggregateID" | "timestamp"> & {
  id?: string;
  timestamp?: number;
};
