/**
 * The Trace: what the trace fold answers about one session's rollout, and what the eval harness
 * asserts over. Durations are milliseconds; times are epoch ms. `seq` fields point back into the log.
 */
import type { DenySource, ModelErrorKind } from "../events.ts";

/** ok / error for finished spans; an open model request is `in_flight`, or `hung` past the threshold. */
export type SpanStatus = "ok" | "error" | "in_flight" | "hung";

export interface ModelSpan {
  /** The turn key (unique across resumes, unlike raw turn ids). */
  turnKey: string;
  turnId: string;
  /** `seq` of the `model.request` event. */
  seq: number;
  provider: string;
  model: string;
  echoedModel?: string;
  /** The model the response named, where it is not `model` (a dated id of it, or another model that
   * answered): the model its tokens are priced at, in eval's `cost` as in `usage`. */
  responseModel?: string;
  startedAt: number;
  status: SpanStatus;
  duration_ms: number;
  ttft_ms?: number;
  /** No first token after the stall threshold (the stall before the first byte). */
  stalledBeforeFirstToken?: boolean;
  /** The request asked for a streamed response (absent: unknown, treated as streamed). */
  streamed?: boolean;
  messageCount?: number;
  toolCount?: number;
  promptChars?: number;
  inputTokens?: number;
  outputTokens?: number;
  cacheReadTokens?: number;
  cacheWriteTokens?: number;
  /** What the agent recorded the response cost (USD), where it did (`model.response` `costUsd`). */
  costUsd?: number;
  reasoningTokens?: number;
  /** Names of the tools the response asked for (parallel calls show as several). */
  toolCalls: string[];
  errorKind?: ModelErrorKind;
  error?: string;
}

export interface ToolSpan {
  tool: string;
  callId?: string;
  turnKey?: string;
  /** `seq` of the `function.call` (call order). */
  callSeq: number;
  /** `seq` of the `function.output`. */
  outputSeq: number;
  /** 0-based position among tool spans in call order. */
  index: number;
  startedAt: number;
  duration_ms: number;
  args?: unknown;
  /** True failed, false succeeded, absent unknown. */
  failed?: boolean;
  /** An output with no matching call in the log (the span starts `duration_ms` before the output). */
  unpaired?: boolean;
}

export interface DeniedSpan {
  tool: string;
  callId?: string;
  turnKey?: string;
  seq: number;
  at: number;
  args?: unknown;
  source: DenySource;
  reason?: string;
}

export interface CompactionSpan {
  seq: number;
  at: number;
  beforeTokens: number;
  afterTokens: number;
}

export interface TraceTurn {
  turnKey: string;
  turnId: string;
  startedAt: number;
  seq: number;
  aborted?: boolean;
  abortReason?: string;
  /** Opened by an event naming a turn that no `turn.started` opened. */
  implicit?: boolean;
  /** Time of the last event that belongs to the turn. */
  lastAt?: number;
}

/** Fields added after the first version are optional in the type (the fold always sets them). */
export interface Trace {
  sessionId: string;
  startedAt: number;
  endedAt: number;
  wall_ms: number;
  /**
   * The session's project directory: the last `projectPath` a `session.started` named (eval places
   * changed paths in it). Absent when no event says; eval then takes the session's meta.
   */
  projectPath?: string;
  /** Number of events folded, and the highest `seq` seen. */
  eventCount: number;
  lastSeq: number;
  /** Turns in order (keys unique across resumes). */
  turns: TraceTurn[];
  modelSpans: ModelSpan[];
  /** Tools that ran, sorted by call order. */
  toolSpans: ToolSpan[];
  /** Calls that never ran (refused), kept apart from toolSpans. */
  deniedSpans: DeniedSpan[];
  /** Calls with no output yet (still running or lost), in call order. */
  pendingCalls: {
    tool: string;
    callId?: string;
    seq: number;
    at: number;
    turnKey?: string;
    args?: unknown;
    /** The files it writes, for a call of a file-writing tool (as `changedFiles` reads them). */
    paths?: string[];
  }[];
  compactions: CompactionSpan[];
  compactedTokens: number;
  /** Paths written by completed, non-failed calls of file-writing tools (sorted, unique). */
  changedFiles: string[];
  redirects: number;
  redirectsSkipped: number;
  /** Tokens the redirect advisor's triggers recorded (not in the model spans' totals; `usage` books
   * them under `(redirect advisor)`). */
  redirectTokens?: { input: number; output: number };
  model_ms: number;
  tool_ms: number;
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  reasoningTokens: number;
  /** Any open model request past the hang threshold. */
  hung: boolean;
  /** Any open model request under the threshold. */
  inFlight: boolean;
  /** The session recorded `session.ended`. */
  ended: boolean;
  /** The log was imported from another agent's transcript (`session.started` reason `import`):
   * those agents write no `session.ended`, so not `ended` says nothing of whether it still runs. */
  imported?: boolean;
  /** Model spans flagged `stalledBeforeFirstToken`. */
  stalls?: number;
  /** The thresholds the fold used. */
  hangMs?: number;
  stallMs?: number;
  /** The time open spans were aged against (`now`, else the last event). */
  asOf?: number;
  /** Events of types newer than this catalogue, skipped. */
  skippedEvents?: number;
  /**
   * How many events of each catalogue type the trace draws no span for (subagents, skills, hooks,
   * context overflows, checkpoints), by type; present when there were any.
   */
  otherEvents?: Record<string, number>;
  /** Lines that could not be read (line numbers and messages). */
  parseErrors: { line?: number; message: string; torn: boolean }[];
}
