/**
 * History loading: stored messages → the message list an agent loop sends to a provider. The
 * provider's own tool-call id is not stored, so it is re-derived as `tool-<msgId>-<partIndex>`:
 * stable across reloads and unique within a message (keying by message alone made several calls
 * of one message collide). Tool args that are not a plain object are refused when a message is
 * written (`toStoredMessages`); a message stored before that rule (or by another writer) is read
 * with its args kept whole under `input` (below), never dropped and never passed on as they are.
 */
import { badInput } from "../errors.ts";
import type { StoredMessage } from "../storage/records.ts";
import { isPlainObject } from "./schema.ts";

export type LoopBlock =
  | { type: "text"; text: string }
  | { type: "image"; mediaType: string; data: string }
  | { type: "tool_use"; id: string; name: string; input: Record<string, unknown> }
  | { type: "tool_result"; toolUseId: string; content: string; isError: boolean };

export interface LoopMessage {
  role: "user" | "assistant" | "system";
  content: LoopBlock[];
  /** The stored message this came from. */
  sourceId: string;
}

/** The derived tool-call id of part `partIndex` of message `messageId`. */
export const toolCallId = (messageId: string, partIndex: number) => `tool-${messageId}-${partIndex}`;

/**
 * A provider's tool input is an object. Arguments stored as anything else (a freeform tool's raw
 * text, a value a library user appended) are kept whole under `input`, as the Codex importer stores
 * freeform input: never dropped (`args || {}` once turned `"rm -rf /"` into `{}`), and never a
 * reason the session cannot be resumed.
 */
const toolInput = (args: unknown): Record<string, unknown> => (isPlainObject(args) ? args : { input: args });

/** The result a tool call with none recorded gets in the loop's messages. */
export const NO_RESULT_TEXT =
  "No result was recorded for this tool call: it was interrupted before it finished.";

const resultText = (r: unknown) => (typeof r === "string" ? r : JSON.stringify(r));

/**
 * Map stored messages to loop messages. An assistant message with tool calls is followed by a
 * user message carrying their results (the shape providers expect), a call with none recorded
 * answered by an error result saying so (`NO_RESULT_TEXT`).
 */
export function loadHistory(stored: StoredMessage[]): LoopMessage[] {
  const out: LoopMessage[] = [];
  for (const m of stored) {
    const content: LoopBlock[] = [];
    const results: LoopBlock[] = [];
    m.parts.forEach((p, i) => {
      switch (p.type) {
        case "text":
          content.push({ type: "text", text: p.content ?? "" });
          break;
        case "code":
          content.push({ type: "text", text: `\`\`\`${p.language ?? ""}\n${p.content ?? ""}\n\`\`\`` });
          break;
        case "image":
          content.push({ type: "image", mediaType: p.mediaType ?? "image/png", data: p.data ?? "" });
          break;
        case "tool": {
          const args = p.tool?.args === undefined ? {} : p.tool.args;
          if (!p.tool?.name)
            throw badInput(`message ${m.id} part ${i}: tool part without a tool name`, {
              field: `parts[${i}].tool`,
            });
          const id = toolCallId(m.id, i);
          content.push({ type: "tool_use", id, name: p.tool.name, input: toolInput(args) });
          // A call with no result recorded (the turn was interrupted, the process died) still gets
          // one: providers refuse a tool_use that no tool_result answers.
          results.push(
            p.result !== undefined
              ? {
                  type: "tool_result",
                  toolUseId: id,
                  content: resultText(p.result),
                  isError: p.failed === true,
                }
              : { type: "tool_result", toolUseId: id, content: NO_RESULT_TEXT, isError: true },
          );
          break;
        }
      }
    });
    out.push({ role: m.role, content, sourceId: m.id });
    if (results.length) out.push({ role: "user", content: results, sourceId: m.id });
  }
  return out;
}
