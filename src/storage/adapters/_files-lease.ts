/**
 * Leases over the cross-process lock files. Taking a lock file costs a create and an unlink (~30 µs),
 * far more than an append (~3 µs), so a lease keeps the lock across a burst of appends and gives it
 * back at the next turn of the event loop (or after `MAX_HOLD_MS`, or on close). While the lease is
 * held, the holder's cached state (file size, last seq, meta) is authoritative; on release it is
 * flushed. Leases are process-wide so two adapters in one process never wait on each other's lock
 * (the lock would look alive: it is our own pid) — the second one takes the lease over instead.
 * A process holds at most one lease at a time: taking one gives back the others first, so two
 * processes can never each hold a lock the other waits for.
 * Fairness: a lease given back while another process waited for it (waiters touch the lock file) is
 * not taken again until that process had its turn, or `HANDOVER_MS` passed: a process appending in
 * a loop would otherwise take the lock back within microseconds, every time, and starve the others.
 * Nobody waiting costs one `stat` per lease.
 */
import { existsSync } from "node:fs";
import { acquireLock, type LockHandle, sleepSync } from "../../util/lock.ts";

const MAX_HOLD_MS = 200;
/** Longer than a waiter sleeps between two tries (25 ms), with room for a busy machine. */
const HANDOVER_MS = 100;

/** What the holder does with its cached state when the lease ends. */
export interface LeaseOwner {
  /** Write back whatever is cached (called with the lock still held). */
  flush(): void;
  /** The cached state is no longer trustworthy (another process may write). */
  forget(): void;
}

interface Lease {
  lock: LockHandle;
  owner: LeaseOwner;
  since: number;
}

const leases = new Map<string, Lease>();
/** Locks given to a waiting process: path -> until when this process lets it take them. */
const handovers = new Map<string, number>();
let releaseScheduled = false;

function endLease(path: string, lease: Lease): void {
  leases.delete(path);
  let waited = false;
  try {
    lease.owner.flush();
  } finally {
    lease.owner.forget();
    waited = lease.lock.contended(); // after the flush, which may take a while: a waiter may come meanwhile
    lease.lock.release();
  }
  if (waited) {
    const now = Date.now();
    if (handovers.size > 100) for (const [p, until] of handovers) if (until < now) handovers.delete(p);
    handovers.set(path, now + HANDOVER_MS);
  }
}

/** After giving the lock at `path` to a waiting process, let it take the lock before asking again. */
function standBack(path: string): void {
  const until = handovers.get(path);
  if (until === undefined) return;
  handovers.delete(path);
  while (Date.now() < until && !existsSync(path)) sleepSync(1);
}

/** Release every lease now (at a turn of the event loop, on close, before exit). */
export function releaseAllLeases(): void {
  for (const [path, lease] of [...leases]) endLease(path, lease);
}

/** Release the leases held by one owner. */
export function releaseLeasesOf(owner: LeaseOwner): void {
  for (const [path, lease] of [...leases]) if (lease.owner === owner) endLease(path, lease);
}

/** Release the lease on `path` if this process holds it. */
export function releaseLease(path: string): void {
  const lease = leases.get(path);
  if (lease) endLease(path, lease);
}

function scheduleRelease(): void {
  if (releaseScheduled) return;
  releaseScheduled = true;
  setImmediate(() => {
    releaseScheduled = false;
    releaseAllLeases();
  });
}

/**
 * Hold the lock at `path` for `owner`. Returns true when the lease was just taken (the caller must
 * reload its cached state from disk) and false when it was already held by the same owner.
 */
export function holdLease(path: string, owner: LeaseOwner, timeoutMs?: number): boolean {
  const existing = leases.get(path);
  if (existing) {
    if (existing.owner === owner && Date.now() - existing.since < MAX_HOLD_MS) return false;
    // Another adapter in this process, or held too long: hand the lock back first (fairness).
    endLease(path, existing);
  }
  for (const [other, lease] of [...leases]) endLease(other, lease);
  standBack(path);
  const lock = acquireLock(path, timeoutMs);
  leases.set(path, { lock, owner, since: Date.now() });
  scheduleRelease();
  return true;
}

process.on("exit", releaseAllLeases);
