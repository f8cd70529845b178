/** `freecode store reindex`: rebuild the adapter's derived index (if it has one) and the thread store. */
import { refreshThreads } from "../../../threads/refresh.ts";
import { openThreadStore } from "../../../threads/store.ts";
import { command } from "../../_command.ts";
import { withOpenStore } from "./_open.ts";

export default command({
  meta: { name: "reindex", description: "Rebuild derived indexes and the thread store from the stored data" },
  async run(ctx) {
    const report = await withOpenStore(ctx, async (adapter) => {
      const index = adapter.reindex ? await adapter.reindex() : undefined;
      const threads = await openThreadStore(ctx.home, { inMemory: !adapter.capabilities.persistent });
      try {
        const stats = await refreshThreads(adapter, threads, true);
        return { adapter: adapter.name, index: index ?? null, threads: { engine: threads.engine, ...stats } };
      } finally {
        threads.close();
      }
    });
    if (ctx.json) ctx.out(report);
    else {
      const idx = report.index ? `index rebuilt (${report.index.sessions} sessions)` : "no derived index";
      ctx.out(
        `${report.adapter}: ${idx}; thread store (${report.threads.engine}) rebuilt from ${report.threads.updated} sessions\n`,
      );
    }
    return 0;
  },
});
