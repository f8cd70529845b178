/**
 * Resume: everything a loop needs to continue a session — the messages and the provider and model
 * it ran with (a resumed session silently falling back to a default model is a change you would
 * only notice in the bill). If the last message was interrupted, a synthetic user message asks the
 * model to continue, instead of handing it a truncated transcript to guess about. A compacted
 * session's summary comes back as a system message, where the seeds keep it (in the system prompt).
 */
import type { ReadIssue, StorageAdapter } from "../storage/contract.ts";
import type { SessionMeta, StoredMessage } from "../storage/records.ts";
import { summaryOf } from "./_compaction-plan.ts";
import { type LoopMessage, loadHistory } from "./history.ts";
import { getSession } from "./lifecycle.ts";
import { recoverCrashed } from "./status.ts";

export const CONTINUE_TEXT = "Continue from where you left off.";
/** How the compaction summary is introduced to the model (see `resumeSession`). */
export const SUMMARY_INTRO = "Summary of the earlier part of this conversation (compacted):";

export interface SessionContext {
  meta: SessionMeta;
  provider?: string;
  model?: string;
  /** The stored messages, plus the synthetic summary and continue messages when they were added. */
  stored: StoredMessage[];
  /** The loop's message list. */
  messages: LoopMessage[];
  /**
   * The synthetic message added because the last message was interrupted. Not persisted (resume
   * only reads); the same id and time on every resume of the same log, so an agent that appends
   * it with its next messages keeps the record of what the model was told, once.
   */
  continueMessage?: StoredMessage;
  /**
   * The latest compaction's summary as a system message (not persisted), after the leading system
   * messages: compaction dropped the turns it summarizes, and a loop that resumed without it would
   * have the model continue with no idea of them.
   */
  summaryMessage?: StoredMessage;
  /** Lines of the log that could not be read (the rest loaded). */
  issues: ReadIssue[];
}

/** Load a session to continue it (recovering crashed sessions first). */
export async function resumeSession(store: StorageAdapter, id: string): Promise<SessionContext> {
  await recoverCrashed(store);
  const meta = await getSession(store, id);
  const { messages: stored, issues } = await store.readMessages(meta.id);
  const ctx: SessionContext = { meta, stored, messages: [], issues };
  if (meta.provider) ctx.provider = meta.provider;
  if (meta.model) ctx.model = meta.model;
  const last = stored.at(-1);
  if (last?.interrupted) {
    // The same message on every resume of the same log (id and time from the interrupted one), so
    // an agent that appends it, to keep the record of what the model was told, appends it once.
    ctx.continueMessage = {
      id: `continue-${Bun.hash(`${meta.id}\n${last.id}`).toString(36)}`,
      role: "user",
      parts: [{ type: "text", content: CONTINUE_TEXT }],
      timestamp: last.timestamp + 1,
      synthetic: "continue",
    };
    ctx.stored = [...stored, ctx.continueMessage];
  }
  const summary = summaryOf(meta, stored);
  if (summary?.text) {
    ctx.summaryMessage = {
      id: `${meta.id}-compaction-summary`,
      role: "system",
      parts: [{ type: "text", content: `${SUMMARY_INTRO}\n${summary.text}` }],
      timestamp: summary.createdAt,
      synthetic: "compaction-summary",
    };
    const at = ctx.stored.findIndex((m) => m.role !== "system");
    const cut = at < 0 ? ctx.stored.length : at;
    ctx.stored = [...ctx.stored.slice(0, cut), ctx.summaryMessage, ...ctx.stored.slice(cut)];
  }
  ctx.messages = loadHistory(ctx.stored);
  return ctx;
}

/** A resume as one JSON document: what `session resume --json` prints and `session.resume` answers. */
export function resumeResult(c: SessionContext) {
  return {
    meta: c.meta,
    provider: c.provider ?? null,
    model: c.model ?? null,
    continued: c.continueMessage !== undefined,
    continueMessage: c.continueMessage ?? null,
    summarized: c.summaryMessage !== undefined,
    messages: c.messages,
    issues: c.issues,
  };
}
