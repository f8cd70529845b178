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
 * Check that `messages` puts at most one `usage` on each provider response, given the meta's last
 * response that carried usage. Throws `bad_input` naming the offending message.
 */
export function checkUsageRule(meta: Pick<SessionMeta, "usageResponseId">, messages: StoredMessage[]): void {
  let last = meta.usageResponseId;
  const seen = new Set<string>();
  for (const [i, m] of messages.entries()) {
    if (!m.usage || m.responseId === undefined) continue;
    if (m.responseId === last || seen.has(m.responseId)) {
      throw badInput(
        `message ${m.id}: provider response ${m.responseId} already has usage (usage goes on one message per response)`,
        { field: `[${i}].usage` },
      );
    }
    seen.add(m.responseId);
    last = m.responseId;
  }
}

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
