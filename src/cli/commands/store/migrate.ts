/** `freecode store migrate --to <adapter>`: copy everything into another (empty) adapter, verified. */
import { usageError } from "../../../errors.ts";
import { checkHome, resolveHome } from "../../../home.ts";
import { copySnapshots, samePlace } from "../../../snapshot/copy.ts";
import { migrateStore } from "../../../storage/migrate.ts";
import { ADAPTER_LOADERS } from "../../../storage/select.ts";
import { command } from "../../_command.ts";
import { withOpenStore } from "./_open.ts";

export default command({
  meta: {
    name: "migrate",
    description: "Copy every session and rollout log to another adapter, then verify",
  },
  args: {
    to: {
      type: "string",
      required: true,
      description: `Target adapter: ${Object.keys(ADAPTER_LOADERS)
        .filter((n) => n !== "memory")
        .join("|")}`,
    },
    "to-home": {
      type: "string",
      description: "Target home directory (default: the same home)",
      valueHint: "dir",
    },
  },
  async run(ctx, args) {
    const to = args.to;
    if (!ADAPTER_LOADERS[to] || to === "memory")
      throw usageError(`--to must be one of files, sqlite, sqljs, json (got "${to}")`);
    const toHome = args["to-home"] ? resolveHome(args["to-home"]) : ctx.home;
    checkHome(toHome, "--to-home");
    // A link to the home is the home (its snapshots were copied onto themselves, under their own lock).
    const sameHome = samePlace(toHome, ctx.home);
    const from = ctx.storeName();
    if ((from ?? "files") === to && sameHome) throw usageError(`the store already is "${to}" in ${ctx.home}`);
    const report = await withOpenStore(ctx, (source) =>
      withOpenStore(
        ctx,
        (target) =>
          migrateStore(source, target, (done, total) => {
            if (!ctx.json && (done === total || done % 500 === 0)) ctx.log.info(`copied ${done}/${total}`);
          }),
        to,
        toHome,
      ),
    );
    // Into another home, the sessions' snapshots go too: their checkpoint events name trees only
    // the snapshot stores hold (undo found none there).
    const snapshots = sameHome ? undefined : await copySnapshots(ctx.home, toHome);
    for (const problem of snapshots?.problems ?? []) ctx.log.warn(problem);
    if (ctx.json) ctx.out(snapshots ? { ...report, snapshots } : report);
    else {
      const c = report.copied;
      const stores = snapshots ? snapshots.copied + snapshots.merged : 0;
      ctx.out(
        `copied ${c.sessions} sessions, ${c.messages} messages, ${c.eventLogs} rollout logs (${c.events} events) ` +
          `from ${report.from.adapter} to ${report.to.adapter}; verified (sha256 ${c.hash.slice(0, 16)}…)` +
          `${stores > 0 ? `; snapshot stores of ${stores} project(s) copied` : ""}\n`,
      );
    }
    ctx.log.info(`to use it: set "store": "${to}" in config.json or FREECODE_STORE=${to}`);
    return 0;
  },
});
