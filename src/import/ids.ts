/**
 * Stable ids for imported sessions, messages and events, derived from the source's own ids so that
 * importing the same transcript twice produces the same records (idempotence), and re-deriving an
 * event after a transcript grew yields an id storage already has.
 */
import type { Agent } from "./types.ts";

const ALLOWED = /[^A-Za-z0-9._:@+=-]/g;
const VALID = /^[A-Za-z0-9._:@+=-]+$/;

/**
 * Make `raw` a valid freecode id (letters, digits and `. _ : @ + = -`, no `..`, ≤ 128 chars).
 * Long or unusual ids keep a readable head and a hash of the whole, so two sources never collide.
 */
export function safeId(raw: string): string {
  // The usual case first (a uuid, a `toolu_…` id): already valid, returned without a copy.
  if (raw.length > 0 && raw.length <= 128 && VALID.test(raw) && !raw.includes("..") && raw !== ".")
    return raw;
  const clean = raw.replace(ALLOWED, "_").replace(/\.{2,}/g, "_");
  if (clean === raw && raw.length > 0 && raw.length <= 128 && raw !== ".") return raw;
  return `${clean.slice(0, 100) || "_"}=${Bun.hash(raw).toString(36)}`;
}

/** The freecode session id of an imported session: `<agent>-<source id>`. */
export function sessionIdFor(agent: Agent, sourceId: string): string {
  return safeId(`${agent}-${sourceId}`);
}

/** A child session (subagent) id, nested under its parent's id so it sorts and reads beside it. */
export function childIdFor(parentId: string, kind: string, key: string): string {
  return safeId(`${parentId}.${kind}-${key}`);
}

/** A message id from a source id (uuids and `msg_…` ids pass through unchanged). */
export const messageIdFor = (raw: string): string => safeId(raw);
