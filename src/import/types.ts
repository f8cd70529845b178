/**
 * The importer's intermediate shapes. A parser turns one source (a transcript file, an OpenCode
 * database or export) into `ImportedSession`s — meta, messages and derived rollout events — without
 * touching storage; `write.ts` persists them. Everything here is plain JSON so a parser's state can
 * be saved between runs (incremental import).
 */
import type { EventDraft, StoredMessage, TokenTotals } from "../storage/records.ts";
import { own, put } from "../util/dict.ts";

/** The agents we import from. */
export const AGENTS = ["claude", "codex", "opencode", "gemini"] as const;
export type Agent = (typeof AGENTS)[number];

/** Where a title came from, most trusted first (SessionMeta.titleSource). */
export type TitleSource = "user" | "generated" | "prompt" | "import";

/** A line or item that could not be imported (the rest still imports). */
export interface ImportWarning {
  file: string;
  line?: number;
  message: string;
}

/** Per-source tallies: what was mapped, and what was skipped, by entry type. */
export interface EntryCounts {
  imported: number;
  skipped: Record<string, number>;
}

/** The meta fields an importer derives (storage folds the counters from the messages). */
export interface ImportedMeta {
  id: string;
  title: string;
  titleSource: TitleSource;
  projectPath: string;
  provider?: string;
  model?: string;
  createdAt: number;
  updatedAt: number;
  parentId?: string;
  source: { agent: Agent; id: string; path: string; [k: string]: unknown };
}

/**
 * One session's import result. In `delta` mode `messages` holds only new or changed messages (a
 * changed one keeps its id: a tool result arrived for a call imported earlier); in `full` mode it
 * is the whole message log. `events` are merged by id, so re-deriving an event is harmless.
 */
export interface ImportedSession {
  meta: ImportedMeta;
  messages: StoredMessage[];
  /** Delta mode: messages stored by an earlier run that changed since (patched by id). */
  changed: StoredMessage[];
  events: EventDraft[];
  mode: "delta" | "full";
  /** A part of a longer read (`SessionBuilder.result`): the meta is merged when the read ends. */
  partial?: boolean;
  /** Stored messages (from an earlier read) that an interrupt in this one marks `interrupted`. */
  interrupted?: string[];
  /** Token totals over everything derived so far (for summaries and tests). */
  tokens: TokenTotals;
  /**
   * Full mode: messages the source recorded that left the conversation (a Gemini `$rewindTo`): not
   * stored, but counted in the session's turns and tokens, as their events are in the log.
   */
  withdrawn?: StoredMessage[];
  /** A whole document derived with something still to come (a Gemini response waiting for its
   * tokens): the next import reads it again even if it did not change. */
  open?: boolean;
}

/** What a parser returns for one source. */
export interface ParseResult {
  sessions: ImportedSession[];
  counts: EntryCounts;
  warnings: ImportWarning[];
  /**
   * A final read left a response or a call open that may still be written (`live.ts`): the next
   * import reads the file again even if it did not change.
   */
  open?: boolean;
  /** A watch pass left a complete response open until the file is quiet (`FileState.settling`). */
  settling?: boolean;
}

/** Options every parser takes. */
export interface ParseOptions {
  /** The source path as given (kept in `meta.source.path`). */
  path: string;
  /** Mask secrets in text and tool arguments. */
  redact?: boolean;
  /**
   * The last read of a live file: flush open responses and unanswered tool calls. False in
   * `--watch`, where they wait for the lines that complete them.
   */
  final?: boolean;
  /**
   * When the file was last written (its mtime, ms): while that and its last line are recent, a
   * final read leaves what may still be written open (`live.ts`). Absent: nothing is waited for.
   */
  lastWrite?: number;
}

/** Add one to a counter map. */
export function bump(map: Record<string, number>, key: string, by = 1): void {
  put(map, key, (own(map, key) ?? 0) + by);
}

/**
 * An entry of a shape the importer did not expect (it threw): counted as `(unreadable entry)` and
 * reported with where it is; the rest of the source imports.
 */
export function unreadableEntry(
  io: { counts: EntryCounts; warnings?: ImportWarning[] },
  where: { file: string; line?: number; entry?: string },
  error: unknown,
): void {
  const what = where.entry === undefined ? "entry" : `entry ${where.entry}`;
  const warning: ImportWarning = {
    file: where.file,
    message: `${what} not imported: ${(error as Error).message}`,
  };
  if (where.line !== undefined) warning.line = where.line;
  io.warnings?.push(warning);
  bump(io.counts.skipped, "(unreadable entry)");
}

/** An empty counter set. */
export const newCounts = (): EntryCounts => ({ imported: 0, skipped: {} });

/** The kinds of message a Gemini CLI recording holds (`type` of a message record). */
export const GEMINI_MESSAGE_TYPES: ReadonlySet<string> = new Set([
  "user",
  "gemini",
  "info",
  "error",
  "warning",
]);
