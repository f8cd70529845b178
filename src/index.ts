/**
 * freecode as a library: the session store, the rollout recorder and folds, the eval harness and the
 * importers. Explicit named exports only; files starting with `_` are internal and never exported.
 */

export {
  type Config,
  ConfigSchema,
  configuredStore,
  type FsyncMode,
  loadConfig,
  parseConfig,
  type StoreName,
} from "./config.ts";
// Errors, config, home
export { ERROR_EXIT_CODES, type ErrorCode, type ErrorSource, exitCodeFor, FreecodeError } from "./errors.ts";
export { expectBashMatches, forbidBashMatches } from "./eval/assertions/bash.ts";
export {
  deniedNeverRan,
  type ExpectDeniedSpec,
  expectDenied,
  forbidDenied,
  noRetryAfterDenial,
} from "./eval/assertions/denied.ts";
export {
  compactions,
  duration,
  modelErrors,
  noHung,
  noInFlight,
  noStalls,
  percentile,
  ttft,
} from "./eval/assertions/health.ts";
export {
  changedFiles,
  cost,
  maxModelCalls,
  type PriceLookup,
  priceIn,
  tokens,
  turns,
} from "./eval/assertions/outcome.ts";
export {
  expectSequence,
  SEQUENCE_MODES,
  type SequenceMode,
  type SequenceSpec,
  type Step,
} from "./eval/assertions/sequence.ts";
export {
  type ExpectToolSpec,
  expectFirstToolIn,
  expectInArgs,
  expectNoTools,
  expectParallelTools,
  expectTool,
  forbidTools,
  toolCallCount,
} from "./eval/assertions/tools.ts";
export { ASSERTIONS, type CaseInput, CaseSchema, type Selector, SelectorSchema } from "./eval/case-schema.ts";
export { type Expectation, type LoadedCase, loadCaseFile, loadCases } from "./eval/load-cases.ts";
export { type ArgMatcher, type ArgSpec, argsMatch, diffArgs } from "./eval/match/args.ts";
export { type TraceMatchers, traceMatchers } from "./eval/matchers.ts";
export type { ArgDiff, CountSpec, Outcome, Verdict } from "./eval/outcome.ts";
export type { CaseResult, CheckResult, EvalReport, SessionResult } from "./eval/report.ts";
export { renderGithub, renderStepSummary } from "./eval/reporters/github.ts";
export { renderJunit } from "./eval/reporters/junit.ts";
export { renderPretty } from "./eval/reporters/pretty.ts";
export { renderTap } from "./eval/reporters/tap.ts";
// Eval harness
export { type RunEvalOptions, runEval } from "./eval/runner.ts";
export { starterCase, starterYaml } from "./eval/starter.ts";
export { homePaths, resolveHome } from "./home.ts";
export { ClaudeParser } from "./import/claude.ts";
export { CodexParser } from "./import/codex.ts";
export { defaultRoots, detectFile, discover } from "./import/discover.ts";
export { mapGemini } from "./import/gemini.ts";
// Importers
export { type ImportOptions, type ImportReport, importSources, rootsFor } from "./import/import.ts";
export { mapOpencodeSession } from "./import/opencode.ts";
export { readOpencodeDb, readOpencodeExport, readOpencodeRows } from "./import/opencode-source.ts";
export { redactDeep, redactText } from "./import/redact.ts";
export type { SourceSummary } from "./import/run.ts";
export {
  AGENTS,
  type Agent,
  type ImportedSession,
  type ImportWarning,
  type ParseResult,
} from "./import/types.ts";
export { type WatchOptions, watchSources } from "./import/watch.ts";
export { type WriteOutcome, writeSession } from "./import/write.ts";
// Maintenance (freecode gc)
export { applyRemovals, type GcApplied, type GcResult } from "./maintenance/apply.ts";
export {
  type GcItem,
  type GcOptions,
  type GcOutcome,
  type GcReport,
  gcLockPath,
  runGc,
} from "./maintenance/gc.ts";
export { type Inventory, type StoredSession, takeInventory } from "./maintenance/inventory.ts";
export {
  GC_REASONS,
  type GcPlan,
  type GcReason,
  type GcRemoval,
  isProtected,
  planGc,
  type StoreTotals,
} from "./maintenance/plan.ts";
export {
  EMPTY_SHELL_GRACE_MS,
  type GcMode,
  type GcOverrides,
  type GcPolicy,
  resolvePolicy,
} from "./maintenance/policy.ts";
export { formatBytes, parseByteSize } from "./maintenance/size.ts";
export type {
  DenySource,
  EventInput,
  EventOf,
  ModelErrorKind,
  RolloutEvent,
  RolloutEventType,
} from "./rollout/events.ts";
// Rollout: catalogue, recorder, reading, folds, exports
export {
  DENY_SOURCES,
  EVENT_TYPES,
  isKnownEventType,
  MODEL_ERROR_KINDS,
  RolloutEventSchema,
} from "./rollout/events.ts";
export { changedPaths, DEFAULT_CHANGED_FILE_TOOLS } from "./rollout/folds/changed-files.ts";
export type { Replay, ReplayCall, ReplayOptions, ReplayTurn } from "./rollout/folds/replay.ts";
export { createReplayFold, replaySession } from "./rollout/folds/replay.ts";
export type { TraceFold, TraceOptions } from "./rollout/folds/trace.ts";
export { buildTrace, createTraceFold, DEFAULT_HANG_MS, DEFAULT_STALL_MS } from "./rollout/folds/trace.ts";
export type {
  CompactionSpan,
  DeniedSpan,
  ModelSpan,
  SpanStatus,
  ToolSpan,
  Trace,
  TraceTurn,
} from "./rollout/folds/trace-types.ts";
export type { ModelUsage, Price, Usage } from "./rollout/folds/usage.ts";
export { costOf, createUsageFold, priceFor, usageOf } from "./rollout/folds/usage.ts";
export { createIdGenerator, newEventId, timeOfId } from "./rollout/ids.ts";
export type { ReadOptions, ReadPosition, RolloutSink, RolloutSource } from "./rollout/load.ts";
export { foldRollout, loadReplay, loadTrace, loadUsage, readRollout } from "./rollout/load.ts";
export type { OtlpOptions, OtlpSpan } from "./rollout/otlp.ts";
export { otlpSpans, traceToOtlp, writeOtlpJson } from "./rollout/otlp.ts";
export type { DeniedCall, Recorder, RecorderOptions } from "./rollout/recorder.ts";
export { createRecorder, rolloutEnabled, URGENT_TYPES } from "./rollout/recorder.ts";
export type { CheckedEvent } from "./rollout/validate.ts";
export { checkEvent, EventDraftSchema, isValidEvent } from "./rollout/validate.ts";
export { verifyRollout } from "./rollout/verify.ts";
export type { WaterfallOptions } from "./rollout/waterfall.ts";
export { renderWaterfall, writeWaterfall } from "./rollout/waterfall.ts";
// Serve: the JSON-RPC dispatcher and method table, the HTTP server, JSON-RPC over lines
export { parseDuration } from "./serve/duration.ts";
export { type MethodContext, sessionMethods } from "./serve/methods.ts";
export {
  createRpcDispatcher,
  RPC_ERRORS,
  type RpcDispatcher,
  type RpcDispatcherOptions,
  type RpcMethod,
  type RpcMethods,
  rpcMethod,
} from "./serve/rpc.ts";
export {
  DEFAULT_MAX_BYTES,
  DEFAULT_MAX_STORED_BYTES,
  DEFAULT_PORT,
  DEFAULT_TTL_MS,
  type RunningServer,
  type ServerOptions,
  startServer,
} from "./serve/server.ts";
export { serveLines } from "./serve/stdio.ts";
export {
  type CompactOptions,
  type CompactResult,
  compactSession,
  estimateTokens,
  keepLastUserTurns,
} from "./session/compaction.ts";
export {
  EXPORT_FORMAT,
  EXPORT_VERSION,
  type ExportDocument,
  exportSession,
  importSessionDocument,
  parseExportDocument,
} from "./session/export.ts";
export {
  type LoopBlock,
  type LoopMessage,
  loadHistory,
  NO_RESULT_TEXT,
  toolCallId,
} from "./session/history.ts";
export { type HttpSummarizerOptions, httpSummarizer } from "./session/http-summarizer.ts";
export {
  InterruptHandler,
  type InterruptOptions,
  type InterruptTarget,
  markInterrupted,
} from "./session/interrupt.ts";
// Sessions
export {
  appendGivenMessages,
  appendMessages,
  archiveSession,
  createSession,
  deleteSession,
  forkSession,
  getSession,
  type LazySession,
  listSessions,
  type NewSession,
  pinSession,
  purgeSession,
  renameSession,
  restoreSession,
  startSession,
  toStoredMessages,
  unarchiveSession,
} from "./session/lifecycle.ts";
export { CONTINUE_TEXT, resumeResult, resumeSession, type SessionContext } from "./session/resume.ts";
export { MessageInputSchema, ROLES } from "./session/schema.ts";
export { markIdle, markRunning, recoverCrashed } from "./session/status.ts";
export { builtinSummarizer, type CompactionSummary, type Summarizer } from "./session/summarizer.ts";
export { summarizerFromConfig } from "./session/summarizer-config.ts";
export {
  applyTagChange,
  checkTag,
  MAX_TAG_CHARS,
  MAX_TAGS,
  normalizeTags,
  sessionTags,
  splitTagList,
  type TagChange,
  tagSession,
} from "./session/tags.ts";
export { cleanTitle, TITLE_MAX_CHARS } from "./session/title-clean.ts";
export { titlerFromConfig } from "./session/title-config.ts";
export {
  generateTitle,
  type TitleOutcome,
  type TitleResult,
  titleGenerationOf,
} from "./session/title-generate.ts";
export { type HttpTitlerOptions, httpTitler, type Titler } from "./session/title-http.ts";
export { type TurnView, turnsOf } from "./session/turns.ts";
// Snapshots (git trees of the work tree; undo/redo)
export type { FileChange } from "./snapshot/restore.ts";
export { type SessionSnapshotsOptions, sessionSnapshots } from "./snapshot/session.ts";
export { createSnapshots } from "./snapshot/snapshots.ts";
export { DEFAULT_MAX_FILE_BYTES } from "./snapshot/stage.ts";
export type {
  CaptureResult,
  RestoreResult,
  SnapshotList,
  SnapshotListItem,
  Snapshots,
  SnapshotsOptions,
} from "./snapshot/types.ts";
// Storage
export type {
  AdapterCapabilities,
  AdapterFactory,
  AdapterOptions,
  EventRead,
  ListPage,
  ListQuery,
  MessagesRead,
  ReadIssue,
  StorageAdapter,
} from "./storage/contract.ts";
export { type LockReport, lockFiles, unlockHome } from "./storage/locks.ts";
export type { MigrateReport, StoreDigest } from "./storage/migrate.ts";
export { digestStore, migrateStore } from "./storage/migrate.ts";
export { formatSessionDirName, isSessionDirName, parseSessionDirName } from "./storage/project-key.ts";
export {
  type EventDraft,
  EventEnvelopeSchema,
  type EventRecord,
  IdSchema,
  MessageSchema,
  type Part,
  PartSchema,
  SESSION_STATUSES,
  type SessionMeta,
  SessionMetaSchema,
  type SessionStatus,
  type StoredMessage,
  type Usage as MessageUsage,
  UsageSchema,
} from "./storage/records.ts";
export { ADAPTER_NAMES, AUTO_ORDER, DEFAULT_ADAPTER, type OpenedStore, openStore } from "./storage/select.ts";
export type { Problem, VerifyReport } from "./storage/verify.ts";
export { verifyStore } from "./storage/verify.ts";
// Sync client: upload an export to a sync endpoint, download one from its link
export { downloadExport, type SyncOptions, type Uploaded, uploadExport } from "./sync/client.ts";
export type { GoalUpdate } from "./threads/api.ts";
// Thread store: search, turn view, threads, goals; migrate and verify
export {
  listThreads,
  rebuildThreads,
  scanSearch,
  searchThreads,
  setGoal,
  turnItemsView,
} from "./threads/api.ts";
export { refreshThreads } from "./threads/refresh.ts";
export type { SearchHit, SearchQuery, SearchResult } from "./threads/search-text.ts";
export { SearchQuerySchema } from "./threads/search-text.ts";
export type { ThreadStore } from "./threads/store.ts";
export { openThreadStore } from "./threads/store.ts";
export type { GoalStatus, Thread, ThreadFilter, ToolCall, Turn, TurnItem } from "./threads/types.ts";
export { writeJson } from "./util/json-write.ts";
export { VERSION } from "./version.ts";
