/** `freecode session show <id>`: the messages readably (tool calls folded), or turn by turn. */
import { getSession } from "../../../session/lifecycle.ts";
import { turnsOf } from "../../../session/turns.ts";
import type { Part, StoredMessage } from "../../../storage/records.ts";
import { escapeLine, escapeText, oneLine } from "../../../util/one-line.ts";
import { command } from "../../_command.ts";
import { ID_ARG, when, withStore } from "./_shared.ts";

/** A part as text; recorded text has its control characters escaped (line ends kept). */
function part(p: Part, full: boolean): string {
  switch (p.type) {
    case "text":
      return escapeText(p.content ?? "");
    case "code":
      return `\`\`\`${escapeLine(p.language ?? "")}\n${escapeText(p.content ?? "")}\n\`\`\``;
    case "image":
      return escapeLine(`[image ${p.mediaType ?? ""}${p.altText ? `: ${p.altText}` : ""}]`);
    case "tool": {
      const head = `▸ ${escapeLine(p.tool?.name ?? "?")}(${oneLine(p.tool?.args ?? {}, 100)})`;
      if (p.result === undefined) return `${head} … no result`;
      const mark = p.failed ? "✗" : "✓";
      return full
        ? `${head}\n  ${mark} ${escapeText(String(p.result))}`
        : `${head} ${mark} ${oneLine(p.result, 100)}`;
    }
  }
}

function message(m: StoredMessage, full: boolean): string {
  const flags = [
    m.interrupted ? "interrupted" : "",
    m.synthetic ? `synthetic:${m.synthetic}` : "",
    m.usage ? `usage in=${m.usage.inputTokens ?? 0} out=${m.usage.outputTokens ?? 0}` : "",
  ].filter(Boolean);
  const head = escapeLine(
    `── ${m.role} ${m.id} ${when(m.timestamp)}${flags.length ? ` [${flags.join(", ")}]` : ""}`,
  );
  return `${head}\n${m.parts.map((p) => part(p, full)).join("\n")}`;
}

export default command({
  meta: { name: "show", description: "Show a session's messages (readable, --turns, or --json)" },
  args: {
    ...ID_ARG,
    turns: { type: "boolean", description: "Turn by turn: prompt, tool calls, outcome" },
    full: { type: "boolean", description: "Do not fold tool results" },
  },
  async run(ctx, args) {
    const { meta, messages, issues } = await withStore(ctx, async (store) => {
      const meta = await getSession(store, args.id);
      return { meta, ...(await store.readMessages(meta.id)) };
    });
    for (const i of issues) ctx.log.warn(`${i.file ?? ""}:${i.line ?? "?"}: ${i.message}`);
    if (args.turns) {
      const turns = turnsOf(messages);
      if (ctx.json) ctx.out({ meta, turns, issues });
      else {
        const lines = [escapeLine(`${meta.title} (${meta.id}, ${meta.status}, ${turns.length} turns)`)];
        for (const t of turns) {
          lines.push(
            `\n#${t.index} ${when(t.startedAt)}${t.interrupted ? " [interrupted]" : ""}`,
            `  prompt:  ${oneLine(t.prompt, 200) || "(none)"}`,
          );
          for (const tool of t.tools)
            lines.push(
              `  tool:    ${escapeLine(tool.name)}(${oneLine(tool.args, 100)})${tool.pending ? " … no result" : tool.failed ? " ✗" : " ✓"}`,
            );
          lines.push(`  outcome: ${oneLine(t.outcome, 200) || "(no reply)"}`);
        }
        ctx.out(`${lines.join("\n")}\n`);
      }
      return 0;
    }
    if (ctx.json) ctx.out({ meta, messages, issues });
    else {
      const head = `${escapeLine(meta.title)}\n${escapeLine(meta.id)} · ${meta.status} · ${escapeLine(meta.projectPath)} · ${escapeLine(`${meta.provider ?? "?"}/${meta.model ?? "?"}`)} · ${meta.messageCount} messages, ${meta.turnCount} turns${meta.parentId ? ` · fork of ${meta.parentId}` : ""}`;
      // A message at a time: a long session's text is not built as one string first.
      ctx.out(`${head}\n\n`);
      for (let i = 0; i < messages.length; i++)
        ctx.out(`${i > 0 ? "\n\n" : ""}${message(messages[i]!, args.full === true)}`);
      ctx.out("\n");
    }
    return 0;
  },
});
