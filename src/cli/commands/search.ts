/**
 * `freecode search <query>`: full text over titles, message text, tool names and arguments, ranked
 * (BM25), with the match highlighted in a snippet — colour on a terminal, `[…]` otherwise. FTS5 when
 * the thread store has it, a scan with the same result shape otherwise (`engine` in --json says).
 */
import { usageError } from "../../errors.ts";
import { searchThreads } from "../../threads/api.ts";
import { renderSnippet } from "../../threads/search-text.ts";
import { escapeControl, escapeLine } from "../../util/one-line.ts";
import { command, wholeNumber } from "../_command.ts";
import { withOpenStore } from "./store/_open.ts";

/** Control characters of recorded text, but the match markers (\x02 \x03) `renderSnippet` reads. */
const SNIPPET_CONTROLS = /[\x00\x01\x04-\x08\x0e-\x1f\x7f-\x9f]/g;

/** A date flag: ISO date/time, or epoch milliseconds. */
function parseTime(value: string | undefined, flag: string, endOfDay = false): number | undefined {
  if (value === undefined) return undefined;
  if (/^\d+$/.test(value)) return Number(value);
  const dateOnly = /^\d{4}-\d{2}-\d{2}$/.test(value);
  const ms = Date.parse(dateOnly ? `${value}T00:00:00Z` : value);
  if (Number.isNaN(ms))
    throw usageError(`--${flag} must be a date (YYYY-MM-DD), a date-time or epoch ms (got "${value}")`);
  return dateOnly && endOfDay ? ms + 86_400_000 - 1 : ms;
}

export default command({
  meta: { name: "search", description: "Full-text search over sessions: titles, messages, tool calls" },
  args: {
    query: { type: "positional", required: true, description: "Words to find (each as a word prefix)" },
    project: { type: "string", description: "Only sessions of this project path (or below it)" },
    since: { type: "string", description: "Only matches at or after this date (YYYY-MM-DD, ISO, epoch ms)" },
    until: { type: "string", description: "Only matches at or before this date (a date includes its day)" },
    tool: { type: "string", description: "Only calls of this tool (name and arguments)" },
    all: { type: "boolean", description: "Include deleted sessions" },
    limit: { type: "string", description: "At most this many hits (default 20)" },
    scan: { type: "boolean", description: "Scan instead of using the index (slow; for checking)" },
  },
  async run(ctx, args) {
    const limit = wholeNumber(args.limit, "limit", 1) ?? 20;
    const query = {
      text: args.query,
      ...(args.project ? { projectPath: args.project } : {}),
      ...(args.since ? { since: parseTime(args.since, "since") } : {}),
      ...(args.until ? { until: parseTime(args.until, "until", true) } : {}),
      ...(args.tool ? { tool: args.tool } : {}),
      all: args.all === true,
      limit,
    };
    const result = await withOpenStore(ctx, (adapter) =>
      searchThreads(adapter, ctx.home, query, args.scan ? { engine: "scan" } : {}),
    );
    if (ctx.json) {
      ctx.out({
        ...result,
        hits: result.hits.map((h) => ({ ...h, snippet: renderSnippet(h.snippet, false) })),
      });
      return 0;
    }
    if (result.hits.length === 0) {
      ctx.out("no matches\n");
      return 0;
    }
    const dim = (s: string) => (ctx.color ? `\x1b[2m${s}\x1b[0m` : s);
    const lines = result.hits.map((h) => {
      const where =
        h.kind === "title"
          ? "title"
          : h.kind === "tool"
            ? `turn ${h.turn} tool ${h.tool}`
            : `turn ${h.turn} ${h.role}`;
      const snippet = h.snippet.replace(SNIPPET_CONTROLS, escapeControl);
      return `${h.sessionId}  ${dim(escapeLine(`${h.title} · ${where} · ${new Date(h.timestamp).toISOString()}`))}\n  ${renderSnippet(snippet, ctx.color)}`;
    });
    ctx.out(
      `${lines.join("\n")}\n${dim(`${result.hits.length} of ${result.total} matches (${result.engine})`)}\n`,
    );
    return 0;
  },
});
