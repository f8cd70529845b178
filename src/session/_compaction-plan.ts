/**
 * A compaction in two stores that cannot be written together (the meta, the message log, the
 * rollout log) is made crash-safe by writing its plan first: the meta's `pendingCompaction` holds
 * the summary and which messages go, before the log is touched. A crash then leaves either the old
 * log with the plan beside it, or the new log with the plan not yet folded into `summary`; the
 * next compaction recognises which from the log itself and finishes the job, recording
 * `compact.occurred` once (the event carries the plan's id, so a retry can tell it was written).
 */
import * as v from "valibot";
import { conflict, FreecodeError } from "../errors.ts";
import type { StorageAdapter } from "../storage/contract.ts";
import type { SessionMeta } from "../storage/records.ts";

export const PendingCompactionSchema = v.object({
  /** Also the id of its `compact.occurred` event. */
  id: v.string(),
  /** Leading system messages, kept. */
  head: v.number(),
  /** Index of the first kept user message in the log as planned: [head, cut) is dropped. */
  cut: v.number(),
  /** The ids at `head` before and after the rewrite: which of the two logs is on disk. */
  firstDropped: v.string(),
  firstKept: v.string(),
  messagesBefore: v.number(),
  messagesAfter: v.number(),
  tokensBefore: v.number(),
  tokensAfter: v.number(),
  /** Record `compact.occurred` (decided when planned). */
  record: v.boolean(),
  /** What becomes the meta's `summary`. */
  summary: v.looseObject({
    taskGoal: v.string(),
    completedSteps: v.array(v.string()),
    keyDecisions: v.array(v.string()),
    currentState: v.string(),
    text: v.string(),
    createdAt: v.number(),
    summarizer: v.optional(v.string()),
  }),
});
export type PendingCompaction = v.InferOutput<typeof PendingCompactionSchema>;

/** The meta's pending compaction; one that does not parse cannot be finished safely: none. */
export function pendingCompaction(meta: SessionMeta): PendingCompaction | undefined {
  const r = v.safeParse(PendingCompactionSchema, meta.pendingCompaction);
  return r.success ? r.output : undefined;
}

/**
 * The summary that goes with `messages`, the log as it is now: a compaction a crash left half done
 * (its plan still pending) that had already rewritten the log stands with the plan's summary — the
 * meta's is the one before, and the messages it summarized are gone (a resume then gave the model
 * the kept messages alone). A plan not applied yet leaves the old log and its old summary.
 */
export function summaryOf(meta: SessionMeta, messages: { id: string }[]): SessionMeta["summary"] {
  const plan = pendingCompaction(meta);
  return plan && messages[plan.head]?.id === plan.firstKept ? plan.summary : meta.summary;
}

/** Store `plan` unless the log moved since it was read (`messageCount`) or another plan is pending. */
export async function storePlan(
  store: StorageAdapter,
  id: string,
  plan: PendingCompaction,
  messageCount: number,
): Promise<boolean> {
  const stored = await store.updateMeta(id, (m) =>
    m.messageCount === messageCount && !pendingCompaction(m) ? { ...m, pendingCompaction: plan } : m,
  );
  return pendingCompaction(stored)?.id === plan.id;
}

export interface FinishedCompaction {
  messagesBefore: number;
  messagesAfter: number;
}

const REWRITE_ATTEMPTS = 5;

/**
 * Bring the log to where `plan` leads, record its event and fold its summary into the meta.
 * Returns undefined when the log is neither the planned one nor its rewrite (then the plan is
 * dropped unapplied). Messages appended since the plan are kept: only [head, cut) goes.
 */
export async function finishPlan(
  store: StorageAdapter,
  id: string,
  plan: PendingCompaction,
): Promise<FinishedCompaction | undefined> {
  let finished: FinishedCompaction | undefined;
  for (let attempt = 1; !finished; attempt++) {
    const { messages } = await store.readMessages(id);
    if (messages[plan.head]?.id === plan.firstKept) {
      // Rewritten by an earlier attempt that died: its event may already be stored.
      if (plan.record && (await hasEvent(store, id, plan.id))) plan = { ...plan, record: false };
      finished = { messagesBefore: plan.messagesBefore, messagesAfter: plan.messagesAfter };
    } else if (messages[plan.head]?.id === plan.firstDropped && messages[plan.cut]?.id === plan.firstKept) {
      const kept = [...messages.slice(0, plan.head), ...messages.slice(plan.cut)];
      try {
        await store.replaceMessages(id, kept, { ifMessageCount: messages.length });
        finished = { messagesBefore: messages.length, messagesAfter: kept.length };
      } catch (error) {
        // An append landed between the read and the rewrite: read again.
        if (!(error instanceof FreecodeError && error.code === "conflict")) throw error;
        if (attempt >= REWRITE_ATTEMPTS) throw conflict(`session ${id} kept changing during compaction`);
      }
    } else {
      await store.updateMeta(id, (m) => (pendingCompaction(m)?.id === plan.id ? withoutPlan(m) : m));
      return undefined;
    }
  }
  if (plan.record) {
    const { id: eventId, tokensBefore: beforeTokens, tokensAfter: afterTokens } = plan;
    await store.appendEvents(id, [
      { type: "compact.occurred", id: eventId, beforeTokens, afterTokens, estimated: true },
    ]);
  }
  await store.updateMeta(id, (m) =>
    pendingCompaction(m)?.id === plan.id ? { ...withoutPlan(m), summary: plan.summary } : m,
  );
  return finished;
}

function withoutPlan(meta: SessionMeta): SessionMeta {
  const { pendingCompaction: _, ...rest } = meta;
  return rest as SessionMeta;
}

async function hasEvent(store: StorageAdapter, sessionId: string, eventId: string): Promise<boolean> {
  for await (const r of store.readEvents(sessionId)) if (r.event?.id === eventId) return true;
  return false;
}
