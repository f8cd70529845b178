/**
 * `freecode store unlock [--host H] [--dry-run]`: the home's lock files, and removal of those no live
 * process holds. A lock from another host is removed only when that host is named.
 */

import { usageError } from "../../../errors.ts";
import { fmtMs } from "../../../rollout/waterfall.ts";
import { type LockReport, unlockHome } from "../../../storage/locks.ts";
import { command } from "../../_command.ts";

export default command({
  meta: {
    name: "unlock",
    description: "List lock files; remove those whose process is gone (--host H: those held from host H)",
  },
  args: {
    host: {
      type: "string",
      description: "Also remove locks held from this host (check that its processes are gone first)",
    },
    "dry-run": { type: "boolean", description: "Only say what would be removed" },
  },
  run(ctx, args) {
    if (args.host !== undefined && args.host.trim() === "") throw usageError("--host needs a host name");
    const dryRun = args["dry-run"] === true;
    const locks = unlockHome(ctx.home, { host: args.host, dryRun });
    if (ctx.json) ctx.out({ home: ctx.home, dryRun, locks });
    else
      ctx.out(locks.length === 0 ? "no lock files\n" : `${locks.map((l) => line(l, dryRun)).join("\n")}\n`);
    return 0;
  },
});

function line(l: LockReport, dryRun: boolean): string {
  const goes = dryRun ? l.wouldRemove === true : l.removed;
  const verb = goes ? (dryRun ? "would remove" : "removed") : "kept";
  if (l.error !== undefined) return `${verb.padEnd(12)} ${l.file}: cannot be read (${l.error})`;
  const age = fmtMs(l.ageMs ?? 0);
  let why: string;
  switch (l.state) {
    case "stale":
      why = `pid ${l.pid} of this host is gone (or now belongs to another process)`;
      break;
    case "unreadable":
      why = goes ? `empty or garbled for ${age}` : "empty or garbled: being written right now";
      break;
    case "live":
      why = `held by pid ${l.pid} (running) for ${age}`;
      break;
    default:
      why = `held by pid ${l.pid} on ${l.host} for ${age}`;
      if (!goes)
        why += `; it cannot be checked from here: once it is gone, run freecode store unlock --host ${l.host}`;
  }
  return `${verb.padEnd(12)} ${l.file}: ${why}`;
}
