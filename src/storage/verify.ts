/**
 * Store integrity (`freecode store verify [--repair]`). Through the contract, for any adapter:
 * unreadable and torn lines, meta counters that disagree with the log, rollout seq gaps and
 * duplicates, and a derived index that disagrees with the data. For the files adapter, also on disk:
 * torn last lines, orphan session directories, meta files the index does not list — each meta that
 * cannot be read is named (file and field), and so is a session directory with a dot-name id.
 *
 * Repairs are only the safe ones: cutting a torn last line (a write that was never acknowledged),
 * re-counting `messageCount`, rebuilding a derived index (and checking again that it now agrees),
 * removing what a create that died left aside. A bad line in the middle of a log, a seq gap or a
 * meta that does not validate is reported, never "fixed": that would be guessing at lost data.
 */
import {
  closeSync,
  existsSync,
  ftruncateSync,
  readdirSync,
  readFileSync,
  rmdirSync,
  rmSync,
  statSync,
} from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { FreecodeError } from "../errors.ts";
import { homePaths } from "../home.ts";
import { ensureDir } from "../util/atomic.ts";
import { isProcessAlive, withLockSync } from "../util/lock.ts";
import { openStoreFile } from "../util/store-file-open.ts";
import { readMessagesFileSync } from "./adapters/_files-messages.ts";
import { readMetaFile } from "./adapters/_files-session.ts";
import { type BatchMark, markAtWork, markHolds, readBatchMark, undoBatch } from "./batch-mark.ts";
import type { ReadIssue, StorageAdapter } from "./contract.ts";
import { importAtWork } from "./import-at-work.ts";
import { migrationMarker } from "./migration-marker.ts";
import type { SessionMeta, StoredMessage } from "./records.ts";
import { describeRepeat, repeatedMessages, withoutSameRepeats } from "./repeated-messages.ts";

export interface Problem {
  kind:
    | "torn_line"
    | "bad_line"
    | "count_drift"
    | "seq_gap"
    | "repeated_message"
    | "foreign_event"
    | "unreadable"
    | "index_drift"
    | "orphan_dir"
    | "bad_meta"
    | "bad_id"
    | "engine"
    | "interrupted_migration"
    | "incomplete_import"
    | "stale_temp"
    | "unfinished_batch";
  sessionId?: string;
  file?: string;
  line?: number;
  detail: string;
  repairable: boolean;
  repaired?: boolean;
}

export interface VerifyReport {
  adapter: string;
  location: string;
  sessions: number;
  eventLogs: number;
  problems: Problem[];
  /** No problem is left unrepaired. */
  ok: boolean;
}

/** Cut a file back to its last complete line (the torn tail was never acknowledged). */
function cutTornTail(file: string): boolean {
  const bytes = readFileSync(file);
  if (bytes.length === 0 || bytes[bytes.length - 1] === 10) return false;
  const keep = bytes.lastIndexOf(10) + 1;
  const fd = openStoreFile(file, "update");
  try {
    ftruncateSync(fd, keep);
  } finally {
    closeSync(fd);
  }
  return true;
}

/**
 * A repair the machine refused (no permission, a read-only or full disk, a lock file it cannot
 * make, a lock another process holds): said on its problem, which stays unrepaired, and verify goes
 * on with the rest (it stopped at the first such repair and reported nothing, exit 74). A bug is
 * not the machine's state and still throws.
 */
function refusedRepair(p: Problem, error: unknown): void {
  const e = error as NodeJS.ErrnoException;
  const machine =
    error instanceof FreecodeError
      ? e.code === "locked" || e.code === "conflict"
      : typeof e?.code === "string";
  if (!machine) throw error;
  p.repaired = false;
  p.detail += ` (not repaired: ${e.message})`;
}

/** Run `fix` as the repair of `p`: repaired unless it returns `false` (nothing was left to do). */
function attempt(p: Problem, fix: () => unknown): void {
  try {
    p.repaired = fix() !== false;
  } catch (error) {
    refusedRepair(p, error);
  }
}

/** `attempt` for a repair that waits on the store. */
async function attemptAsync(p: Problem, fix: () => Promise<unknown>): Promise<void> {
  try {
    p.repaired = (await fix()) !== false;
  } catch (error) {
    refusedRepair(p, error);
  }
}

/**
 * How a repair cuts a torn tail: under the lock writers of that log take (the files adapter's
 * `state/locks/<s|e>-<id>.lock`), and only if it is still torn then. Cut without it, a tail that was
 * an append in progress (acknowledged a moment later) was cut off.
 */
type Cutter = (file: string, kind: "s" | "e", sessionId: string) => boolean;

function cutterFor(a: StorageAdapter, home: string): Cutter {
  if (a.name !== "files") return (file) => cutTornTail(file);
  const locks = join(homePaths(home).state, "locks");
  return (file, kind, id) => {
    ensureDir(locks);
    return withLockSync(join(locks, `${kind}-${id}.lock`), () => cutTornTail(file));
  };
}

async function checkSessions(
  a: StorageAdapter,
  home: string,
  repair: Cutter | undefined,
  problems: Problem[],
): Promise<number> {
  const metas = (await a.listSessions({ all: true })).items;
  // The files store's message logs, to recount one under its session's lease (see below).
  const logs = new Map<string, string>();
  if (a.name === "files")
    for (const [id, dir] of sessionDirs(home)) logs.set(id, join(dir, "messages.jsonl"));
  for (const listed of metas) {
    let meta = listed;
    const importing = importAtWork(meta.id, meta.copiedFrom?.by);
    if (meta.copiedFrom?.incomplete && !importing)
      problems.push({
        kind: "incomplete_import",
        sessionId: meta.id,
        detail: `an import of session ${meta.copiedFrom.id} was stopped half way: this copy lacks part of its log; import the document again with --id ${meta.id} (it replaces this copy)`,
        repairable: false,
      });
    let { messages, issues } = await a.readMessages(meta.id);
    // A writer at work between the listing and the read makes them differ for a moment: read the
    // log, then the meta, again (a few times while they keep moving) before calling it drift.
    for (let tries = 0; tries < 3 && meta.messageCount !== messages.length; tries++) {
      ({ messages, issues } = await a.readMessages(meta.id));
      const now = await a.getMeta(meta.id);
      if (!now) break;
      meta = now;
    }
    const lines = issues.map((i) => lineProblem(i, meta.id, repair, "s"));
    problems.push(...lines);
    ({ meta, messages } = await checkRepeats(a, meta, messages, issues.length > 0, repair, problems));
    // A count is put right once the log reads whole: with no line it cannot read, or once this
    // repair cut every such line (a torn tail); the first pass said "needs attention" and a second
    // run did it.
    const whole = lines.every((l) => l.repaired);
    if (meta.messageCount !== messages.length) {
      const p: Problem = {
        kind: "count_drift",
        sessionId: meta.id,
        detail: `meta says ${meta.messageCount} messages, the log holds ${messages.length}${meta.messageCount > messages.length && issues.length === 0 ? " (messages it counted are gone from the log: cut or deleted outside freecode, or lost to a crash before they reached the disk)" : ""}`,
        repairable: issues.length === 0 || (repair !== undefined && whole),
      };
      if (repair !== undefined && p.repairable)
        await attemptAsync(p, async () => {
          // Counted under the session's lease where the store allows (files: the update holds
          // it), so an append made since the read is counted too, not dropped from the count.
          const log = logs.get(meta.id);
          // Read again where this repair cut lines the read above counted around.
          const read =
            log === undefined && lines.length > 0
              ? (await a.readMessages(meta.id)).messages.length
              : messages.length;
          await a.updateMeta(meta.id, (m) => ({
            ...m,
            messageCount: log ? readMessagesFileSync(log).messages.length : read,
          }));
        });
      problems.push(p);
    }
  }
  return metas.length;
}

/**
 * Messages the log holds twice under one id (`repeated-messages.ts`). A repeat equal to its first
 * copy is dropped by a repair, in one guarded rewrite of the log (refused, and left for the next
 * run, if a write came in since it was read); not while the log has a line it cannot read (the
 * rewrite would leave that line out), nor while a repeat differs (the rewrite would be refused).
 * Returns the session and log as they are after it.
 */
async function checkRepeats(
  a: StorageAdapter,
  meta: SessionMeta,
  messages: StoredMessage[],
  unreadable: boolean,
  repair: Cutter | undefined,
  problems: Problem[],
): Promise<{ meta: SessionMeta; messages: StoredMessage[] }> {
  const repeats = repeatedMessages(messages);
  if (repeats.length === 0) return { meta, messages };
  const fixable = !unreadable && repeats.every((r) => r.same);
  const found: Problem[] = repeats.map((r) => ({
    kind: "repeated_message",
    sessionId: meta.id,
    detail: `${describeRepeat(r)}${r.same ? "" : ": remove the wrong copy from the log"}`,
    repairable: fixable,
  }));
  problems.push(...found);
  if (repair === undefined || !fixable) return { meta, messages };
  try {
    await a.replaceMessages(meta.id, withoutSameRepeats(messages, repeats), {
      ifMessageCount: meta.messageCount,
    });
  } catch (error) {
    for (const p of found) refusedRepair(p, error);
    return { meta, messages };
  }
  for (const p of found) p.repaired = true;
  const now = await a.getMeta(meta.id);
  return { meta: now ?? meta, messages: (await a.readMessages(meta.id)).messages };
}

/** A line that could not be read, as a problem; a torn tail is cut off when repairing. */
function lineProblem(i: ReadIssue, sessionId: string, repair: Cutter | undefined, kind: "s" | "e"): Problem {
  const p: Problem = {
    kind: i.torn ? "torn_line" : "bad_line",
    sessionId,
    detail: i.message,
    repairable: i.torn && Boolean(i.file),
  };
  if (i.file) p.file = i.file;
  if (i.line) p.line = i.line;
  const file = i.file;
  if (repair && p.repairable && file && existsSync(file)) attempt(p, () => repair(file, kind, sessionId));
  return p;
}

async function checkEvents(
  a: StorageAdapter,
  repair: Cutter | undefined,
  problems: Problem[],
): Promise<number> {
  const logs = await a.listEventLogs();
  for (const id of logs) {
    try {
      await checkLog(a, id, repair, problems);
    } catch (error) {
      // A log that cannot be read (a directory at its path, no permission) is one problem among
      // the others: verify stopped at it, naming no file.
      const e = error as NodeJS.ErrnoException;
      if (typeof e?.code !== "string" || e instanceof FreecodeError) throw error;
      problems.push({
        kind: "unreadable",
        sessionId: id,
        ...(e.path ? { file: e.path } : {}),
        detail: `cannot read the rollout log: ${e.message}`,
        repairable: false,
      });
    }
  }
  return logs.length;
}

async function checkLog(
  a: StorageAdapter,
  id: string,
  repair: Cutter | undefined,
  problems: Problem[],
): Promise<void> {
  let expected = 1;
  for await (const r of a.readEvents(id)) {
    if (r.issue) {
      problems.push(lineProblem(r.issue, id, repair, "e"));
      continue;
    }
    if (r.event.seq !== expected) {
      problems.push({
        kind: "seq_gap",
        sessionId: id,
        detail: `seq ${r.event.seq} where ${expected} was expected`,
        repairable: false,
      });
    }
    expected = r.event.seq + 1;
    // Every adapter stamps the log's own session: one naming another (a log copied from another
    // session's directory) cannot be migrated as it is, which `store migrate` found only then.
    if (r.event.aggregateID !== id)
      problems.push({
        kind: "foreign_event",
        sessionId: id,
        detail: `event seq ${r.event.seq} names session ${JSON.stringify(r.event.aggregateID)} in aggregateID, not ${JSON.stringify(id)}`,
        repairable: false,
      });
  }
}

/** A session directory (files layout) holding a meta.json the listing does not show. */
export interface UnlistedSession {
  id: string;
  /** Its meta.json. */
  file: string;
  /** `bad_id`: a dot-name; `bad_meta`: meta.json does not read; `no_meta`: files but no meta.json;
   * `unindexed`: the index lags. */
  kind: "bad_id" | "bad_meta" | "no_meta" | "unindexed";
  reason: string;
}

const isDir = (path: string) => statSync(path, { throwIfNoEntry: false })?.isDirectory() === true;

/** The session directories under the files layout of `home`: `[id, dir]`. */
function* sessionDirs(home: string): Generator<[string, string]> {
  const root = homePaths(home).sessions;
  if (!existsSync(root)) return;
  for (const project of readdirSync(root)) {
    const pdir = join(root, project);
    if (!isDir(pdir)) continue;
    for (const id of readdirSync(pdir)) if (isDir(join(pdir, id))) yield [id, join(pdir, id)];
  }
}

/** The pid in the name of a create's temporary directory (`.tmp-<id>-<pid>-<n>`). */
const tmpOwner = (name: string) => /^\.tmp-.+-(\d+)-\d+$/.exec(name)?.[1];

/**
 * Files adapter: the session directories with a meta.json that `listed` lacks, and why. A create's
 * temporary directory (`.tmp-…`) is not a session and is left out.
 */
export function unlistedSessionDirs(home: string, listed: Set<string>): UnlistedSession[] {
  const out: UnlistedSession[] = [];
  for (const [id, dir] of sessionDirs(home)) {
    const file = join(dir, "meta.json");
    if (listed.has(id) || tmpOwner(id) !== undefined) continue;
    if (!existsSync(file)) {
      // Its messages with no meta: no listing shows them, and a copy left them behind unsaid.
      const held = readdirSync(dir);
      if (held.length > 0)
        out.push({ id, file, kind: "no_meta", reason: `no meta.json beside ${held.join(", ")}` });
      continue;
    }
    if (id.startsWith(".")) {
      out.push({
        id,
        file,
        kind: "bad_id",
        reason:
          "a session id must not start with '.': no listing shows it; rename the directory and its meta id",
      });
      continue;
    }
    try {
      readMetaFile(file);
      out.push({ id, file, kind: "unindexed", reason: "meta.json is not in the listing index" });
    } catch (error) {
      const field = error instanceof FreecodeError ? error.source?.field : undefined;
      const reason = `${(error as Error).message}${field ? ` (field ${field})` : ""}`;
      out.push({ id, file, kind: "bad_meta", reason });
    }
  }
  return out;
}

/**
 * Files adapter: session directories on disk against what the adapter lists. Returns whether a
 * readable meta is missing from the listing (a reindex fixes that); everything else is a problem.
 */
function checkFilesLayout(home: string, listed: Set<string>, repair: boolean, problems: Problem[]): boolean {
  const orphan = (dir: string, detail: string, remove: (() => void) | undefined, sessionId?: string) => {
    const p: Problem = { kind: "orphan_dir", file: dir, detail, repairable: remove !== undefined };
    if (sessionId !== undefined) p.sessionId = sessionId;
    if (repair && remove) attempt(p, remove);
    problems.push(p);
  };
  for (const [id, dir] of sessionDirs(home)) {
    const pid = tmpOwner(id);
    if (pid !== undefined) {
      // A create builds the session aside, then renames it into place; a live one is at work.
      if (isProcessAlive(Number(pid))) continue;
      const detail = `unfinished create of process ${pid}, which died (never acknowledged)`;
      orphan(dir, detail, () => rmSync(dir, { recursive: true, force: true }));
      continue;
    }
    const entries = readdirSync(dir);
    if (entries.includes("meta.json")) continue;
    if (entries.length === 0) orphan(dir, "empty session directory", () => rmdirSync(dir), id);
    else orphan(dir, `session directory without meta.json (${entries.join(", ")})`, undefined, id);
  }
  let drift = false;
  for (const u of unlistedSessionDirs(home, listed)) {
    if (u.kind === "unindexed") drift = true;
    // A directory without meta.json is an orphan, reported above.
    else if (u.kind !== "no_meta")
      problems.push({ kind: u.kind, sessionId: u.id, file: u.file, detail: u.reason, repairable: false });
  }
  return drift;
}

/**
 * Files adapter: marks of large appends (`storage/batch-mark.ts`) whose writer died. The lines its
 * batch got out were never acknowledged: readers leave them out, the next writer cuts them off, and
 * `--repair` does it now (under the log's lock, as a writer would). A mark whose batch was whole, or
 * that was cut short before its batch began, is only removed.
 */
function checkBatchMarks(home: string, repair: boolean, problems: Problem[]): void {
  const p = homePaths(home);
  const logs: [string, "s" | "e", string][] = [];
  for (const [id, dir] of sessionDirs(home))
    if (tmpOwner(id) === undefined) logs.push([join(dir, "messages.jsonl"), "s", id]);
  if (existsSync(p.rollout))
    for (const id of readdirSync(p.rollout)) logs.push([join(p.rollout, id, "events.jsonl"), "e", id]);
  const locks = join(p.state, "locks");
  for (const [log, kind, id] of logs) {
    const mark = readBatchMark(log);
    if (mark === undefined) continue;
    if (markAtWork(mark)) continue; // a large append at work
    const by = typeof mark === "object" ? mark.by : undefined;
    // A writer of another host (a home on a shared drive) cannot be checked from here; while it
    // holds the log's lock (a batch is written under it) it is named and left alone.
    const lock = join(locks, `${kind}-${id}.lock`);
    const elsewhere = by !== undefined && by.host !== hostname() && existsSync(lock);
    const st = statSync(log, { throwIfNoEntry: false });
    const holds = st !== undefined && markHolds(mark, st.size);
    const who = !by
      ? "a writer that died"
      : elsewhere
        ? `process ${by.pid} on ${by.host} (it cannot be checked from here: once it is gone, \`store unlock --host ${by.host}\`, then \`store verify --repair\`)`
        : `process ${by.pid}, which died`;
    const problem: Problem = {
      kind: "unfinished_batch",
      sessionId: id,
      file: log,
      detail: holds
        ? `a large append by ${who}, is unfinished: ${st!.size - (mark as BatchMark).from} of its ${(mark as BatchMark).to - (mark as BatchMark).from} bytes are in the log (never acknowledged; readers leave them out, the next write cuts them off)`
        : `a stale mark of a large append by ${who} (its batch is whole, or never began)`,
      repairable: !elsewhere,
    };
    if (repair && !elsewhere)
      attempt(problem, () => {
        ensureDir(locks);
        withLockSync(lock, () => undoBatch(log));
      });
    problems.push(problem);
  }
}

/** An atomic rewrite's temp file (`util/atomic.ts`): `<file>.<pid>.<n>.tmp`. */
const TEMP = /^.+\.(\d+)\.\d+\.tmp$/;

/**
 * Temp files of atomic rewrites whose process died before the rename: the state's (a json or
 * sqljs store image, as large as the store, one per killed writer), and on the files store each
 * session's and rollout log's. They were never read, and never removed by anything. One whose
 * process is alive is a rewrite at work.
 */
function checkStaleTemps(home: string, files: boolean, repair: boolean, problems: Problem[]): void {
  const p = homePaths(home);
  const dirs = [p.state, join(p.state, "parsers")];
  if (files) {
    // A create's own directory (`.tmp-…`) is an orphan as a whole (`checkFilesLayout`).
    for (const [id, dir] of sessionDirs(home)) if (tmpOwner(id) === undefined) dirs.push(dir);
    if (existsSync(p.rollout)) for (const id of readdirSync(p.rollout)) dirs.push(join(p.rollout, id));
  }
  for (const dir of dirs) {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      continue; // gone meanwhile, or not a directory
    }
    for (const name of names) {
      const pid = TEMP.exec(name)?.[1];
      if (pid === undefined || isProcessAlive(Number(pid))) continue;
      const file = join(dir, name);
      const problem: Problem = {
        kind: "stale_temp",
        file,
        detail: `an unfinished rewrite of process ${pid}, which died (never read)`,
        repairable: true,
      };
      if (repair) attempt(problem, () => rmSync(file, { recursive: true, force: true }));
      problems.push(problem);
    }
  }
}

/** Whether the listing disagrees with the sessions stored (counters, or files on disk). */
async function indexDrift(adapter: StorageAdapter, home: string): Promise<boolean> {
  const page = await adapter.listSessions({ all: true });
  // A total that disagrees with the listed items is a stale counter (sqlite/sqljs keep them).
  if (page.total !== page.items.length) return true;
  if (adapter.name !== "files") return false;
  const listed = new Set(page.items.map((m) => m.id));
  return (
    unlistedSessionDirs(home, listed).some((u) => u.kind === "unindexed") ||
    (await staleRows(adapter, page.items)).length > 0
  );
}

/** What a listing shows and filters on: a row that says otherwise than `meta.json` is stale. */
const LISTED = ["title", "status", "projectPath", "pinned", "tags", "createdAt", "updatedAt"] as const;

/**
 * Listing rows of the files store that disagree with their `meta.json` (one edited by hand, or by a
 * process whose index update was lost): `session list` would show the old title until a reindex.
 */
async function staleRows(
  adapter: StorageAdapter,
  items: SessionMeta[],
): Promise<{ id: string; fields: string[] }[]> {
  const stale: { id: string; fields: string[] }[] = [];
  for (const row of items) {
    const meta = await adapter.getMeta(row.id);
    const fields = meta ? LISTED.filter((k) => JSON.stringify(meta[k]) !== JSON.stringify(row[k])) : [];
    if (fields.length > 0) stale.push({ id: row.id, fields });
  }
  return stale;
}

/** Check `adapter` (on `home`); with `repair`, fix what is safe to fix. */
export async function verifyStore(
  adapter: StorageAdapter,
  home: string,
  repair = false,
): Promise<VerifyReport> {
  const problems: Problem[] = [];
  const marker = migrationMarker(adapter);
  if (marker && existsSync(marker))
    problems.push({
      kind: "interrupted_migration",
      file: marker,
      detail:
        "a `store migrate` into this store was stopped half way: what it holds is a partial copy; run the migration again (it clears the partial copy and starts over)",
      repairable: false,
    });
  if (adapter.name === "sqlite" && existsSync(adapter.location)) {
    // A database damaged past opening (or its check failing) is a problem to report, not a crash.
    try {
      const { openSqliteToRead } = await import("./engines/bun-sqlite.ts");
      const db = openSqliteToRead(adapter.location);
      try {
        const rows = db.query("PRAGMA integrity_check").all() as { integrity_check: string }[];
        for (const r of rows)
          if (r.integrity_check !== "ok")
            problems.push({
              kind: "engine",
              file: adapter.location,
              detail: r.integrity_check,
              repairable: false,
            });
      } finally {
        db.close();
      }
    } catch (error) {
      problems.push({
        kind: "engine",
        file: adapter.location,
        detail: `the database cannot be checked: ${(error as Error).message}`,
        repairable: false,
      });
      return {
        adapter: adapter.name,
        location: adapter.location,
        sessions: 0,
        eventLogs: 0,
        problems,
        ok: false,
      };
    }
  }
  const cutter = repair ? cutterFor(adapter, home) : undefined;
  const sessions = await checkSessions(adapter, home, cutter, problems);
  const eventLogs = await checkEvents(adapter, cutter, problems);
  const page = await adapter.listSessions({ all: true });
  const listed = new Set(page.items.map((m) => m.id));
  // A total that disagrees with the listed items is a stale counter (sqlite/sqljs keep them).
  let drift = page.total !== page.items.length;
  if (adapter.name === "files") drift = checkFilesLayout(home, listed, repair, problems) || drift;
  // Rows that say otherwise than their session's meta.json: each named, with what differs (one
  // problem said only "the index disagrees", naming neither the session nor the field).
  const stale = adapter.name === "files" ? await staleRows(adapter, page.items) : [];
  checkStaleTemps(home, adapter.name === "files", repair, problems);
  if (adapter.name === "files") checkBatchMarks(home, repair, problems);
  if (drift || stale.length > 0) {
    const drifts: Problem[] = stale.map(({ id, fields }) => ({
      kind: "index_drift",
      sessionId: id,
      detail: `the index lists it with another ${fields.join(", ")} than its meta.json holds`,
      repairable: Boolean(adapter.reindex),
    }));
    if (drift)
      drifts.push({
        kind: "index_drift",
        detail: "the index disagrees with the sessions stored",
        repairable: Boolean(adapter.reindex),
      });
    if (repair && adapter.reindex) {
      try {
        await adapter.reindex();
        // Repaired only if the rebuilt index now agrees: a rebuild cannot list what it cannot read.
        const repaired = !(await indexDrift(adapter, home));
        for (const p of drifts) {
          p.repaired = repaired;
          if (!repaired) p.detail += "; still after a rebuild";
        }
      } catch (error) {
        for (const p of drifts) refusedRepair(p, error);
      }
    }
    problems.push(...drifts);
  }
  return {
    adapter: adapter.name,
    location: adapter.location,
    sessions,
    eventLogs,
    problems,
    ok: problems.every((p) => p.repaired),
  };
}
