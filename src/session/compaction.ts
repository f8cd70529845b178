/**
 * Compaction, the only edit of a message log: keep the leading system messages and the last N user
 * turns (never mid-turn: what follows the system messages starts with a user message), store a
 * summary of what was dropped in the meta, rewrite the log atomically, and record
 * `compact.occurred` (estimated tokens before/after) in the rollout log, which keeps what
 * compaction erased. Recording follows the recorder's rule (`rolloutEnabled`: `FREECODE_ROLLOUT`,
 * off in tests, config `"rollout": false`). The summary is stored
 * as a plan before the log is touched (`_compaction-plan.ts`), so a crash never loses messages
 * without their summary, and the next compaction finishes the interrupted one.
 */
import { badInput, conflict } from "../errors.ts";
import { rolloutEnabled } from "../rollout/recorder.ts";
import { isTurnStart } from "../storage/_meta-fold.ts";
import type { StorageAdapter } from "../storage/contract.ts";
import type { StoredMessage } from "../storage/records.ts";
import { readForRewrite } from "../storage/rewrite-read.ts";
import { plural } from "../util/plural.ts";
import { finishPlan, type PendingCompaction, pendingCompaction, storePlan } from "./_compaction-plan.ts";
import { getSession } from "./lifecycle.ts";
import { builtinSummarizer, type CompactionSummary, type Summarizer } from "./summarizer.ts";

export const DEFAULT_KEEP_USER_TURNS = 2;

/**
 * Where compaction cuts `messages`: the first `head` (leading system messages) stay, [head, cut)
 * is dropped, the rest stays from the n-th last user message (not a synthetic one) on. With n user turns or fewer there
 * is nothing to drop (`cut === head`); with n ≤ 0 everything after the system messages goes.
 */
export function compactionCut(messages: StoredMessage[], n: number): { head: number; cut: number } {
  let head = 0;
  while (head < messages.length && messages[head]!.role === "system") head++;
  if (n <= 0) return { head, cut: messages.length };
  // Turns as the meta counts them: a synthetic user message (the "Continue" a resume appends, a
  // harness notice) opens none, and cutting at it dropped the prompt of the turn it continues.
  const users = messages.reduce((k, m) => k + (isTurnStart(m) ? 1 : 0), 0);
  if (users <= n) return { head, cut: head };
  let cut = messages.length;
  for (let seen = 0; seen < n; ) if (isTurnStart(messages[--cut]!)) seen++;
  return { head, cut };
}

/** What compaction keeps: the leading system messages and the last N user turns. */
export function keepLastUserTurns(messages: StoredMessage[], n: number): StoredMessage[] {
  const { head, cut } = compactionCut(messages, n);
  return [...messages.slice(0, head), ...messages.slice(cut)];
}

/** A rough token estimate (4 characters per token): compaction reports it as an estimate. */
export const estimateTokens = (messages: StoredMessage[], extra = "") =>
  Math.ceil((messages.reduce((n, m) => n + JSON.stringify(m.parts).length, 0) + extra.length) / 4);

export interface CompactOptions {
  keepUserTurns?: number;
  summarizer?: Summarizer;
  /** Record `compact.occurred` (default: `rolloutEnabled()`, the recorder's own rule). */
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

const ATTEMPTS = 4;

/**
 * Compact a session: first finish a compaction a crash interrupted, then drop what is past the
 * last N user turns (starting over if messages were appended while it summarized).
 */
export async function compactSession(
  store: StorageAdapter,
  id: string,
  options: CompactOptions = {},
): Promise<CompactResult> {
  const n = options.keepUserTurns ?? DEFAULT_KEEP_USER_TURNS;
  if (!Number.isInteger(n) || n < 1)
    throw badInput("keep must be a whole number of user turns, at least 1", { field: "keepUserTurns" });
  const summarizer = options.summarizer ?? builtinSummarizer;
  let done: CompactResult | undefined;
  for (let attempt = 1; ; attempt++) {
    if (attempt > ATTEMPTS) throw conflict(`session ${id} kept changing during compaction`);
    const meta = await getSession(store, id);
    const pending = pendingCompaction(meta);
    if (pending) {
      done = (await finish(store, meta.id, pending)) ?? done;
      continue;
    }
    const { messages } = await readForRewrite(store, meta.id, "compact");
    const { head, cut } = compactionCut(messages, n);
    const tokensBefore = estimateTokens(messages);
    if (cut === head) {
      return (
        done ?? {
          compacted: false,
          reason: `the log holds ${plural(messages.filter(isTurnStart).length, "user turn")}, and the last ${n} are kept: nothing to drop`,
          messagesBefore: messages.length,
          messagesAfter: messages.length,
          tokensBefore,
          tokensAfter: tokensBefore,
        }
      );
    }
    const kept = [...messages.slice(0, head), ...messages.slice(cut)];
    const dropped = messages.slice(head, cut);
    const summary = await summarizer.summarize({ dropped, kept, previous: meta.summary?.text });
    const plan: PendingCompaction = {
      id: `compact-${crypto.randomUUID()}`,
      head,
      cut,
      firstDropped: messages[head]!.id,
      firstKept: messages[cut]!.id,
      messagesBefore: messages.length,
      messagesAfter: kept.length,
      tokensBefore,
      tokensAfter: estimateTokens(kept, summary.text),
      record: options.rollout ?? rolloutEnabled(),
      summary: { ...summary, createdAt: Date.now(), summarizer: summarizer.name },
    };
    // Not stored if the log moved while summarizing: then start over on the longer log.
    if (await storePlan(store, meta.id, plan, messages.length)) {
      const result = await finish(store, meta.id, plan);
      if (result) return result;
    }
  }
}

async function finish(store: StorageAdapter, id: string, plan: PendingCompaction) {
  const finished = await finishPlan(store, id, plan);
  if (!finished) return undefined;
  const { tokensBefore, tokensAfter, summary } = plan;
  return { compacted: true, ...finished, tokensBefore, tokensAfter, summary } satisfies CompactResult;
}
