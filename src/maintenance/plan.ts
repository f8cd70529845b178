/**
 * Planning a gc: which sessions the policy removes, and why. Pure: an inventory, a policy and the
 * time in; the plan out. The rules run in this order, and a session is removed for the first that
 * takes it:
 *
 * 1. `empty-shell`: no messages, and created and last updated more than the grace period ago.
 * 2. `expired`: archived or soft-deleted, not updated for more than `archivedMaxAgeDays`.
 * 3. `over-capacity`: while more than `maxSessions` sessions remain, in eviction order.
 * 4. `over-budget`: while the store's bytes exceed `maxBytes`, in eviction order.
 *
 * Eviction order: soft-deleted sessions, then archived, then idle and interrupted ones; oldest
 * `updatedAt` first within each. A `running` session and a pinned one are never removed by any rule
 * (they still count towards the cap and the budget, which may then stay exceeded: `unmet` says so).
 */
import type { SessionMeta, SessionStatus } from "../storage/records.ts";
import type { Inventory, StoredSession } from "./inventory.ts";
import { DAY_MS, type GcPolicy } from "./policy.ts";

export const GC_REASONS = ["empty-shell", "expired", "over-capacity", "over-budget"] as const;
export type GcReason = (typeof GC_REASONS)[number];

/** One session the plan removes. */
export interface GcRemoval {
  id: string;
  title: string;
  status: SessionStatus;
  updatedAt: number;
  messageCount: number;
  bytes: number;
  reason: GcReason;
  /** The reason in words, with the numbers behind it. */
  detail: string;
}

export interface StoreTotals {
  sessions: number;
  bytes: number;
}

export interface GcPlan {
  policy: GcPolicy;
  removals: GcRemoval[];
  before: StoreTotals;
  /** What would remain once every removal is done. */
  after: StoreTotals;
  /** Limits the plan cannot meet because what is left is running or pinned. */
  unmet: string[];
}

/** Never removed by gc. */
export const isProtected = (m: SessionMeta) => m.status === "running" || m.pinned === true;

const EVICTION_RANK: Record<SessionStatus, number> = {
  deleted: 0,
  archived: 1,
  idle: 2,
  interrupted: 2,
  running: 3,
};

/** The sessions gc may evict for the cap or the budget, first to go first. */
function evictionOrder(sessions: StoredSession[]): StoredSession[] {
  return sessions
    .filter((s) => !isProtected(s.meta))
    .sort(
      (a, b) =>
        EVICTION_RANK[a.meta.status] - EVICTION_RANK[b.meta.status] ||
        a.meta.updatedAt - b.meta.updatedAt ||
        (a.meta.id < b.meta.id ? -1 : 1),
    );
}

const days = (ms: number) => `${Math.floor(ms / DAY_MS)} days`;

/** What `policy` removes from `inventory` at `now`. */
export function planGc(inventory: Inventory, policy: GcPolicy, now = Date.now()): GcPlan {
  const all = inventory.sessions;
  const totalBytes = all.reduce((n, s) => n + s.bytes, inventory.otherBytes);
  const removals: GcRemoval[] = [];
  const taken = new Set<string>();
  let bytesLeft = totalBytes;
  const take = (s: StoredSession, reason: GcReason, detail: string) => {
    const { id, title, status, updatedAt, messageCount } = s.meta;
    removals.push({ id, title, status, updatedAt, messageCount, bytes: s.bytes, reason, detail });
    taken.add(id);
    bytesLeft -= s.bytes;
  };
  const remaining = () => all.filter((s) => !taken.has(s.meta.id));

  for (const s of evictionOrder(all)) {
    const age = now - Math.max(s.meta.createdAt, s.meta.updatedAt);
    if (s.empty && age > policy.emptyGraceMs)
      take(s, "empty-shell", `no messages, untouched for ${fmtAge(age)}`);
  }
  if (policy.archivedMaxAgeDays !== undefined) {
    const maxAge = policy.archivedMaxAgeDays * DAY_MS;
    for (const s of evictionOrder(remaining())) {
      const { status, updatedAt } = s.meta;
      if ((status === "archived" || status === "deleted") && now - updatedAt > maxAge)
        take(
          s,
          "expired",
          `${status}, not updated for ${days(now - updatedAt)} (limit ${policy.archivedMaxAgeDays})`,
        );
    }
  }

  const unmet: string[] = [];
  const cap = policy.maxSessions;
  if (cap !== undefined) {
    const over = remaining().length - cap;
    for (const s of evictionOrder(remaining()).slice(0, Math.max(0, over)))
      take(
        s,
        "over-capacity",
        `${cap + over} session${cap + over === 1 ? "" : "s"} stored, the cap is ${cap}`,
      );
    const still = remaining().length - cap;
    if (still > 0)
      unmet.push(
        `${still} session${still === 1 ? " stays" : "s stay"} over the cap of ${cap}: the rest are running or pinned`,
      );
  }

  const budget = policy.maxBytes;
  if (budget !== undefined) {
    for (const s of evictionOrder(remaining())) {
      if (bytesLeft <= budget) break;
      if (s.bytes === 0) continue;
      take(s, "over-budget", `the store holds ${bytesLeft} bytes, the budget is ${budget}`);
    }
    if (bytesLeft > budget)
      unmet.push(
        `${bytesLeft - budget} bytes stay over the budget of ${budget}: the rest is running or pinned sessions or rollout logs of no session`,
      );
  }

  return {
    policy,
    removals,
    before: { sessions: all.length, bytes: totalBytes },
    after: { sessions: all.length - removals.length, bytes: bytesLeft },
    unmet,
  };
}

/** `3 hours`, `12 days`. */
function fmtAge(ms: number): string {
  return ms >= DAY_MS ? days(ms) : `${Math.floor(ms / 3_600_000)} hours`;
}
