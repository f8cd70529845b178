/**
 * The thread store's shapes: a relational view of sessions (threads → turns → tool calls), derived
 * from the message log and the rollout log and always rebuildable from them (SPEC "Three shapes on
 * disk"). Thread ids are session ids.
 */
import * as v from "valibot";

export const GOAL_STATUSES = ["pending", "active", "completed", "failed"] as const;
export type GoalStatus = (typeof GOAL_STATUSES)[number];

export const ToolCallSchema = v.object({
  /** 1-based position of the call within its turn. */
  sequence: v.number(),
  name: v.string(),
  args: v.optional(v.unknown()),
  callId: v.optional(v.string()),
  result: v.optional(v.unknown()),
  failed: v.optional(v.boolean()),
  /** Who refused it, when the rollout says it was denied (then it never ran). */
  deniedBy: v.optional(v.string()),
  durationMs: v.optional(v.number()),
  timestamp: v.number(),
});
export type ToolCall = v.InferOutput<typeof ToolCallSchema>;

export const TURN_OUTCOMES = ["answered", "interrupted", "no_response"] as const;

export const TurnSchema = v.object({
  /** 1-based. */
  number: v.number(),
  prompt: v.string(),
  response: v.optional(v.string()),
  startedAt: v.number(),
  endedAt: v.number(),
  outcome: v.picklist(TURN_OUTCOMES),
  /** The provider error the turn ended on (after its last response), with its message. */
  error: v.optional(v.string()),
  messageIds: v.array(v.string()),
  toolCalls: v.array(ToolCallSchema),
});
export type Turn = v.InferOutput<typeof TurnSchema>;

export const ThreadSchema = v.object({
  id: v.string(),
  title: v.string(),
  projectPath: v.string(),
  provider: v.optional(v.string()),
  model: v.optional(v.string()),
  status: v.string(),
  createdAt: v.number(),
  updatedAt: v.number(),
  lastTurnAt: v.optional(v.number()),
  turnCount: v.number(),
  messageCount: v.number(),
  toolCallCount: v.number(),
  parentId: v.optional(v.string()),
  goal: v.optional(v.string()),
  goalStatus: v.optional(v.picklist(GOAL_STATUSES)),
});
export type Thread = v.InferOutput<typeof ThreadSchema>;

/** What the derived rows were built from: when it changes, the thread is rebuilt. */
export interface ThreadSource {
  updatedAt: number;
  messageCount: number;
  /** The last rollout `seq` folded in (0 without events). */
  lastSeq: number;
  /** The meta as JSON hash input (title, status, goal edits do not move `updatedAt`). */
  metaHash: string;
  /**
   * The adapter's change stamp of the rollout log when it was read (`eventLogStamp`): an equal
   * stamp means an unchanged log, with no need to read it.
   */
  eventStamp?: string;
}

export interface DerivedThread {
  thread: Thread;
  turns: Turn[];
  /** The title is a placeholder (a rollout-only session has no meta): search leaves it out. */
  untitled?: boolean;
}

const count = v.pipe(v.number(), v.safeInteger(), v.minValue(0));

export const ThreadFilterSchema = v.object({
  projectPath: v.optional(v.string()),
  status: v.optional(v.string()),
  limit: v.optional(count),
  offset: v.optional(count),
});
export type ThreadFilter = v.InferOutput<typeof ThreadFilterSchema>;

/** One turn as `session show --turns` prints it. */
export interface TurnItem {
  number: number;
  prompt: string;
  tools: {
    name: string;
    args?: unknown;
    failed?: boolean;
    deniedBy?: string;
    durationMs?: number;
    /** Neither a result nor an outcome was recorded: it never finished (or was cut off). */
    pending?: boolean;
  }[];
  response?: string;
  outcome: Turn["outcome"];
  /** The provider error the turn ended on, if it did. */
  error?: string;
  startedAt: number;
  durationMs: number;
}
