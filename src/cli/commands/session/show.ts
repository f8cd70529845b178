/**
 * `freecode session show <id>`: the messages readably (tool calls folded), or turn by turn as the
 * thread store sees them (`turnItemsView`).
 */
import { notFound } from "../../../errors.ts";
import { hasEventLog } from "../../../storage/has-event-log.ts";
import type { Part, SessionMeta, StoredMessage } from "../../../storage/records.ts";
import { turnItemsView } from "../../../threads/api.ts";
import type { TurnItem } from "../../../threads/types.ts";
import { escapeLine, escapeText, oneLine } from "../../../util/one-line.ts";
import { plural } from "../../../util/plural.ts";
import { command, wholeNumber } from "../../_command.ts";
import { completeId } from "../../_session-id.ts";
import { READ_ID_ARG, when, withStore } from "./_shared.ts";

/**
 * A tool's result shown whole: a string as it is, content blocks (Claude Code's `[{type: "text",
 * text}]`) by their text, any other value as JSON (`String()` printed `[object Object]`).
 */
function resultText(result: unknown): string {
  if (typeof result === "string") return result;
  const blocks = Array.isArray(result) ? (result as { text?: unknown }[]) : undefined;
  if (blocks?.length && blocks.every((b) => typeof b?.text === "string"))
    return blocks.map((b) => b.text).join("\n");
  return JSON.stringify(result, null, 2) ?? String(result);
}

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
        ? `${head}\n  ${mark} ${escapeText(resultText(p.result))}`
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

/** A tool call of a turn on one line: how it went, who denied it, how long it took. */
function toolLine(tool: TurnItem["tools"][number]): string {
  const how = tool.deniedBy
    ? ` ✗ denied by ${escapeLine(tool.deniedBy)}`
    : tool.failed
      ? " ✗"
      : tool.pending
        ? " … no result"
        : " ✓";
  const took = tool.durationMs !== undefined ? ` ${tool.durationMs} ms` : "";
  return `  tool:    ${escapeLine(tool.name)}(${oneLine(tool.args ?? {}, 100)})${how}${took}`;
}

/** The turns; `meta` undefined for a session the rollout alone holds (`rolloutId`). */
function turnLines(
  meta: SessionMeta | undefined,
  rolloutId: string,
  turns: TurnItem[],
  total: number,
): string[] {
  const shown = turns.length < total ? `, the last ${turns.length} shown` : "";
  const head = meta
    ? `${meta.title} (${meta.id}, ${meta.status}, ${plural(total, "turn")}${shown})`
    : `(rollout only) ${rolloutId} (${plural(total, "turn")}${shown}; no messages: turns from its rollout log)`;
  const lines = [escapeLine(head)];
  for (const t of turns) {
    const flag = t.outcome === "interrupted" ? " [interrupted]" : "";
    lines.push(
      `\n#${t.number} ${when(t.startedAt)} (${t.durationMs} ms)${flag}`,
      `  prompt:  ${oneLine(t.prompt, 200) || "(none)"}`,
      ...t.tools.map(toolLine),
      t.error !== undefined
        ? `  outcome: provider error: ${oneLine(t.error, 200)}`
        : `  outcome: ${oneLine(t.response ?? "", 200) || "(no reply)"}`,
    );
  }
  return lines;
}

export default command({
  meta: { name: "show", description: "Show a session's messages (readable, --turns, or --json)" },
  args: {
    ...READ_ID_ARG,
    turns: { type: "boolean", description: "Turn by turn: prompt, tool calls, outcome" },
    full: { type: "boolean", description: "Do not fold tool results" },
    last: {
      type: "string",
      description: "Only the last N messages (with --turns: the last N turns)",
      valueHint: "N",
    },
  },
  async run(ctx, args) {
    const last = wholeNumber(args.last, "last", 1);
    const tail = <T>(xs: T[]): T[] => (last === undefined ? xs : xs.slice(-last));
    const { id, meta, messages, issues, items } = await withStore(ctx, async (store) => {
      const id = await completeId(store, args.id, args.turns ? "any" : "sessions");
      // A session the rollout alone holds (a recorder of another agent's) has turns, not messages:
      // `--turns` shows them, as search finds them (it said "no session").
      const meta = await store.getMeta(id);
      const logOnly = !meta && (await hasEventLog(store, id));
      if (!meta && !(args.turns && logOnly)) {
        throw notFound(
          `no session ${id}${logOnly ? `: only its rollout log is stored (\`freecode session show ${id} --turns\`, \`freecode trace ${id}\`)` : ""}`,
        );
      }
      const read = meta ? await store.readMessages(meta.id) : { messages: [], issues: [] };
      // The thread store's view: calls compaction erased (the rollout keeps them), durations and
      // denials from the rollout, where the message log alone knows none of these.
      const items = args.turns ? await turnItemsView(store, ctx.home, id) : undefined;
      return { id, meta, ...read, items };
    });
    for (const i of issues) ctx.log.warn(`${i.file ?? ""}:${i.line ?? "?"}: ${i.message}`);
    if (items) {
      // `interrupted` as before the turns came from the thread store (outcome says it too).
      const shown = tail(items);
      const turns = shown.map((t) => ({ ...t, interrupted: t.outcome === "interrupted" }));
      if (ctx.json)
        ctx.out({
          ...(meta ? { meta } : { id, rolloutOnly: true }),
          turns,
          ...(last !== undefined ? { omitted: items.length - shown.length } : {}),
          issues,
        });
      // A compacted session's turns are numbered as it counts them: the last one's number is the count.
      else ctx.out(`${turnLines(meta, id, shown, items.at(-1)?.number ?? 0).join("\n")}\n`);
      return 0;
    }
    if (!meta) return 0; // only with --turns
    const shown = tail(messages);
    if (ctx.json)
      ctx.out({
        meta,
        messages: shown,
        ...(last !== undefined ? { omitted: messages.length - shown.length } : {}),
        issues,
      });
    else {
      const head = `${escapeLine(meta.title)}\n${escapeLine(meta.id)} · ${meta.status} · ${escapeLine(meta.projectPath)} · ${escapeLine(`${meta.provider ?? "?"}/${meta.model ?? "?"}`)} · ${plural(meta.messageCount, "message")}, ${plural(meta.turnCount, "turn")}${meta.parentId ? ` · fork of ${meta.parentId}` : ""}`;
      // A message at a time: a long session's text is not built as one string first.
      const skipped = messages.length - shown.length;
      ctx.out(`${head}\n\n${skipped > 0 ? `(${skipped} earlier messages not shown)\n\n` : ""}`);
      for (let i = 0; i < shown.length; i++)
        ctx.out(`${i > 0 ? "\n\n" : ""}${message(shown[i]!, args.full === true)}`);
      ctx.out("\n");
    }
    return 0;
  },
});
