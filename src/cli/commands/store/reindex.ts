/**
 * `freecode store reindex`: rebuild the adapter's derived index (if it has one) and the thread store
 * (a damaged file is set aside and built afresh; otherwise every thread is replaced in place, so a
 * search running meanwhile still finds everything).
 */
import { rebuildThreads } from "../../../threads/api.ts";
import { command } from "../../_command.ts";
import { withOpenStore } from "./_open.ts";

export default command({
  meta: { name: "reindex", description: "Rebuild derived indexes and the thread store from the stored data" },
  async run(ctx) {
    const report = await withOpenStore(ctx, async (adapter) => {
      const index = adapter.reindex ? await adapter.reindex() : undefined;
      const { engine, ...stats } = await rebuildThreads(adapter, ctx.home);
      return { adapter: adapter.name, index: index ?? null, threads: { engine, ...stats } };
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
