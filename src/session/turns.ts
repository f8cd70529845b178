/**
 * The turn view of a message log: turn by turn, the prompt, the tool calls, and the outcome.
 * Derived from the messages alone (a turn starts at each non-synthetic user message), so it works
 * for every session, imported or live, with or without a rollout log.
 */
import type { StoredMessage } from "../storage/records.ts";
import { messageText } from "./lifecycle.ts";

export interface TurnToolCall {
  name: string;
  args: unknown;
  failed: boolean;
  /** No result stored: it never completed (or was interrupted). */
  pending: boolean;
}

export interface TurnView {
  index: number;
  /** Id of the prompt message (absent for messages before the first prompt). */
  promptId?: string;
  prompt: string;
  tools: TurnToolCall[];
  /** The last assistant text of the turn. */
  outcome: string;
  interrupted: boolean;
  messageCount: number;
  startedAt: number;
}

/** Fold a message log into turns. */
export function turnsOf(messages: StoredMessage[]): TurnView[] {
  const turns: TurnView[] = [];
  let current: TurnView | undefined;
  for (const m of messages) {
    if (!current || (m.role === "user" && !m.synthetic)) {
      const opens = m.role === "user" && !m.synthetic;
      current = {
        index: turns.length + 1,
        ...(opens ? { promptId: m.id } : {}),
        prompt: opens ? messageText(m) : "",
        tools: [],
        outcome: "",
        interrupted: false,
        messageCount: 0,
        startedAt: m.timestamp,
      };
      turns.push(current);
    }
    current.messageCount++;
    if (m.interrupted) current.interrupted = true;
    for (const p of m.parts) {
      if (p.type === "tool" && p.tool) {
        current.tools.push({
          name: p.tool.name,
          args: p.tool.args,
          failed: p.failed === true,
          pending: p.result === undefined,
        });
      }
    }
    if (m.role === "assistant") {
      const text = messageText(m).trim();
      if (text) current.outcome = text;
    }
  }
  return turns;
}
