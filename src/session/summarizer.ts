/**
 * Compaction summaries (seed 001: task goal, completed steps, key decisions, current state). The
 * summarizer is an interface; the built-in one is deterministic — the same messages always give
 * the same summary — and reads only the transcript (an LLM-backed one plugs in the same way).
 */
import type { StoredMessage } from "../storage/records.ts";
import { cutText } from "../util/cut-text.ts";
import { messageText } from "./lifecycle.ts";

export interface CompactionSummary {
  taskGoal: string;
  completedSteps: string[];
  keyDecisions: string[];
  currentState: string;
  /** The four sections as one text, what goes into the system prompt. */
  text: string;
}

export interface Summarizer {
  readonly name: string;
  /** Summarize `dropped` (the messages compaction removes), building on a `previous` summary. */
  summarize(input: {
    dropped: StoredMessage[];
    kept: StoredMessage[];
    previous?: string;
  }): Promise<CompactionSummary>;
}

const clip = (s: string, n: number) => {
  const t = s.replace(/\s+/g, " ").trim();
  return cutText(t, n);
};

const DECISION = /\b(decid\w*|chose|choos\w*|instead|will use|going with|because|prefer\w*)\b/i;

function describeArgs(args: unknown): string {
  if (args && typeof args === "object") {
    const first = Object.values(args as Record<string, unknown>).find((v) => typeof v === "string");
    if (typeof first === "string") return ` ${clip(first, 60)}`;
  }
  return "";
}

/** Render the four sections as text. */
export function renderSummary(s: Omit<CompactionSummary, "text">): string {
  const list = (xs: string[]) => (xs.length ? xs.map((x) => `- ${x}`).join("\n") : "- (none)");
  return [
    `## Task goal\n${s.taskGoal}`,
    `## Completed steps\n${list(s.completedSteps)}`,
    `## Key decisions\n${list(s.keyDecisions)}`,
    `## Current state\n${s.currentState}`,
  ].join("\n\n");
}

/** The deterministic built-in summarizer. */
export const builtinSummarizer: Summarizer = {
  name: "builtin",
  async summarize({ dropped, kept, previous }) {
    const prevGoal = previous ? /## Task goal\n(.*)/.exec(previous)?.[1] : undefined;
    const firstUser = dropped.find((m) => m.role === "user" && !m.synthetic);
    const taskGoal = prevGoal ?? (firstUser ? clip(messageText(firstUser), 300) : "(unknown)");
    const steps: string[] = [];
    const decisions: string[] = [];
    for (const m of dropped) {
      for (const p of m.parts) {
        if (p.type === "tool" && p.tool?.name) {
          const step = `${p.tool.name}${describeArgs(p.tool.args)}${p.failed ? " (failed)" : ""}`;
          if (!steps.includes(step)) steps.push(step);
        }
      }
      if (m.role === "assistant") {
        for (const sentence of messageText(m).split(/(?<=[.!?])\s+/)) {
          if (DECISION.test(sentence) && decisions.length < 10) decisions.push(clip(sentence, 200));
        }
      }
    }
    const lastAssistant = [...dropped].reverse().find((m) => m.role === "assistant" && messageText(m).trim());
    const nextUser = kept.find((m) => m.role === "user");
    const currentState =
      [
        lastAssistant ? `Last reply before the kept turns: ${clip(messageText(lastAssistant), 300)}` : "",
        nextUser ? `Next request: ${clip(messageText(nextUser), 200)}` : "",
      ]
        .filter(Boolean)
        .join("\n") || "(nothing recorded)";
    const summary = { taskGoal, completedSteps: steps.slice(-30), keyDecisions: decisions, currentState };
    return { ...summary, text: renderSummary(summary) };
  },
};
