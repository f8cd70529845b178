/**
 * How messages move a session's counters. Every adapter calls these on append/create so that
 * `messageCount`, `turnCount`, `lastTurnAt`, token totals and `updatedAt` mean the same everywhere,
 * and so that the one-usage-per-provider-response rule is enforced in one place.
 */
import { badInput } from "../errors.ts";
import type { SessionMeta, StoredMessage, TokenTotals } from "./records.ts";

const ZERO: TokenTotals = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };

/** A user message that opens a turn (synthetic ones such as "Continue…" do not). */
export const isTurnStart = (m: StoredMessage) => m.role === "user" && !m.synthetic;

/**
 * The messages of `messages` (by index) that would put a second `usage` on a provider response,
 * given the meta's last response that carried usage; each is judged as if the ones before it had
 * none. The store refuses them (`checkUsageRule`); the importer keeps them without their usage.
 */
export function usageRepeats(
  meta: Pick<SessionMeta, "usageResponseId">,
  messages: StoredMessage[],
): number[] {
  const out: number[] = [];
  let last = meta.usageResponseId;
  const seen = new Set<string>();
  for (const [i, m] of messages.entries()) {
    if (!m.usage || m.responseId === undefined) continue;
    if (m.responseId === last || seen.has(m.responseId)) {
      out.push(i);
      continue;
    }
    seen.add(m.responseId);
    last = m.responseId;
  }
  return out;
}

/** The store's rule: at most one `usage` per provider response. Throws `bad_input` naming the message. */
export function checkUsageRule(meta: Pick<SessionMeta, "usageResponseId">, messages: StoredMessage[]): void {
  const [i] = usageRepeats(meta, messages);
  if (i === undefined) return;
  const m = messages[i]!;
  throw badInput(`message ${m.id}: ${usageRepeatMessage(m.responseId!)}`, { field: `[${i}].usage` });
}

/** What is wrong with a repeated usage. */
export const usageRepeatMessage = (responseId: string) =>
  `provider response ${responseId} already has usage (usage goes on one message per response)`;

/**
 * The meta after appending `messages` (pure; does not check the usage rule — call
 * `checkUsageRule` first). `updatedAt` only moves forward, to the newest message timestamp.
 */
export function foldMessagesIntoMeta(meta: SessionMeta, messages: StoredMessage[]): SessionMeta {
  let { turnCount, lastTurnAt, updatedAt, usageResponseId } = meta;
  let tokens = meta.tokens;
  for (const m of messages) {
    if (isTurnStart(m)) {
      turnCount++;
      lastTurnAt = Math.max(lastTurnAt ?? 0, m.timestamp);
    }
    if (m.timestamp > updatedAt) updatedAt = m.timestamp;
    const u = m.usage;
    if (u) {
      const t = tokens ?? ZERO;
      tokens = {
        ...t,
        input: t.input + (u.inputTokens ?? 0),
        output: t.output + (u.outputTokens ?? 0),
        cacheRead: t.cacheRead + (u.cacheReadInputTokens ?? 0),
        cacheWrite: t.cacheWrite + (u.cacheCreationInputTokens ?? 0),
        ...(u.reasoningTokens !== undefined || t.reasoning !== undefined
          ? { reasoning: (t.reasoning ?? 0) + (u.reasoningTokens ?? 0) }
          : {}),
      };
      if (m.responseId !== undefined) usageResponseId = m.responseId;
    }
  }
  const out: SessionMeta = {
    ...meta,
    messageCount: meta.messageCount + messages.length,
    turnCount,
    updatedAt,
  };
  if (lastTurnAt !== undefined) out.lastTurnAt = lastTurnAt;
  if (tokens) out.tokens = tokens;
  if (usageResponseId !== undefined) out.usageResponseId = usageResponseId;
  return out;
}

/**
 * The meta after `replaceMessages`: `messageCount` is the new length; turns and tokens are history
 * and stay. `updatedAt` always moves forward (to the newest message, else by 1 ms), so whatever
 * compares metas to notice a change (the thread store's refresh) sees a rewrite that kept the
 * count. Not the clock: every adapter must store the same meta for the same writes.
 */
export function metaAfterReplace(meta: SessionMeta, messages: StoredMessage[]): SessionMeta {
  let updatedAt = meta.updatedAt + 1;
  for (const m of messages) if (m.timestamp > updatedAt) updatedAt = m.timestamp;
  return { ...meta, messageCount: messages.length, updatedAt };
}
