/** `freecode session list`: newest first, pinned on top, deleted hidden unless --all. */
import { usageError } from "../../../errors.ts";
import { listSessions } from "../../../session/lifecycle.ts";
import { recoverCrashed } from "../../../session/status.ts";
import { comparableProjectPath } from "../../../storage/project-key.ts";
import { SESSION_STATUSES, type SessionStatus } from "../../../storage/records.ts";
import { command, wholeNumber } from "../../_command.ts";
import { sessionLine, withStore } from "./_shared.ts";

export default command({
  meta: { name: "list", description: "List sessions (newest first, pinned first)" },
  args: {
    project: { type: "string", description: "Only sessions of this project path" },
    status: {
      type: "string",
      description: `Only this status (comma-separated): ${SESSION_STATUSES.join("|")}`,
    },
    all: { type: "boolean", description: "Include deleted sessions" },
    limit: { type: "string", description: "At most this many (default 50)" },
    offset: { type: "string", description: "Skip this many" },
  },
  async run(ctx, args) {
    const status = args.status?.split(",").map((s) => s.trim()) as SessionStatus[] | undefined;
    for (const s of status ?? []) {
      if (!SESSION_STATUSES.includes(s))
        throw usageError(`unknown status "${s}" (expected ${SESSION_STATUSES.join(", ")})`);
    }
    const page = await withStore(ctx, async (store) => {
      await recoverCrashed(store);
      return listSessions(store, {
        ...(args.project ? { projectPath: comparableProjectPath(args.project) } : {}),
        ...(status ? { status } : {}),
        all: args.all === true,
        limit: wholeNumber(args.limit, "limit") ?? 50,
        offset: wholeNumber(args.offset, "offset") ?? 0,
      });
    });
    if (ctx.json) ctx.out(page);
    else if (page.total === 0) ctx.out("no sessions\n");
    // An empty page of a longer list (`--limit 0`, or `--offset` past the end) says how many there are.
    else if (page.items.length === 0) ctx.out(`0 of ${page.total}\n`);
    else {
      const width = Math.max(30, ...page.items.map((m) => m.id.length));
      const lines = page.items.map((m) => sessionLine(m, width));
      ctx.out(`${lines.join("\n")}\n${page.items.length} of ${page.total}\n`);
    }
    return 0;
  },
});
