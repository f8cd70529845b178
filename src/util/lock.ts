/**
 * Cross-process lock files. The holder writes `{pid, start, host}` into `<path>` created with O_EXCL;
 * a lock whose holder is gone (no such pid, or the pid was reused by a process that started later)
 * is stale and is broken. Waiters poll with backoff until a deadline, then fail with code `locked`.
 */
import { closeSync, openSync, readFileSync, renameSync, rmSync, writeSync } from "node:fs";
import { hostname } from "node:os";
import { dirname } from "node:path";
import { FreecodeError } from "../errors.ts";
import { ensureDir, FILE_MODE } from "./atomic.ts";

interface LockOwner {
  pid: number;
  start: number | null;
  host: string;
}

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
    if ((error as NodeJS.ErrnoException).code === "ESRCH") return false;
  }
  if (start === null) return true;
  const actual = processStartTime(pid);
  return actual === null || actual === start;
}

const self: LockOwner = { pid: process.pid, start: processStartTime(process.pid), host: hostname() };

function readOwner(path: string): LockOwner | null | "unreadable" {
  try {
    const text = readFileSync(path, "utf8");
    if (text === "") return "unreadable";
    return JSON.parse(text) as LockOwner;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    return "unreadable";
  }
}

function isStale(owner: LockOwner): boolean {
  // A lock from another host cannot be checked: treat it as live.
  if (owner.host !== self.host) return false;
  return !isProcessAlive(owner.pid, owner.start);
}

let breakCounter = 0;

function tryAcquire(path: string): boolean {
  let fd: number;
  try {
    fd = openSync(path, "wx", FILE_MODE);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") {
      ensureDir(dirname(path));
      return false;
    }
    if (code !== "EEXIST") throw error;
    const owner = readOwner(path);
    if (owner === null) return false; // released meanwhile: retry at once
    if (owner === "unreadable") return false; // being written right now (or garbage: handled by age below)
    if (isStale(owner)) {
      // Move the stale file aside atomically: only one breaker wins the rename.
      const aside = `${path}.stale.${process.pid}.${++breakCounter}`;
      try {
        renameSync(path, aside);
        rmSync(aside, { force: true });
      } catch {
        // Someone else broke it first.
      }
    }
    return false;
  }
  try {
    writeSync(fd, JSON.stringify(self));
  } finally {
    closeSync(fd);
  }
  return true;
}

/** A held lock: release it exactly once. */
export interface LockHandle {
  release(): void;
}

/** Take the lock at `path`, waiting up to `timeoutMs` (default 10 s). */
export function acquireLock(path: string, timeoutMs = 10_000): LockHandle {
  const deadline = Date.now() + timeoutMs;
  let wait = 1;
  let unreadableSince = 0;
  for (;;) {
    if (tryAcquire(path)) break;
    if (readOwner(path) === "unreadable") {
      // An empty or garbled lock file that stays so for a second is a writer that died mid-write.
      unreadableSince ||= Date.now();
      if (Date.now() - unreadableSince > 1_000) rmSync(path, { force: true });
    } else unreadableSince = 0;
    if (Date.now() > deadline) {
      const owner = readOwner(path);
      const who = owner && owner !== "unreadable" ? ` (held by pid ${owner.pid})` : "";
      throw new FreecodeError("locked", `could not lock ${path} within ${timeoutMs} ms${who}`);
    }
    sleepSync(wait);
    wait = Math.min(wait * 2, 25);
  }
  let held = true;
  return {
    release() {
      if (!held) return;
      held = false;
      rmSync(path, { force: true });
    },
  };
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

/** Run async `fn` while holding the lock at `path`. */
export async function withLock<T>(path: string, fn: () => Promise<T>, timeoutMs?: number): Promise<T> {
  const lock = acquireLock(path, timeoutMs);
  try {
    return await fn();
  } finally {
    lock.release();
  }
}
