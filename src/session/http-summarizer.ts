/**
 * An LLM-backed compaction summarizer: the messages compaction drops, rendered as a plain
 * transcript, go to an OpenAI-compatible chat completions endpoint, which answers with the four
 * sections as JSON. Nothing is stored until the answer is read and checked, so a provider that
 * fails, times out or answers out of shape leaves the session as it was (compaction stores its
 * plan only after the summary exists).
 */
import * as v from "valibot";
import type { Part, StoredMessage } from "../storage/records.ts";
import { clip } from "../util/one-line.ts";
import { type ChatEndpoint, chatClient, parseFailure } from "./_chat-completion.ts";
import { type CompactionSummary, renderSummary, type Summarizer } from "./summarizer.ts";

export interface HttpSummarizerOptions extends ChatEndpoint {
  /** The transcript sent is cut to about this many characters, oldest messages first (default 200,000). */
  maxChars?: number;
}

const INSTRUCTIONS = `You summarize the older part of a conversation between a user and an AI coding agent, so the agent can continue without it.
Answer with one JSON object and nothing else, with exactly these fields:
{"taskGoal": string, "completedSteps": string[], "keyDecisions": string[], "currentState": string}
- taskGoal: what the user wants done overall, in one or two sentences.
- completedSteps: what was done, in order, one short line each (files changed, commands run and their outcome).
- keyDecisions: choices made and why, one short line each.
- currentState: where the work stands at the end of this part: what works, what is failing, what was about to happen.
Keep file names, function names, commands and error messages exact. If a previous summary is given, build on it: it covers what came before this part.`;

/** The answer's shape; lines are clipped so a chatty model cannot bloat the session's meta. */
const Answer = v.object({
  taskGoal: v.string(),
  completedSteps: v.array(v.string()),
  keyDecisions: v.array(v.string()),
  currentState: v.string(),
});

function partText(p: Part): string {
  switch (p.type) {
    case "text":
      return p.content ?? "";
    case "code":
      return `\`\`\`${p.language ?? ""}\n${p.content ?? ""}\n\`\`\``;
    case "image":
      return `[image${p.altText ? `: ${p.altText}` : ""}]`;
    case "tool": {
      const call = `[tool ${p.tool?.name ?? "?"} ${clip(JSON.stringify(p.tool?.args ?? {}), 1_000)}]`;
      if (p.result === undefined) return `${call} (no result)`;
      const result = typeof p.result === "string" ? p.result : JSON.stringify(p.result);
      return `${call}\n[${p.denied ? "denied" : p.failed ? "failed" : "result"}] ${clip(result, 2_000)}`;
    }
  }
}

/** A message as transcript text, at most ~8,000 characters. */
export function transcriptLine(m: StoredMessage): string {
  return clip(`${m.role}: ${m.parts.map(partText).join("\n")}`, 8_000);
}

/** The user content of the request: previous summary, the dropped part (cut to `maxChars`), what follows. */
export function summaryRequestText(
  input: { dropped: StoredMessage[]; kept: StoredMessage[]; previous?: string },
  maxChars: number,
): string {
  const lines = input.dropped.map(transcriptLine);
  // Oldest first out: the end of the part says most about where the work stands.
  let total = lines.reduce((n, l) => n + l.length + 2, 0);
  let skip = 0;
  while (total > maxChars && skip < lines.length - 1) total -= lines[skip++]!.length + 2;
  const body = [
    ...(skip > 0 ? [`[… ${skip} earlier message(s) left out …]`] : []),
    ...lines.slice(skip),
  ].join("\n\n");
  const next = input.kept.find((m) => m.role === "user" && !m.synthetic);
  return [
    input.previous ? `Previous summary:\n${input.previous}` : "",
    `Conversation part to summarize:\n${body}`,
    next ? `The conversation then continues with this user message:\n${transcriptLine(next)}` : "",
  ]
    .filter(Boolean)
    .join("\n\n---\n\n");
}

/** The JSON object in a reply that may wrap it in a code fence or a sentence. */
function jsonIn(content: string): unknown {
  const start = content.indexOf("{");
  const end = content.lastIndexOf("}");
  if (start === -1 || end < start) throw new Error("no JSON object in the reply");
  return JSON.parse(content.slice(start, end + 1));
}

/** A summarizer that asks the model at `url`; its name (in the session's summary) is `http:<model>`. */
export function httpSummarizer(options: HttpSummarizerOptions): Summarizer {
  const client = chatClient(options, "summarizer");
  const expected = "the JSON summary asked for";
  return {
    name: `http:${options.model}`,
    async summarize(input): Promise<CompactionSummary> {
      const content = await client.complete(
        [
          { role: "system", content: INSTRUCTIONS },
          { role: "user", content: summaryRequestText(input, options.maxChars ?? 200_000) },
        ],
        expected,
      );
      let answer: v.InferOutput<typeof Answer>;
      try {
        answer = v.parse(Answer, jsonIn(content));
      } catch (error) {
        throw client.fail(`the answer is not ${expected}`, parseFailure(error), error);
      }
      const summary = {
        taskGoal: clip(answer.taskGoal.trim(), 1_000) || "(unknown)",
        completedSteps: answer.completedSteps.slice(0, 50).map((s) => clip(s.trim(), 300)),
        keyDecisions: answer.keyDecisions.slice(0, 20).map((s) => clip(s.trim(), 300)),
        currentState: clip(answer.currentState.trim(), 2_000) || "(nothing recorded)",
      };
      return { ...summary, text: renderSummary(summary) };
    },
  };
}
