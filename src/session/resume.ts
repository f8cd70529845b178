/**
 * Resume: everything a loop needs to continue a session — the messages and the provider and model
 * it ran with (a resumed session silently falling back to a default model is a change you would
 * only notice in the bill). If the last message was interrupted, a synthetic user message asks the
 * model to continue, instead of handing it a truncated transcript to guess about.
 */
import type { ReadIssue, StorageAdapter } from "../storage/contract.ts";
import type { SessionMeta, StoredMessage } from "../storage/records.ts";
import { type LoopMessage, loadHistory } from "./history.ts";
import { newMessageId } from "./ids.ts";
import { getSession } from "./lifecycle.ts";
import { recoverCrashed } from "./status.ts";

export const CONTINUE_TEXT = "Continue from where you left off.";

export interface SessionContext {
  meta: SessionMeta;
  provider?: string;
  model?: string;
  /** The stored messages, plus the synthetic continue message when one was added. */
  stored: StoredMessage[];
  /** The loop's message list. */
  messages: LoopMessage[];
  /** The synthetic message added because the last message was interrupted (not persisted). */
  continueMessage?: StoredMessage;
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
  if (stored.at(-1)?.interrupted) {
    ctx.continueMessage = {
      id: newMessageId(),
      role: "user",
      parts: [{ type: "text", content: CONTINUE_TEXT }],
      timestamp: Date.now(),
      synthetic: "continue",
    };
    ctx.stored = [...stored, ctx.continueMessage];
  }
  ctx.messages = loadHistory(ctx.stored);
  return ctx;
}
