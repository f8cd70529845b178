/**
 * gc's policy: `config.json`'s `gc` object with command-line overrides on top, resolved to plain
 * numbers (milliseconds, bytes) so planning does no parsing.
 */
import type { Config } from "../config.ts";
import { badInput } from "../errors.ts";
import { parseByteSize } from "./size.ts";

export const DAY_MS = 86_400_000;

/**
 * A session with no messages is an empty shell only once it is this old: creation writes the meta
 * and its first messages in one step, but an adapter-level create, an import or a rewrite in flight
 * may show a meta with none for a moment, and gc must never take a session being made.
 */
export const EMPTY_SHELL_GRACE_MS = 60 * 60 * 1000;

export type GcMode = "warn" | "enforce";

/** What gc removes; an absent limit is not applied. Empty shells are always looked for. */
export interface GcPolicy {
  mode: GcMode;
  /** Archived (and soft-deleted) sessions not updated for longer than this go. */
  archivedMaxAgeDays?: number;
  /** At most this many sessions stay stored (soft-deleted ones count). */
  maxSessions?: number;
  /** The store's data may use at most this many bytes. */
  maxBytes?: number;
  /** Empty shells younger than this stay (default `EMPTY_SHELL_GRACE_MS`). */
  emptyGraceMs: number;
}

/** Command-line values that win over the config (already parsed). */
export interface GcOverrides {
  enforce?: boolean;
  archivedMaxAgeDays?: number;
  maxSessions?: number;
  maxBytes?: number;
}

/** The policy from `config.gc` and `overrides`; `bad_input` naming the field for a size too large. */
export function resolvePolicy(config: Config["gc"] = {}, overrides: GcOverrides = {}): GcPolicy {
  let maxBytes = overrides.maxBytes;
  if (maxBytes === undefined && config.maxBytes !== undefined) {
    maxBytes = parseByteSize(config.maxBytes);
    if (maxBytes === undefined)
      throw badInput(`invalid config: gc.maxBytes "${config.maxBytes}" is not a size gc can use`, {
        file: "config.json",
        field: "gc.maxBytes",
      });
  }
  const policy: GcPolicy = {
    mode: overrides.enforce ? "enforce" : (config.mode ?? "warn"),
    emptyGraceMs: EMPTY_SHELL_GRACE_MS,
  };
  const age = overrides.archivedMaxAgeDays ?? config.archivedMaxAgeDays;
  if (age !== undefined) policy.archivedMaxAgeDays = age;
  const cap = overrides.maxSessions ?? config.maxSessions;
  if (cap !== undefined) policy.maxSessions = cap;
  if (maxBytes !== undefined) policy.maxBytes = maxBytes;
  return policy;
}
