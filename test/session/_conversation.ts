/** Conversations for the compaction tests: `turns` user turns of a request, a tool call, an answer. */
import type { StoredMessage } from "../../src/storage/records.ts";

export const say = (
  id: string,
  role: StoredMessage["role"],
  content: string,
  extra: Partial<StoredMessage> = {},
) => ({ id, role, parts: [{ type: "text", content }], timestamp: 1, ...extra }) as StoredMessage;

/**
 * Turn t: `u<t>` "request t", `a<t>` an `edit` of `f<t>.ts` (result `result(t)`, default "ok";
 * with `decision`, preceded by a sentence the built-in summarizer takes for a decision), `b<t>`
 * "finished t".
 */
export function conversation(
  turns: number,
  opts: { decision?: boolean; result?: (t: number) => string } = {},
): StoredMessage[] {
  const out: StoredMessage[] = [];
  for (let t = 1; t <= turns; t++) {
    out.push(say(`u${t}`, "user", `request ${t}`));
    out.push({
      id: `a${t}`,
      role: "assistant",
      timestamp: 1,
      parts: [
        ...(opts.decision
          ? [{ type: "text" as const, content: `I decided to edit file ${t} because it is needed.` }]
          : []),
        {
          type: "tool",
          tool: { name: "edit", args: { path: `f${t}.ts` } },
          result: opts.result?.(t) ?? "ok",
        },
      ],
    });
    out.push(say(`b${t}`, "assistant", `finished ${t}`));
  }
  return out;
}
