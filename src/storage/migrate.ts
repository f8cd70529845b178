/**
 * Copying a whole store from one adapter to another (`freecode store migrate`), losslessly: every
 * session's meta (counters included), messages and context cache, and every rollout log with its
 * event ids, seqs and timestamps. The target must be empty. A verification pass then compares the
 * two stores' sets of ids and a content hash per session; any difference fails the migration, and a
 * failed migration purges what it wrote, so the target is empty again and a retry is not refused.
 *
 * Metas are read one by one with `getMeta` (the files adapter heals counters a crashed writer left
 * behind there), and a files store holding a session its listing cannot show (an unreadable
 * meta.json, a dot-named id) is refused before anything is copied: it would be dropped unseen.
 */
import { existsSync, rmSync } from "node:fs";
import { dirname } from "node:path";
import { conflict, FreecodeError } from "../errors.ts";
import { ensureDir, writeFileAtomic } from "../util/atomic.ts";
import { canonicalJson } from "../util/canonical-json.ts";
import type { StorageAdapter } from "./contract.ts";
import {
  type CopiedState,
  type CopyPart,
  type CopyRecord,
  logState,
  movedSince,
  readCopies,
  recordCopied,
  recordStarted,
  sessionState,
} from "./migration-copies.ts";
import { migrationMarker } from "./migration-marker.ts";
import type { EventDraft, EventRecord, SessionMeta } from "./records.ts";
import { refuseRepeats } from "./repeated-messages.ts";
import { unreadableLog } from "./unreadable-log.ts";
import { unlistedSessionDirs } from "./verify.ts";

/** Counts and a content hash of a whole store (key order inside records does not matter). */
export interface StoreDigest {
  sessions: number;
  messages: number;
  eventLogs: number;
  events: number;
  contextCaches: number;
  /** One hash over every session's hash, in id order. */
  hash: string;
  perSession: Record<string, string>;
}

export { canonicalJson };

const EVENT_BATCH = 1000;

/**
 * The events of one rollout log, one at a time; an unreadable line fails. Logs are streamed, never
 * held whole: copying and verifying a 525 MB log once held it three times over (5.7 GB).
 */
async function* eventsOf(adapter: StorageAdapter, id: string): AsyncGenerator<EventRecord> {
  for await (const r of adapter.readEvents(id)) {
    if (r.issue) {
      throw new FreecodeError("check_failed", `rollout of ${id} has an unreadable line: ${r.issue.message}`, {
        source: { file: r.issue.file, line: r.issue.line },
      });
    }
    yield r.event;
  }
}

/** The ids of every session `adapter` lists (soft-deleted ones included). */
async function listedIds(adapter: StorageAdapter): Promise<string[]> {
  return (await adapter.listSessions({ all: true })).items.map((m) => m.id);
}

/** Hash every session and rollout log of `adapter` (metas as `getMeta` returns them). */
export async function digestStore(adapter: StorageAdapter): Promise<StoreDigest> {
  const listed = new Set(await listedIds(adapter));
  const logs = await adapter.listEventLogs();
  const ids = [...new Set([...listed, ...logs])].sort();
  const digest: StoreDigest = {
    sessions: listed.size,
    messages: 0,
    eventLogs: logs.length,
    events: 0,
    contextCaches: 0,
    hash: "",
    perSession: {},
  };
  const all = new Bun.CryptoHasher("sha256");
  for (const id of ids) {
    const h = new Bun.CryptoHasher("sha256");
    const meta = listed.has(id) ? await adapter.getMeta(id) : undefined;
    h.update(canonicalJson(meta ?? null));
    if (meta) {
      const { messages } = await adapter.readMessages(id);
      digest.messages += messages.length;
      for (const m of messages) h.update(canonicalJson(m));
      const cache = await adapter.getContextCache(id);
      if (cache !== undefined) digest.contextCaches++;
      h.update(`cache:${canonicalJson(cache ?? null)}`);
    }
    let events = 0;
    for await (const e of eventsOf(adapter, id)) {
      events++;
      h.update(canonicalJson(e));
    }
    digest.events += events;
    // A log with no event is no log (another adapter holds none): not a session of its own.
    if (!meta && events === 0) {
      digest.eventLogs--;
      continue;
    }
    digest.perSession[id] = h.digest("hex");
    all.update(`${id}:${digest.perSession[id]}\n`);
  }
  digest.hash = all.digest("hex");
  return digest;
}

export interface MigrateReport {
  from: { adapter: string; location: string };
  to: { adapter: string; location: string };
  copied: Omit<StoreDigest, "perSession">;
  verified: boolean;
}

/** Copy everything from `source` into the empty `target`, then verify. Throws on any difference. */
export async function migrateStore(
  source: StorageAdapter,
  target: StorageAdapter,
  progress: (done: number, total: number) => void = () => {},
): Promise<MigrateReport> {
  const marker = migrationMarker(target);
  if (marker && existsSync(marker)) await clearInterrupted(target, source, readCopies(marker));
  if (
    (await target.listSessions({ all: true, limit: 0 })).total > 0 ||
    (await target.listEventLogs()).length > 0 ||
    (target.name === "files" && unlistedSessionDirs(target.location, new Set()).length > 0)
  ) {
    throw conflict(
      `the target store ${target.name} (${target.location}) is not empty: migrate only into an empty store`,
    );
  }
  const ids = await listedIds(source);
  if (source.name === "files") refuseUnlisted(source.location, ids);
  const logs = await source.listEventLogs();
  const written = new Set<string>();
  if (marker) {
    ensureDir(dirname(marker));
    writeFileAtomic(
      marker,
      `${JSON.stringify({ from: source.name, to: target.name, startedAt: Date.now(), copies: true })}\n`,
    );
  }
  try {
    const journal = marker
      ? {
          started: (id: string, part: CopyPart) => recordStarted(marker, id, part),
          copied: (id: string, state: CopiedState) => recordCopied(marker, id, state),
        }
      : { started: () => {}, copied: () => {} };
    await copyStore(source, target, ids, logs, { written, ...journal, progress });
    const report = await verifyCopy(source, target);
    if (marker) rmSync(marker, { force: true });
    return report;
  } catch (error) {
    const { error: undone, cleaned } = await undoCopy(target, written, error);
    // The mark goes only with the partial copy: one that could not be removed stays marked.
    if (marker && cleaned) rmSync(marker, { force: true });
    throw undone;
  }
}

/**
 * Purge what an interrupted migration left in `target` (see `migrationMarker`): the sessions and
 * logs the source also holds — what a copy from it wrote. Anything else in the target (a session
 * made there since) is left, and then makes the target not empty: the migration is refused.
 */
async function clearInterrupted(
  target: StorageAdapter,
  source: StorageAdapter,
  copies: Map<string, CopyRecord> | undefined,
): Promise<void> {
  // What the source holds, and what the mark says the migration copied or started on (the source
  // may have purged it since: its copy is still the migration's, not the target's own).
  const fromSource = new Set([
    ...(await listedIds(source)),
    ...(await source.listEventLogs()),
    ...(copies?.keys() ?? []),
  ]);
  const ids = [...new Set([...(await listedIds(target)), ...(await target.listEventLogs())])].filter((id) =>
    fromSource.has(id),
  );
  // A session written to in the target since the copy is no partial copy any more: purging it lost
  // what was written there (an append acknowledged in the new store). Nothing is cleared then.
  const changed: string[] = [];
  for (const id of ids) {
    // Nothing recorded of an id, in a marker that records: the migration never started it.
    const record = copies && (copies.get(id) ?? { started: new Set<CopyPart>(), copied: {} });
    const why = await changedInTarget(target, source, id, record);
    if (why) changed.push(`${id} (${why})`);
  }
  if (changed.length > 0)
    throw conflict(
      `the target store ${target.name} (${target.location}) holds ${changed.length} session(s) written to since the interrupted migration copied them: ${changed.slice(0, 3).join(", ")}${changed.length > 3 ? ", …" : ""}; nothing was cleared — move what was written there into the source (freecode export, then session import into it) or erase them from the target (session delete --purge), then migrate again`,
    );
  for (const id of ids) await target.purgeSession(id);
  const marker = migrationMarker(target);
  if (marker) rmSync(marker, { force: true });
}

/**
 * Why session `id` of `target` is more than the interrupted migration's copy of `source`'s, or
 * undefined. What the migration recorded (`record`, see `migration-copies.ts`) decides where it
 * can: a part it copied that the target holds otherwise now was written to there, and so was a
 * part it never started that the target holds. A part whose copy the kill cut short, or all of an
 * older version's mark, is judged against the source: a log copied in order holds a start of the
 * source's events, ids and all; a session holds the source's messages as they were — since then
 * the source may have added messages after them or compacted them away, but a message the target
 * holds after the last one both hold was written in the target.
 */
async function changedInTarget(
  target: StorageAdapter,
  source: StorageAdapter,
  id: string,
  record: CopyRecord | undefined,
): Promise<string | undefined> {
  const how = (part: CopyPart) =>
    !record ? "cut short" : record.copied[part] ? "copied" : record.started.has(part) ? "cut short" : "never";
  const now: CopiedState = {};
  const mine = await sessionState(target, id);
  if (mine) now.session = mine;
  const logNow = await logState(target, id);
  if (logNow && logNow.events > 0) now.log = logNow;
  if (record) {
    const why = movedSince(record.copied, now);
    if (why) return why;
  }
  if (how("session") === "never" && now.session)
    return "its session was made in the target: the migration never copied it";
  if (how("log") === "never" && now.log)
    return "its rollout log was written in the target: the migration never copied it";
  if (how("session") === "cut short" && now.session) {
    const theirs = await source.getMeta(id);
    if (!theirs)
      return record
        ? "its copy was cut short and the source no longer holds it: a write in the target cannot be told from the copy"
        : "a session in the target, a rollout log only in the source";
    const ids = new Set((await source.readMessages(id)).messages.map((m) => m.id));
    const held = (await target.readMessages(id)).messages;
    let after = 0;
    while (after < held.length && !ids.has(held[held.length - 1 - after]!.id)) after++;
    // None in common: a copy the source replaced whole (`keep 0`) is no sign of a write.
    if (after > 0 && after < held.length) return `${after} message(s) after the last the source holds`;
  }
  if (how("log") === "cut short" && now.log) return notAStartOf(target, source, id);
  return undefined;
}

/**
 * Why `target`'s log `id` is not a start of `source`'s, event by event (a copy cut short is one:
 * the copy goes in order and keeps the ids), or undefined.
 */
async function notAStartOf(
  target: StorageAdapter,
  source: StorageAdapter,
  id: string,
): Promise<string | undefined> {
  const theirs = source.readEvents(id)[Symbol.asyncIterator]();
  let n = 0;
  let extra = 0;
  for await (const mine of target.readEvents(id)) {
    n++;
    if (extra > 0) {
      extra++;
      continue;
    }
    const next = await theirs.next();
    if (next.done) extra = 1;
    else if (mine.event?.id !== next.value.event?.id) {
      await theirs.return?.();
      return `its rollout log's event ${n} is not the source's (${mine.event?.id ?? "an unreadable line"})`;
    }
  }
  await theirs.return?.();
  return extra > 0 ? `${extra} event(s) more than the source` : undefined;
}

/** A files store's session directories that its listing does not show would be lost: refuse. */
function refuseUnlisted(home: string, ids: string[]): void {
  const unlisted = unlistedSessionDirs(home, new Set(ids));
  if (unlisted.length === 0) return;
  const first = unlisted[0]!;
  throw new FreecodeError(
    "check_failed",
    `${unlisted.length} session(s) on disk are not listed by the store and would not be copied ` +
      `(first: ${first.id}: ${first.reason}); run \`freecode store verify\`, fix them, then migrate`,
    { source: { file: first.file } },
  );
}

async function copyStore(
  source: StorageAdapter,
  target: StorageAdapter,
  ids: string[],
  logs: string[],
  how: {
    /** The ids this copy wrote (a failure purges them). */
    written: Set<string>;
    /** Called before a part of an id is copied. */
    started: (id: string, part: CopyPart) => void;
    /** Called once it is, with what the target holds of it then. */
    copied: (id: string, state: CopiedState) => void;
    progress: (done: number, total: number) => void;
  },
): Promise<void> {
  const { written, started, copied, progress } = how;
  const total = ids.length + logs.length;
  let done = 0;
  for (const id of ids) {
    const meta: SessionMeta | undefined = await source.getMeta(id);
    if (!meta) throw new FreecodeError("check_failed", `session ${id} disappeared during the migration`);
    const { messages, issues } = await source.readMessages(id);
    if (issues.length) throw unreadableLog(id, issues, "message");
    refuseRepeats(id, messages, "migrate");
    // Marked as this migration's only once it made it: a create the target refused (an id it holds)
    // must not be purged by the cleanup.
    started(id, "session");
    await target.createSession(meta, messages);
    written.add(id);
    const cache = await source.getContextCache(id);
    if (cache !== undefined) await target.putContextCache(id, cache);
    // As the target reads it back (a store may fill in what the source left out).
    copied(id, { session: await sessionState(target, id) });
    progress(++done, total);
  }
  for (const id of logs) {
    let expected = 1;
    let last: string | null = null;
    let batch: EventDraft[] = [];
    written.add(id); // the target held no log when the migration began: any log is this one's
    started(id, "log");
    for await (const { seq, ...rest } of eventsOf(source, id)) {
      // seq is assigned by the target from 1: a source with gaps cannot be copied as it is.
      if (seq !== expected++)
        throw new FreecodeError(
          "check_failed",
          `rollout of ${id} has a seq gap at ${seq}; run \`freecode store verify\``,
        );
      // The target stamps its own session id: a copy would differ, and the check fail without a why.
      if (rest.aggregateID !== id)
        throw new FreecodeError(
          "check_failed",
          `rollout of ${id}: event seq ${seq} names session ${JSON.stringify(rest.aggregateID)} in aggregateID; run \`freecode store verify\``,
        );
      batch.push(rest as EventDraft);
      last = rest.id;
      if (batch.length >= EVENT_BATCH) {
        await target.appendEvents(id, batch);
        batch = [];
      }
    }
    if (batch.length > 0) await target.appendEvents(id, batch);
    copied(id, { log: { events: expected - 1, last } });
    progress(++done, total);
  }
}

/** Both stores hold the same ids, and each id hashes the same on both sides. */
async function verifyCopy(source: StorageAdapter, target: StorageAdapter): Promise<MigrateReport> {
  const [a, b] = [await digestStore(source), await digestStore(target)];
  const missing = Object.keys(a.perSession).filter((id) => !(id in b.perSession));
  const extra = Object.keys(b.perSession).filter((id) => !(id in a.perSession));
  const differing = Object.keys(a.perSession).filter(
    (id) => id in b.perSession && a.perSession[id] !== b.perSession[id],
  );
  const found = [
    [missing, "missing from the target"],
    [extra, "only in the target"],
    [differing, "differ after the copy"],
  ] as const;
  const failures = found
    .filter(([list]) => list.length > 0)
    .map(([list, what]) => `${list.length} session(s) ${what} (first: ${list[0]})`);
  if (failures.length || a.hash !== b.hash) {
    // What makes a copy differ is in the source (a meta counting messages its log lost): say where to look.
    const hint = differing.length ? "; `freecode store verify` on the source names what is wrong there" : "";
    throw new FreecodeError(
      "check_failed",
      `verification failed: ${failures.join("; ") || "hashes differ"}${hint}`,
    );
  }
  const { perSession: _p, ...copied } = a;
  return {
    from: { adapter: source.name, location: source.location },
    to: { adapter: target.name, location: target.location },
    copied,
    verified: true,
  };
}

/**
 * Purge what a failed migration wrote to `target`: the error to throw (saying whether that worked),
 * and whether it did.
 */
async function undoCopy(
  target: StorageAdapter,
  written: Set<string>,
  error: unknown,
): Promise<{ error: unknown; cleaned: boolean }> {
  if (written.size === 0) return { error, cleaned: true };
  let failed: unknown;
  try {
    for (const id of written) await target.purgeSession(id);
  } catch (cleanup) {
    failed = cleanup;
  }
  const cleaned = failed === undefined;
  if (!(error instanceof FreecodeError)) return { error, cleaned };
  const note = cleaned
    ? " (the partial copy was removed from the target)"
    : `; removing the partial copy failed too (${(failed as Error).message}): run the migration again (it clears the partial copy) or empty ${target.location} by hand`;
  return {
    error: new FreecodeError(error.code, `${error.message}${note}`, { source: error.source, cause: error }),
    cleaned,
  };
}
