/**
 * The rollout event catalogue: one valibot variant union on `type`, types inferred from it.
 * Lines keep freecode's flat on-disk shape — `type`, `id`, `seq`, `aggregateID`, `timestamp` plus the
 * type's own fields — so an existing freecode `events.jsonl` reads as-is. Variants are loose objects:
 * fields a newer writer adds are kept. Documented field by field in docs/events.md.
 */
import * as v from "valibot";

// Every number is finite: JSON has no Infinity or NaN, `JSON.stringify` writes them as null, and the
// line could no longer be read back.
const finite = () => v.pipe(v.number(), v.finite());
const base = {
  id: v.pipe(v.string(), v.minLength(1)),
  seq: v.pipe(v.number(), v.safeInteger(), v.minValue(1)),
  aggregateID: v.string(),
  // Finite, as read back; a new event's time is held to what a Date can hold where it is stored.
  timestamp: finite(),
};
const turnId = v.string();
// Counts and times taken are any finite number here, as read back: what a new event must hold
// (whole counts ≥ 0, times ≥ 0) is checked where events are written (`event-numbers.ts`), so a log
// an older version wrote still reads.
const num = finite();
const optNum = v.optional(finite());

/** Who refused a tool call. */
export const DENY_SOURCES = [
  "hook",
  "mode",
  "rule",
  "permission",
  "permission-hook",
  "user",
  "role",
] as const;
export type DenySource = (typeof DENY_SOURCES)[number];

/** Why a model request failed: went silent, was cancelled, or the provider returned an error. */
export const MODEL_ERROR_KINDS = ["stall", "abort", "provider"] as const;
export type ModelErrorKind = (typeof MODEL_ERROR_KINDS)[number];

const ev = <T extends string, E extends v.ObjectEntries>(type: T, entries: E) =>
  v.looseObject({ type: v.literal(type), ...base, ...entries });

export const TurnStarted = ev("turn.started", { turnId });
export const TurnAborted = ev("turn.aborted", { turnId, reason: v.optional(v.string()) });
export const FunctionCall = ev("function.call", {
  turnId: v.optional(turnId),
  tool: v.string(),
  args: v.optional(v.unknown()),
  callId: v.optional(v.string()),
});
export const FunctionOutput = ev("function.output", {
  turnId: v.optional(turnId),
  tool: v.string(),
  /** Output summary (stdout or error text); may be omitted or truncated by the writer. */
  output: v.optional(v.unknown()),
  failed: v.optional(v.boolean()),
  duration_ms: optNum,
  callId: v.optional(v.string()),
});
export const FunctionDenied = ev("function.denied", {
  turnId: v.optional(turnId),
  tool: v.string(),
  args: v.optional(v.unknown()),
  source: v.picklist(DENY_SOURCES),
  reason: v.optional(v.string()),
  callId: v.optional(v.string()),
});
export const CompactOccurred = ev("compact.occurred", { beforeTokens: num, afterTokens: num });
export const SubagentStart = ev("subagent.start", { subagentId: v.string(), task: v.optional(v.string()) });
export const SubagentStop = ev("subagent.stop", { subagentId: v.string(), result: v.optional(v.unknown()) });
export const SkillInvoked = ev("skill.invoked", { skillName: v.string(), implicit: v.optional(v.boolean()) });
export const HookTriggered = ev("hook.triggered", {
  hookName: v.string(),
  hookEvent: v.optional(v.string()),
  blocked: v.optional(v.boolean()),
});
export const HookBlocked = ev("hook.blocked", { hookName: v.string(), reason: v.optional(v.string()) });
export const ContextOverflow = ev("context.overflow", { beforeTokens: num });
export const ParseError = ev("parse.error", {
  turnId: v.optional(turnId),
  parser: v.optional(v.string()),
  error: v.string(),
});
export const ModelRequest = ev("model.request", {
  turnId,
  provider: v.string(),
  model: v.string(),
  messageCount: optNum,
  toolCount: optNum,
  promptChars: optNum,
  streamed: v.optional(v.boolean()),
});
export const ModelFirstToken = ev("model.first_token", { turnId, ttft_ms: num });
export const ModelResponse = ev("model.response", {
  turnId,
  provider: v.string(),
  model: v.string(),
  /**
   * The provider's own id for the response (Anthropic `msg_…`), where an importer has it: a response
   * found in two sessions (history copied into a fork) is counted once in usage over all sessions.
   */
  responseId: v.optional(v.string()),
  echoedModel: v.optional(v.string()),
  duration_ms: optNum,
  ttft_ms: optNum,
  inputTokens: optNum,
  outputTokens: optNum,
  cacheReadTokens: optNum,
  cacheWriteTokens: optNum,
  reasoningTokens: optNum,
  /** Names of the tools the response asked for. */
  toolCalls: v.optional(v.array(v.string())),
  textChars: optNum,
  thinkingChars: optNum,
  /**
   * What the agent itself recorded this response cost, in USD (OpenCode's per-step `cost`), where an
   * importer has it: `freecode usage` uses it for a model with no price configured.
   */
  costUsd: v.optional(v.pipe(v.number(), v.finite(), v.minValue(0))),
});
export const ModelError = ev("model.error", {
  turnId,
  provider: v.string(),
  model: v.string(),
  duration_ms: optNum,
  kind: v.picklist(MODEL_ERROR_KINDS),
  error: v.optional(v.string()),
});
export const RedirectTriggered = ev("redirect.triggered", {
  turnId: v.optional(turnId),
  reason: v.optional(v.string()),
  evidenceEventIds: v.optional(v.array(v.string())),
  directionCount: optNum,
  directionChars: optNum,
  latency_ms: optNum,
  inputTokens: optNum,
  outputTokens: optNum,
});
export const RedirectSkipped = ev("redirect.skipped", { turnId: v.optional(turnId), reason: v.string() });
export const SessionStarted = ev("session.started", {
  provider: v.optional(v.string()),
  model: v.optional(v.string()),
  projectPath: v.optional(v.string()),
  /** Why the session (re)started: new, resume, fork, import. */
  reason: v.optional(v.string()),
  parentId: v.optional(v.string()),
});
export const SessionEnded = ev("session.ended", {
  reason: v.optional(v.string()),
  status: v.optional(v.string()),
});
export const CheckpointCaptured = ev("checkpoint.captured", {
  entryId: v.optional(v.string()),
  snapshot: v.string(),
  durationMs: optNum,
});
export const CheckpointRestored = ev("checkpoint.restored", {
  entryId: v.optional(v.string()),
  snapshot: v.string(),
  filesChanged: optNum,
  durationMs: optNum,
});
export const CheckpointSkipped = ev("checkpoint.skipped", { reason: v.string() });

/** The whole catalogue. */
export const RolloutEventSchema = v.variant("type", [
  TurnStarted,
  TurnAborted,
  FunctionCall,
  FunctionOutput,
  FunctionDenied,
  CompactOccurred,
  SubagentStart,
  SubagentStop,
  SkillInvoked,
  HookTriggered,
  HookBlocked,
  ContextOverflow,
  ParseError,
  ModelRequest,
  ModelFirstToken,
  ModelResponse,
  ModelError,
  RedirectTriggered,
  RedirectSkipped,
  SessionStarted,
  SessionEnded,
  CheckpointCaptured,
  CheckpointRestored,
  CheckpointSkipped,
]);

export type RolloutEvent = v.InferOutput<typeof RolloutEventSchema>;
export type RolloutEventType = RolloutEvent["type"];
/** One event type by name, e.g. `EventOf<"function.call">`. */
export type EventOf<T extends RolloutEventType> = Extract<RolloutEvent, { type: T }>;

/** Every type name in the catalogue. */
export const EVENT_TYPES: readonly RolloutEventType[] = RolloutEventSchema.options.map(
  (o) => o.entries.type.literal,
) as RolloutEventType[];

const known = new Set<string>(EVENT_TYPES);
/** Fields the store fills in: an event as a writer hands it over (`id`, `timestamp` optional). */
type Envelope = "id" | "seq" | "aggregateID" | "timestamp";
export type EventInput = RolloutEvent extends infer E
  ? E extends RolloutEvent
    ? { [K in keyof E as K extends Envelope ? never : K]: E[K] } & { id?: string; timestamp?: number }
    : never
  : never;

/** Whether `type` is in the catalogue (newer freecode logs carry types we do not fold). */
export function isKnownEventType(type: string): type is RolloutEventType {
  return known.has(type);
}
