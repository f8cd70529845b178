/**
 * `freecode gc [--dry-run] [--enforce] [--archived-max-age-days N] [--max-sessions N] [--max-bytes SIZE]`:
 * remove empty shells, expired archived sessions, and sessions over the cap or the disk budget (policy
 * from config.json's `gc`, flags winning). In `warn` mode (the default) it only says what it would
 * remove, on stderr. Exit 0 unless a removal failed: then the first failure's exit code.
 */
import { FreecodeError, usageError } from "../../errors.ts";
import { type GcItem, type GcReport, runGc } from "../../maintenance/gc.ts";
import { type GcOverrides, resolvePolicy } from "../../maintenance/policy.ts";
import { formatBytes, parseByteSize } from "../../maintenance/size.ts";
import { refreshThreadStore } from "../../threads/api.ts";
import { escapeLine } from "../../util/one-line.ts";
import { type CommandContext, command, wholeNumber } from "../_command.ts";
import { withStore } from "./session/_shared.ts";

export default command({
  meta: {
    name: "gc",
    description: "Remove empty shells, expired archived sessions, and sessions over the cap or disk budget",
  },
  args: {
    "dry-run": { type: "boolean", description: "Only print what would be removed" },
    enforce: { type: "boolean", description: "Remove even when config.json's gc.mode is warn" },
    "archived-max-age-days": {
      type: "string",
      description: "Remove archived and deleted sessions not updated for longer than this",
      valueHint: "days",
    },
    "max-sessions": { type: "string", description: "Keep at most this many sessions", valueHint: "n" },
    "prune-snapshots": {
      type: "boolean",
      description: "Also remove git snapshots of sessions this store does not hold (after the grace)",
    },
    "max-bytes": {
      type: "string",
      description: "Disk budget of the store: bytes or a size such as 2GB, 500MiB",
      valueHint: "size",
    },
  },
  async run(ctx, args) {
    const overrides: GcOverrides = {
      enforce: args.enforce === true,
      archivedMaxAgeDays: days(args["archived-max-age-days"]),
      maxSessions: wholeNumber(args["max-sessions"], "max-sessions"),
      maxBytes: bytes(args["max-bytes"]),
    };
    const policy = resolvePolicy(ctx.config().gc, overrides);
    const dryRun = args["dry-run"] === true;
    const { report, firstError: first } = await withStore(ctx, async (store) => {
      const out = await runGc(store, {
        home: ctx.home,
        policy,
        dryRun,
        pruneSnapshots: args["prune-snapshots"] === true,
      });
      // What the purged sessions held leaves the search index now (see `refreshThreadStore`).
      if (out.report.sessions.some((s) => s.result === "removed")) await refreshThreadStore(store, ctx.home);
      return out;
    });
    print(ctx, report);
    const failed = report.sessions.filter((a) => a.result === "failed");
    if (failed.length === 0 && report.snapshots.failed.length === 0) return 0;
    if (failed.length === 0) {
      const f = report.snapshots.failed[0]!;
      throw new FreecodeError(
        first instanceof FreecodeError ? first.code : "internal",
        `gc: the git snapshots of ${report.snapshots.failed.length} session(s) could not be removed; first: ${f.session}: ${f.error}`,
        { cause: first },
      );
    }
    // After the report (stdout stays one document): the first failure's code sets the exit code.
    const code = first instanceof FreecodeError ? first.code : "internal";
    throw new FreecodeError(
      code,
      `gc: ${failed.length} of ${report.sessions.length} removals failed; first: ${failed[0]!.id}: ${failed[0]!.error}`,
      { cause: first },
    );
  },
});

function days(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  if (!/^\d+(\.\d+)?$/.test(raw))
    throw usageError(`--archived-max-age-days must be a number of days ≥ 0 (got "${raw}")`);
  return Number(raw);
}

function bytes(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const n = parseByteSize(raw);
  if (n === undefined) throw usageError(`--max-bytes must be a size such as 2GB or 500MiB (got "${raw}")`);
  return n;
}

const line = (verb: string, r: GcItem) =>
  `${verb.padEnd(12)} ${r.id}  ${r.reason}: ${r.detail} (${formatBytes(r.bytes)})  ${escapeLine(r.title)}`;

const count = (n: number) => `${n} session${n === 1 ? "" : "s"}`;
const totals = (r: GcReport) =>
  `${count(r.before.sessions)}, ${formatBytes(r.before.bytes)} -> ${count(r.after.sessions)}, ${formatBytes(r.after.bytes)}`;

function print(ctx: CommandContext, report: GcReport): void {
  if (ctx.json) ctx.out(report);
  for (const u of report.unmet) ctx.log.warn(u);
  const snaps = report.snapshots;
  const sets = (ids: string[]) => `git snapshots of ${count(ids.length)}`;
  const verb = report.enforced ? "removed" : "would remove";
  const ofRemoved = new Set(report.sessions.map((s) => s.id));
  const own = snaps.removed.filter((id) => ofRemoved.has(id));
  const pruned = snaps.removed.filter((id) => !ofRemoved.has(id));
  if (own.length > 0) ctx.log.info(`${verb} the ${sets(own)} it removes`);
  if (pruned.length > 0)
    ctx.log.info(
      `${verb} the ${sets(pruned)} this store does not hold (--prune-snapshots): ${pruned.slice(0, 5).map(escapeLine).join(", ")}${pruned.length > 5 ? ", …" : ""}`,
    );
  if (snaps.unstored.length > 0)
    ctx.log.info(
      `${sets(snaps.unstored)} this store does not hold: kept (--prune-snapshots removes them): ${snaps.unstored.slice(0, 5).map(escapeLine).join(", ")}${snaps.unstored.length > 5 ? ", …" : ""}`,
    );
  for (const f of snaps.failed)
    ctx.log.error(`could not remove the git snapshots of ${escapeLine(f.session)}: ${f.error}`);
  const items = report.sessions;
  if (report.enforced || report.dryRun) {
    if (ctx.json) return;
    if (items.length === 0) ctx.out("nothing to remove\n");
    else {
      const lines = items.map((a) =>
        a.result === "would-remove" || a.result === "removed"
          ? line(a.result.replace("-", " "), a)
          : `${line(a.result, a)}: ${a.error ?? ""}`,
      );
      ctx.out(`${lines.join("\n")}\n${totals(report)}${report.dryRun ? " (dry run)" : ""}\n`);
    }
    return;
  }
  // Warn mode: talk, not data, so stderr (the JSON document above carries the same plan).
  if (items.length === 0) {
    if (!ctx.json) ctx.log.info("gc: nothing to remove");
    return;
  }
  if (!ctx.json) for (const r of items) ctx.log.warn(line("would remove", r));
  ctx.log.warn(
    `gc is in warn mode: nothing was removed (${totals(report)} once removed). ` +
      'Rerun with --enforce, or set "gc": { "mode": "enforce" } in config.json.',
  );
}
