/**
 * Cross-process lock files. The holder writes `{pid, start, host}` into `<path>` created with O_EXCL;
 * a lock whose holder is gone (no such pid, or the pid was reused by a process that started later)
 * is stale and is broken. Waiters poll with backoff until a deadline, then fail with code `locked`;
 * while they wait they touch the lock file's mtime, so a holder can tell that someone is waiting
 * (`LockHandle.contended`) and hand the lock over instead of taking it straight back.
 */

import { AsyncLocalStorage } from "node:async_hooks";
import {
  closeSync,
  existsSync,
  fstatSync,
  linkSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeSync,
} from "node:fs";
import { hostname } from "node:os";
import { dirname, resolve } from "node:path";
import * as v from "valibot";
import { FreecodeError } from "../errors.ts";
import { ensureDir, FILE_MODE } from "./atomic.ts";

// A pid that no process can have (0, negative, fractional) makes the file garbage, not a live lock.
export const LockOwnerSchema = v.object({
  pid: v.pipe(v.number(), v.safeInteger(), v.minValue(1)),
  start: v.nullable(v.number()),
  host: v.string(),
});
export type LockOwner = v.InferOutput<typeof LockOwnerSchema>;

/** A lock file as one look saw it: which file (inode, mtime), what it says, and who holds it. */
interface LockFileSeen {
  ino: number;
  mtimeMs: number;
  text: string;
  owner: LockOwner | "unreadable";
}

/** An empty or garbled lock file that stays the same file this long is a writer that died mid-write. */
const GARBAGE_MS = 1_000;
/** A break marker older than this was left by a breaker that died (breaking takes microseconds). */
const MARKER_MS = 2_000;

const sleeper = new Int32Array(new SharedArrayBuffer(4));
/** Block the thread for `ms` (locks are taken on synchronous paths too). */
export function sleepSync(ms: number): void {
  Atomics.wait(sleeper, 0, 0, ms);
}

/** A process's start time in clock ticks since boot (Linux), so a reused pid is told apart. */
export function processStartTime(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) may contain spaces and parentheses: count fields after the last ')'.
    const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const start = Number(rest[19]);
    return Number.isFinite(start) ? start : null;
  } catch {
    return null;
  }
}

/** Whether a process with this pid exists (and, when known, started at `start`). */
export function isProcessAlive(pid: number, start: number | null = null): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if (errnoOf(error) === "ESRCH") return false;
  }
  if (start === null) return true;
  const actual = processStartTime(pid);
  return actual === null || actual === start;
}

const self: LockOwner = { pid: process.pid, start: processStartTime(process.pid), host: hostname() };

/** This process, named as a lock names its holder. */
export const thisProcess = (): LockOwner => ({ ...self });

/** Whether `owner` is a live process of this host (one of another host cannot be checked: false). */
export const aliveHere = (owner: LockOwner): boolean =>
  owner.host === self.host && isProcessAlive(owner.pid, owner.start);

function errnoOf(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException).code;
}

/** Look at the lock file at `path` (null when there is none). */
function lookAtLock(path: string): LockFileSeen | null {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch (error) {
    if (errnoOf(error) === "ENOENT") return null;
    throw error;
  }
  try {
    const { ino, mtimeMs } = fstatSync(fd);
    const text = readFileSync(fd, "utf8");
    let owner: LockOwner | "unreadable" = "unreadable";
    try {
      const parsed = v.safeParse(LockOwnerSchema, JSON.parse(text));
      if (parsed.success) owner = parsed.output;
    } catch {
      // empty (being written right now, or its writer died) or garbled
    }
    return { ino, mtimeMs, text, owner };
  } finally {
    closeSync(fd);
  }
}

function sameFile(a: LockFileSeen, b: LockFileSeen): boolean {
  return a.ino === b.ino && a.mtimeMs === b.mtimeMs && a.text === b.text;
}

function isStale(owner: LockOwner): boolean {
  // A lock from another host cannot be checked: treat it as live.
  if (owner.host !== self.host) return false;
  return !isProcessAlive(owner.pid, owner.start);
}

let breakCounter = 0;
/** What `link` says on file systems without hard links (FAT, some network shares). */
const NO_LINKS = new Set(["EPERM", "ENOTSUP", "EOPNOTSUPP", "ENOSYS"]);

/**
 * Remove the lock file `seen` (its holder is dead, or it stayed garbage), unless it is no longer the
 * file at `path`: another breaker may have removed it and a new holder taken the lock since we
 * looked. Breakers take turns through `<path>.breaking`, a hard link to the file being broken (it
 * also keeps that inode from being reused while it is checked); the file is then moved aside and
 * checked again before it is deleted. Returns whether `seen` was removed.
 */
function breakLock(path: string, seen: LockFileSeen): boolean {
  const marker = `${path}.breaking`;
  let turn = true;
  try {
    linkSync(path, marker);
  } catch (error) {
    const code = errnoOf(error) ?? "";
    if (code === "EEXIST") clearAbandonedMarker(marker);
    if (code === "EEXIST" || code === "ENOENT") return false;
    if (!NO_LINKS.has(code)) throw error;
    turn = false; // no hard links here: only the check after the move aside guards
  }
  try {
    const linked = turn ? lookAtLock(marker) : seen;
    if (!linked || !sameFile(linked, seen)) return false; // a new lock took its place: leave it
    // While breakers take turns `path` is still that file; the check after the move is for a
    // breaker frozen past MARKER_MS, and for file systems without hard links.
    const aside = `${path}.stale.${process.pid}.${++breakCounter}`;
    try {
      renameSync(path, aside);
    } catch (error) {
      if (errnoOf(error) === "ENOENT") return false;
      throw error;
    }
    const moved = lookAtLock(aside);
    const removed = moved !== null && sameFile(moved, seen);
    if (!removed) putBack(aside, path);
    rmSync(aside, { force: true });
    return removed;
  } finally {
    if (turn) rmSync(marker, { force: true });
  }
}

/** Put a live lock moved aside by mistake back, unless a new one was taken meanwhile. */
function putBack(aside: string, path: string): void {
  try {
    linkSync(aside, path);
  } catch (error) {
    const code = errnoOf(error) ?? "";
    if (NO_LINKS.has(code) && !existsSync(path)) renameSync(aside, path);
    else if (code !== "EEXIST") throw error;
  }
}

function clearAbandonedMarker(marker: string): void {
  try {
    if (Date.now() - statSync(marker).ctimeMs > MARKER_MS) rmSync(marker, { force: true });
  } catch (error) {
    if (errnoOf(error) !== "ENOENT") throw error;
  }
}

/** Tell the holder someone waits (see `contended`); the file may already be someone else's. */
function signalWaiting(path: string): void {
  const now = new Date();
  try {
    utimesSync(path, now, now);
  } catch (error) {
    const code = errnoOf(error);
    if (code !== "ENOENT" && code !== "EPERM") throw error;
  }
}

/** A held lock: release it exactly once. */
export interface LockHandle {
  /** Whether another process has waited for this lock since it was taken. */
  contended(): boolean;
  release(): void;
}

function tryCreate(path: string): LockHandle | null {
  let fd: number;
  try {
    fd = openSync(path, "wx", FILE_MODE);
  } catch (error) {
    const code = errnoOf(error);
    if (code === "EEXIST") return null;
    if (code !== "ENOENT") throw error;
    ensureDir(dirname(path));
    return null; // the caller retries at once
  }
  let written: { ino: number; mtimeMs: number };
  try {
    writeSync(fd, JSON.stringify(self));
    written = fstatSync(fd);
  } catch (error) {
    // Not written (a full disk): an empty lock file left behind would keep every taker waiting.
    closeSync(fd);
    rmSync(path, { force: true });
    throw error;
  }
  closeSync(fd);
  const { ino, mtimeMs } = written;
  let held = true;
  return {
    contended() {
      try {
        const now = statSync(path);
        return now.ino === ino && now.mtimeMs !== mtimeMs;
      } catch {
        return false;
      }
    },
    release() {
      if (!held) return;
      held = false;
      rmSync(path, { force: true });
    },
  };
}

function lockedError(path: string, timeoutMs: number, seen: LockFileSeen | null): FreecodeError {
  const owner = seen?.owner;
  let who = "";
  if (owner && owner !== "unreadable") {
    who = ` (held by pid ${owner.pid} on ${owner.host})`;
    // A lock of another host is never broken here: say how to clear it if that process is gone.
    if (owner.host !== self.host)
      who += `; if that process is gone, run: freecode store unlock --host ${owner.host} (or delete ${path})`;
  }
  return new FreecodeError("locked", `could not lock ${path} within ${timeoutMs} ms${who}`);
}

const DEFAULT_TIMEOUT_MS = 10_000;

/**
 * Take the lock at `path`, waiting up to `timeoutMs` (default 10 s), sleeping between tries at most
 * `maxSleepMs` (the backoff doubles from 1 ms up to it).
 */
export function acquireLock(path: string, timeoutMs = DEFAULT_TIMEOUT_MS, maxSleepMs = 25): LockHandle {
  const deadline = Date.now() + timeoutMs;
  let wait = 1;
  // The garbage file being timed: a new file is judged on its own (a fresh lock is empty between
  // its create and its write), so the clock restarts whenever the file changes.
  let garbage: { seen: LockFileSeen; since: number } | undefined;
  for (;;) {
    const lock = tryCreate(path);
    if (lock) return lock;
    const seen = lookAtLock(path);
    let retryNow = seen === null; // released meanwhile
    if (seen?.owner === "unreadable") {
      // Garbage once it has stayed so for GARBAGE_MS: seen unchanged that long, or unchanged since
      // its mtime that long ago (a file left by a writer that died, found by a caller just come).
      if (!garbage || !sameFile(garbage.seen, seen)) garbage = { seen, since: Date.now() };
      if (Date.now() - Math.min(garbage.since, seen.mtimeMs) > GARBAGE_MS) retryNow = breakLock(path, seen);
    } else if (seen) {
      garbage = undefined;
      if (isStale(seen.owner)) retryNow = breakLock(path, seen);
      else signalWaiting(path);
    }
    if (Date.now() > deadline) throw lockedError(path, timeoutMs, seen);
    if (retryNow) continue;
    sleepSync(wait);
    wait = Math.min(wait * 2, maxSleepMs);
  }
}

/** Run `fn` while holding the lock at `path`. */
export function withLockSync<T>(path: string, fn: () => T, timeoutMs?: number): T {
  const lock = acquireLock(path, timeoutMs);
  try {
    return fn();
  } finally {
    lock.release();
  }
}

/**
 * Async holders and waiters of this process, by lock path: what the next caller waits for (every
 * caller before it is done). `acquireLock` waits by blocking the thread, so a second caller of this
 * process waiting for a file the first one holds would block the very thread the first needs to
 * finish: it froze until the timeout (parallel tool calls capturing one session's snapshots).
 */
const turns = new Map<string, Promise<unknown>>();

/** The lock paths the current async call chain holds (to tell a nested caller from a waiting one). */
const held = new AsyncLocalStorage<ReadonlySet<string>>();

/**
 * Run async `fn` while holding the lock at `path`. Callers of this process take turns per path
 * first (see `turns`): they wait for the ones before them however long those hold it, as callers
 * of one process queue for one resource; only the one whose turn it is takes the file, waiting up
 * to `timeoutMs` for another process that holds it. A caller nested in a holder of the same path
 * (it would wait for itself) fails at once with code `locked`.
 */
export async function withLock<T>(
  path: string,
  fn: () => Promise<T>,
  timeoutMs = DEFAULT_TIMEOUT_MS,
): Promise<T> {
  const key = resolve(path);
  const mineAlready = held.getStore();
  if (mineAlready?.has(key))
    throw new FreecodeError("locked", `could not lock ${path}: this caller already holds it (a nested lock)`);
  const before = turns.get(key);
  let finished!: () => void;
  const mine = new Promise<void>((r) => {
    finished = r;
  });
  const after = before ? Promise.all([before, mine]) : mine;
  turns.set(key, after);
  try {
    if (before) await before.then(undefined, () => undefined);
    const lock = acquireLock(path, timeoutMs);
    try {
      return await held.run(new Set([...(mineAlready ?? []), key]), fn);
    } finally {
      lock.release();
    }
  } finally {
    finished();
    if (turns.get(key) === after) turns.delete(key);
  }
}

/**
 * A lock file as `freecode store unlock` reports it: `live` (a running process of this host holds
 * it), `stale` (its process of this host is gone: any taker breaks it), `other-host` (held from
 * another host: cannot be checked from here, so never broken unless that host is named), or
 * `unreadable` (empty or garbled: a taker breaks it once it has stayed so for a second).
 */
export interface LockInfo {
  state: "live" | "stale" | "other-host" | "unreadable";
  pid?: number;
  host?: string;
  /** Milliseconds since the lock file last changed (taken, or touched by a waiter). */
  ageMs: number;
}

function infoOf(seen: LockFileSeen): LockInfo {
  const ageMs = Math.max(0, Math.round(Date.now() - seen.mtimeMs));
  const owner = seen.owner;
  if (owner === "unreadable") return { state: "unreadable", ageMs };
  const state = owner.host !== self.host ? "other-host" : isStale(owner) ? "stale" : "live";
  return { state, pid: owner.pid, host: owner.host, ageMs };
}

/** What the lock file at `path` says of its holder (null when there is none). */
export function inspectLock(path: string): LockInfo | null {
  const seen = lookAtLock(path);
  return seen && infoOf(seen);
}

/**
 * Remove the lock file at `path` if no live holder can have it: a `stale` lock, an `unreadable` one
 * unchanged for over a second, and an `other-host` lock whose host is `host` (the caller checked
 * that its process is gone; nothing here can). A `live` lock is never removed. Breaking takes the
 * same turns as a taker's, so a lock taken anew meanwhile is left alone.
 */
export function clearLock(path: string, host?: string): { info: LockInfo | null; removed: boolean } {
  const seen = lookAtLock(path);
  if (!seen) return { info: null, removed: false };
  const info = infoOf(seen);
  return { info, removed: isClearable(info, host) && breakLock(path, seen) };
}

/** Whether `clearLock` removes a lock seen as `info` (see there). */
export function isClearable(info: LockInfo, host?: string): boolean {
  return (
    info.state === "stale" ||
    (info.state === "unreadable" && info.ageMs > GARBAGE_MS) ||
    (info.state === "other-host" && host !== undefined && info.host === host)
  );
}
