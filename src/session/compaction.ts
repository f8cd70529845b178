/**
 * Compaction, the only edit of a message log: keep the last N user turns (never mid-turn: the kept
 * log starts with a user message), store a summary of what was dropped in the meta, rewrite the
 * log atomically, and record `compact.occurred` (estimated tokens before/after) in the rollout log,
 * which keeps what compaction erased. Rollout recording is off with `FREECODE_ROLLOUT=off`.
 */
import { badInput, FreecodeError } from "../errors.ts";
import type { StorageAdapter } from "../storage/contract.ts";
import type { StoredMessage } from "../storage/records.ts";
import { getSession } from "./lifecycle.ts";
import { builtinSummarizer, type CompactionSummary, type Summarizer } from "./summarizer.ts";

export const DEFAULT_KEEP_USER_TURNS = 2;

/** Everything from the n-th last user message on (all of it when there are fewer; none for n ≤ 0). */
export function keepLastUserTurns(messages: StoredMessage[], n: number): StoredMessage[] {
  if (n <= 0) return [];
  let seen = 0;
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i]!.role === "user" && ++seen === n) return messages.slice(i);
  }
  const firstUser = messages.findIndex((m) => m.role === "user");
  return firstUser === -1 ? [] : messages.slice(firstUser);
}

/** A rough token estimate (4 characters per token): compaction reports it as an estimate. */
export const estimateTokens = (messages: StoredMessage[], extra = "") =>
  Math.ceil((messages.reduce((n, m) => n + JSON.stringify(m.parts).length, 0) + extra.length) / 4);

export interface CompactOptions {
  keepUserTurns?: number;
  summarizer?: Summarizer;
  /** Record `compact.occurred` (default: on unless FREECODE_ROLLOUT=off). */
  rollout?: boolean;
}

export interface CompactResult {
  compacted: boolean;
  reason?: string;
  messagesBefore: number;
  messagesAfter: number;
  /** Estimated tokens of the log before, and of summary + kept log after. */
  tokensBefore: number;
  tokensAfter: number;
  summary?: CompactionSummary;
}

/** Compact a session (retries if messages were appended while it summarized). */
export async function compactSession(
  store: StorageAdapter,
  id: string,
  options: CompactOptions = {},
): Promise<CompactResult> {
  const n = options.keepUserTurns ?? DEFAULT_KEEP_USER_TURNS;
  if (!Number.isInteger(n) || n < 1)
    throw badInput("keep must be a whole number of user turns, at least 1", { field: "keepUserTurns" });
  const summarizer = options.summarizer ?? builtinSummarizer;
  for (let attempt = 0; ; attempt++) {
    const meta = await getSession(store, id);
    const { messages } = await store.readMessages(meta.id);
    const kept = keepLastUserTurns(messages, n);
    const tokensBefore = estimateTokens(messages);
    const base = { messagesBefore: messages.length, tokensBefore };
    if (kept.length === messages.length) {
      return {
        ...base,
        compacted: false,
        reason: `only ${n} user turn(s) or fewer: nothing to drop`,
        messagesAfter: messages.length,
        tokensAfter: tokensBefore,
      };
    }
    const dropped = messages.slice(0, messages.length - kept.length);
    const summary = await summarizer.summarize({ dropped, kept, previous: meta.summary?.text });
    try {
      await store.replaceMessages(meta.id, kept, { ifMessageCount: messages.length });
    } catch (error) {
      if (error instanceof FreecodeError && error.code === "conflict" && attempt < 3) continue;
      throw error;
    }
    const now = Date.now();
    await store.updateMeta(meta.id, (m) => ({
      ...m,
      summary: { ...summary, createdAt: now, summarizer: summarizer.name },
    }));
    const tokensAfter = estimateTokens(kept, summary.text);
    const record = options.rollout ?? process.env.FREECODE_ROLLOUT !== "off";
    if (record)
      await store.appendEvents(meta.id, [
        { type: "compact.occurred", beforeTokens: tokensBefore, afterTokens: tokensAfter, estimated: true },
      ]);
    return { ...base, compacted: true, messagesAfter: kept.length, tokensAfter, summary };
  }
}
