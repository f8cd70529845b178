/**
 * Shared state of the Claude Code importer: what is saved between runs (`ClaudeState`), the
 * context the entry handlers get, and closing a streamed response into its `model.response`.
 */

import { drop } from "../util/dict.ts";
import { idHash } from "../util/id-hash.ts";
import type { NumberSet } from "../util/number-set.ts";
import type { BuilderState, SessionBuilder } from "./builder.ts";
import { type HeldStore, writeHeld, writeHeldCalls } from "./claude-held.ts";
import { foldHead } from "./text.ts";
import type { EntryCounts, ImportWarning } from "./types.ts";

/** A streamed response still collecting its lines (one line per content block). */
export interface OpenGroup {
  responseId: string;
  messageId: string;
  startAt: number;
  at: number;
  model: string;
  usage?: Record<string, unknown>;
  tools: string[];
  textChars: number;
  thinkingChars: number;
  /** The response continued after an earlier read flushed it: its usage was already counted. */
  noUsage?: boolean;
  /** Its last line gave a `stop_reason`: the response is complete (Claude Code 2.1.8x on). */
  stopped?: boolean;
  /** That reason is `tool_use`: the calls' results (and in 2.1.1xx its other blocks) are still to come. */
  awaitsTools?: boolean;
  /** Its `model.request` was written when its first line was read (see `onAssistant`). */
  requested?: boolean;
}

export interface ClaudeState extends HeldStore {
  main?: BuilderState;
  children: Record<string, BuilderState>;
  groups: Record<string, OpenGroup>;
  /**
   * Per session: the response a read's end closed (the transcript was no longer written, or the
   * response said it was complete). A line of it read next continues it (`onAssistant`), where
   * any other closed response read again is a replay; anything that closes a response forgets it.
   */
  cut?: Record<string, string>;
  prevAt: Record<string, number>;
  /** Inline sidechains: entry uuid → child session id. */
  sidechainOf: Record<string, string>;
  /** Task prompts → the Task call id, to link an inline sidechain root to its call. */
  taskPrompts: Record<string, string>;
  titles: {
    user?: string;
    generated?: string;
    summary?: string;
    /** `summary` lines whose `leafUuid` has not been seen yet (see `ClaudeParser.metadata`). */
    summaries?: { text: string; leaf: string }[];
  };
  cwd?: string;
  version?: string;
  gitBranch?: string;
  sourceId?: string;
  agentId?: string;
  lastModel?: string;
  /**
   * What a replay is told by, kept across reads (`NumberSet.pack`): the entries' uuids and the
   * closed responses' ids, as hashes. A resumed session writes earlier entries again; when a read
   * stopped within such a copy, the next one took the rest of it for new entries (a message twice,
   * its usage counted again).
   */
  seen?: string;
  closed?: string;
}

/** What the entry handlers get: the state, the builders, counters. */
export interface ClaudeContext {
  st: ClaudeState;
  counts: EntryCounts;
  warnings: ImportWarning[];
  file: string;
  redact: boolean;
  builder(id: string): SessionBuilder;
  /**
   * The closed responses (`idHash` of the response id), to know a replayed one (see
   * `ClaudeParser.feed`); saved between reads as `ClaudeState.closed`.
   */
  closed: NumberSet;
}

/**
 * How a sidechain root finds its Task: a hash of the prompt's first 200 characters, whitespace-
 * folded. A hash, not the text: the key is saved in the import state, and a prompt may hold a secret.
 */
export function promptKey(content: unknown): string | undefined {
  let text: string | undefined;
  if (typeof content === "string") text = content;
  else if (Array.isArray(content)) {
    const first = content.find((b) => b && typeof b === "object" && b.type === "text");
    text = first?.text;
  }
  return text ? Bun.hash(foldHead(text, 200)).toString(36) : undefined;
}

/**
 * Close a builder's open response (see `claude-held.ts`): what was held from no later than its
 * last line (a hook Claude Code wrote after it), the calls whose results are held, then
 * `model.response` with the last line's usage, then the rest held.
 */
export function flushGroup(ctx: ClaudeContext, b: SessionBuilder): void {
  if (ctx.st.cut) drop(ctx.st.cut, b.id);
  const g = ctx.st.groups[b.id];
  if (!g) {
    writeHeld(ctx.st, b);
    return;
  }
  delete ctx.st.groups[b.id];
  writeHeld(ctx.st, b, g.at);
  writeHeldCalls(ctx.st, b);
  // A response an earlier read closed (the file had aged) that went on: its model call is logged
  // already, with the usage its lines then gave; its new blocks are a message of their own.
  if (!g.noUsage) modelCall(b, g);
  ctx.closed.add(idHash(g.responseId));
  b.release(g.messageId);
  writeHeld(ctx.st, b);
}

/** `g`'s `model.response` (and `model.request`, unless written when it began). */
function modelCall(b: SessionBuilder, g: OpenGroup): void {
  const u = g.usage as Record<string, number | undefined> | undefined;
  const details = g.usage?.output_tokens_details as { thinking_tokens?: number } | undefined;
  b.modelResponse(g.responseId, {
    startAt: g.startAt,
    at: g.at,
    provider: "anthropic",
    model: g.model,
    usage: u
      ? {
          input: u.input_tokens ?? 0,
          output: u.output_tokens ?? 0,
          cacheRead: u.cache_read_input_tokens ?? 0,
          cacheWrite: u.cache_creation_input_tokens ?? 0,
          ...(details?.thinking_tokens !== undefined ? { reasoning: details.thinking_tokens } : {}),
        }
      : undefined,
    toolCalls: g.tools,
    textChars: g.textChars,
    thinkingChars: g.thinkingChars,
    messageId: g.messageId,
    // Anthropic's `msg_…` (or the request's or entry's id): a fork copies it with the history.
    providerId: g.responseId,
    requested: g.requested === true,
  });
}
