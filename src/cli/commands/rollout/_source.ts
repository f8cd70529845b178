/**
 * What the rollout commands (rollout, trace, replay, usage) share: opening the store, checking a
 * session id, and picking the fastest way to read a log. With the files adapter the log is read
 * straight from its `events.jsonl` (the batch parser in rollout/_jsonl.ts); other adapters stream
 * through `readEvents`.
 */
import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import * as v from "valibot";
import { badInput, notFound } from "../../../errors.ts";
import { homePaths } from "../../../home.ts";
import { foldRollout, type RolloutSource } from "../../../rollout/load.ts";
import { acknowledgedSize } from "../../../storage/batch-mark.ts";
import type { StorageAdapter } from "../../../storage/contract.ts";
import { IdSchema } from "../../../storage/records.ts";
import { openStore } from "../../../storage/select.ts";
import { lastLineMatching } from "../../../util/last-line.ts";
import type { CommandContext } from "../../_command.ts";
import { completeId } from "../../_session-id.ts";

/** The `timestamp` of a log's last readable event (a torn or blank line, an unfinished batch after it aside). */
const lastEventAt = (file: string): number | undefined =>
  lastLineMatching(file, acknowledgedSize(file) ?? statSync(file).size, (e) => {
    const t = (e as { timestamp?: unknown } | null)?.timestamp;
    return typeof t === "number" && Number.isFinite(t) ? t : undefined;
  });

export interface Rollouts {
  adapter: StorageAdapter;
  /** The source for a session's log; `not_found` when it has none. */
  source(id: string): Promise<RolloutSource>;
  /** The session the given id or start of one names (`_session-id.ts`), else the one whose last
   * event is newest. */
  resolve(id: string | undefined): Promise<string>;
  /** Ids of every session with a log, with the time of their last event. */
  list(): Promise<{ id: string; lastAt: number }[]>;
}

/** Check an id from the command line (no path tricks). */
export function checkId(id: string): string {
  const r = v.safeParse(IdSchema, id);
  if (!r.success) throw badInput(`invalid session id "${id}": ${r.issues[0].message}`, { field: "id" });
  return id;
}

/** Open the store, run `fn` with the rollout helpers, close the store. */
export async function withRollouts<T>(ctx: CommandContext, fn: (r: Rollouts) => Promise<T>): Promise<T> {
  const { adapter } = await openStore(ctx.storeName(), { home: ctx.home, fsync: ctx.config().fsync });
  const filePath = (id: string) =>
    adapter.name === "files" ? join(homePaths(ctx.home).rollout, id, "events.jsonl") : undefined;
  const lastChange = async (id: string): Promise<number> => {
    const file = filePath(id);
    // The last event's time: an imported log was written long after the work it records, so its
    // file's time would list it as new (the file's time when its last line cannot be read).
    if (file && existsSync(file)) return lastEventAt(file) ?? statSync(file).mtimeMs;
    // The store's own look at the last event (SQL, json, memory); folding every event of every log
    // only to pick the newest made `trace` with no id take seconds beside a long log.
    if (adapter.lastEventAt) return (await adapter.lastEventAt(id)) ?? 0;
    let last = 0;
    // Only the newest timestamp matters here; unreadable lines are reported by the command that reads.
    const sink = {
      push: (e: { timestamp: number }) => void (last = Math.max(last, e.timestamp)),
      issue() {},
    };
    await foldRollout({ adapter, sessionId: id }, sink);
    return last;
  };
  /** Why there is no log to read: a session that recorded nothing yet, or no such session. */
  const noLog = async (id: string) =>
    (await adapter.getMeta(id))
      ? notFound(
          `session ${id} has no rollout log: nothing was recorded for it (\`freecode rollout append\`, or the library's recorder, writes one)`,
        )
      : notFound(
          `no rollout log for session ${id}, and no session ${id} (\`freecode trace --list\` lists the logs)`,
        );
  /** The logs the store holds, listed once per command: `usage` over every session asked per
   * session, and each asking listed every log (quadratic on the SQL and json stores). */
  let logs: Promise<Set<string>> | undefined;
  const rollouts: Rollouts = {
    adapter,
    async source(id) {
      checkId(id);
      const file = filePath(id);
      logs ??= adapter.listEventLogs().then((ids) => new Set(ids));
      const has = file ? existsSync(file) : (await logs).has(id);
      if (!has) throw await noLog(id);
      return file ? { file, sessionId: id } : { adapter, sessionId: id };
    },
    async resolve(id) {
      if (id !== undefined) return completeId(adapter, checkId(id), "any");
      const all = await rollouts.list();
      const latest = all.sort((a, b) => b.lastAt - a.lastAt)[0];
      if (!latest) throw notFound("no rollout logs yet (nothing recorded in this home)");
      return latest.id;
    },
    async list() {
      const ids = await adapter.listEventLogs();
      logs ??= Promise.resolve(new Set(ids));
      return Promise.all(ids.map(async (id) => ({ id, lastAt: await lastChange(id) })));
    },
  };
  try {
    return await fn(rollouts);
  } finally {
    await adapter.close();
  }
}
