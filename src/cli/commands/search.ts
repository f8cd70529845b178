import { usageError } from "../../errors.ts";
import { comparableProjectPath } from "../../storage/project-key.ts";
import { searchThreads } from "../../threads/api.ts";
import { renderSnippet } from "../../threads/search-text.ts";
import { escapeControl, escapeLine } from "../../util/one-line.ts";
import { command, wholeNumber } from "../_command.ts";
import { withOpenStore } from "./store/_open.ts";

/** Control characters of recorded text (bidirectional overrides too: see `one-line.ts`), but the
 * match markers (\x02 \x03) `renderSnippet` reads. */
const SNIPPET_CONTROLS = /[\x00\x01\x04-\x08\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/g;

const ISO = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})?)?$/;

/** Whether the parts of an ISO date (and time) name a real one: `2025-02-30` does not. */
function realDate(m: RegExpExecArray): boolean {
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const days = new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (month < 1 || month > 12 || day < 1 || day > days) return false;
  if (m[4] === undefined) return true;
  const zone = m[7]?.match(/^[+-](\d{2}):(\d{2})$/);
  return (
    Number(m[4]) <= 23 &&
    Number(m[5]) <= 59 &&
    Number(m[6] ?? 0) <= 59 &&
    (!zone || (Number(zone[1]) <= 23 && Number(zone[2]) <= 59))
  );
}

/**
 * A date flag: YYYY-MM-DD (UTC; with `endOfDay` its last millisecond), an ISO date-time (local
 * time without a zone), or epoch ms. Anything else is refused: `Date.parse` reads `2025-02-30` as
 * March 2 and `-5` as a year.
 */
function parseTime(value: string, flag: string, endOfDay = false): number {
  const fail = () =>
    usageError(`--${flag} must be a date (YYYY-MM-DD), an ISO date-time or epoch ms (got "${value}")`);
  if (/^\d+$/.test(value)) {
    const ms = Number(value);
    if (!Number.isSafeInteger(ms)) throw fail();
    return ms;
  }
  const m = ISO.exec(value);
  if (!m || !realDate(m)) throw fail();
  const dateOnly = m[4] === undefined;
  const ms = Date.parse(dateOnly ? `${value}T00:00:00Z` : value);
  if (Number.isNaN(ms)) throw fail();
  return dateOnly && endOfDay ? ms + 86_400_000 - 1 : ms;
}

export default command({
  manyPositionals: true,
  meta: {
    name: "search",
    description: "Full-text search over sessions: titles, messages, tool calls and their outputs",
  },
  args: {
    query: {
      type: "positional",
      required: true,
      description: "Words to find, every one (each as a word prefix); quoting them is optional",
    },
    project: { type: "string", description: "Only sessions of this project path (or below it)" },
    since: { type: "string", description: "Only matches at or after this date (YYYY-MM-DD, ISO, epoch ms)" },
    until: { type: "string", description: "Only matches at or before this date (a date includes its day)" },
    tool: { type: "string", description: "Only calls of this tool (name and arguments, and output)" },
    all: { type: "boolean", description: "Include deleted sessions" },
    limit: { type: "string", description: "At most this many hits (default 20)" },
    scan: { type: "boolean", description: "Scan instead of using the index (slow; for checking)" },
  },
  async run(ctx, args) {
    const limit = wholeNumber(args.limit, "limit", 1) ?? 20;
    const query = {
      // Every positional: `search todo zzz` must match both words, as `search "todo zzz"` does.
      text: (args._ as string[]).map(String).join(" "),
      ...(args.project ? { projectPath: comparableProjectPath(args.project) } : {}),
      ...(args.since ? { since: parseTime(args.since, "since") } : {}),
      ...(args.until ? { until: parseTime(args.until, "until", true) } : {}),
      ...(args.tool ? { tool: args.tool } : {}),
      all: args.all === true,
      limit,
    };
    const result = await withOpenStore(ctx, (adapter) =>
      searchThreads(adapter, ctx.home, query, args.scan ? { engine: "scan" } : {}),
    );
    // Searched around, and said: a session whose stored data cannot be read.
    for (const u of result.unreadable ?? [])
      ctx.log.warn(`session ${u.id} left out of the search: ${u.message}`);
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
            : h.kind === "output"
              ? `turn ${h.turn} output of ${h.tool}`
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
