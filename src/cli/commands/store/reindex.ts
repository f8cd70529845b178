/**
 * `freecode store reindex`: rebuild the adapter's derived index (if it has one) and the thread store
 * (a damaged file is set aside and built afresh; otherwise every thread is replaced in place, so a
 * search running meanwhile still finds everything).
 */
import { unlistedSessionDirs } from "../../../storage/verify.ts";
import { rebuildThreads } from "../../../threads/api.ts";
import { command } from "../../_command.ts";
import { withOpenStore } from "./_open.ts";

export default command({
  meta: { name: "reindex", description: "Rebuild derived indexes and the thread store from the stored data" },
  async run(ctx) {
    const report = await withOpenStore(ctx, async (adapter) => {
      const index = adapter.reindex ? await adapter.reindex() : undefined;
      const { engine, ...stats } = await rebuildThreads(adapter, ctx.home);
      // A session directory the rebuilt index cannot list (an unreadable meta.json) is named, not
      // left out in silence: the listing, search and migrate do not see it.
      const unlisted =
        adapter.name === "files"
          ? unlistedSessionDirs(
              ctx.home,
              new Set((await adapter.listSessions({ all: true })).items.map((m) => m.id)),
            ).map((u) => ({ id: u.id, file: u.file, reason: u.reason }))
          : [];
      return { adapter: adapter.name, index: index ?? null, threads: { engine, ...stats }, unlisted };
    });
    if (ctx.json) ctx.out(report);
    else {
      const idx = report.index ? `index rebuilt (${report.index.sessions} sessions)` : "no derived index";
      ctx.out(
        `${report.adapter}: ${idx}; thread store (${report.threads.engine}) rebuilt from ${report.threads.updated} sessions\n`,
      );
    }
    for (const u of report.threads.unreadable)
      ctx.log.warn(`session ${u.id} left out of the thread store: ${u.message}`);
    const [first] = report.unlisted;
    if (report.threads.unreadable.length > 0 && !first) return 1;
    if (first) {
      ctx.log.warn(
        `${report.unlisted.length} session director${report.unlisted.length === 1 ? "y is" : "ies are"} not in the index (first: ${first.id}: ${first.reason}); \`freecode store verify\` names them`,
      );
      return 1;
    }
    return 0;
  },
});
