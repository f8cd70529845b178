/** `freecode store info`: the adapter in use, why it was chosen, where it keeps data, and counts. */
import { keepsState } from "../../../home.ts";
import { openThreadStore } from "../../../threads/store.ts";
import { command } from "../../_command.ts";
import { withOpenStore } from "./_open.ts";

export default command({
  meta: { name: "info", description: "Show the storage adapter in use and why it was chosen" },
  async run(ctx) {
    const info = await withOpenStore(ctx, async (adapter, reason) => {
      const page = await adapter.listSessions({ all: true, limit: 0 });
      const threads = await openThreadStore(ctx.home, {
        inMemory: !adapter.capabilities.persistent || !keepsState(ctx.home),
      });
      threads.close();
      const by = ctx.storeSource();
      return {
        adapter: adapter.name,
        reason: by ? `${reason} by ${by}` : reason,
        location: adapter.location,
        capabilities: adapter.capabilities,
        sessions: page.total,
        eventLogs: (await adapter.listEventLogs()).length,
        threadStore: {
          engine: threads.engine,
          location: threads.location,
          search: threads.engine === "sqlite" ? "fts5" : "scan",
        },
      };
    });
    if (ctx.json) ctx.out(info);
    else {
      ctx.out(
        [
          `adapter:      ${info.adapter} (${info.reason})`,
          `location:     ${info.location}`,
          `capabilities: ${Object.entries(info.capabilities)
            .map(([k, v]) => `${k}=${v}`)
            .join(" ")}`,
          `sessions:     ${info.sessions} (${info.eventLogs} rollout logs)`,
          `threads:      ${info.threadStore.engine} at ${info.threadStore.location} (search: ${info.threadStore.search})`,
          "",
        ].join("\n"),
      );
    }
    return 0;
  },
});
