/**
 * A parser's saved state under `--redact`: masked whole (titles as read, held messages, pending
 * calls' arguments: the import state is a file in the home like the store), but for its sets of id
 * hashes and its map of entry ids — numbers in base 36 and uuids, no secret's shape — which grow
 * with the transcript and were scanned on every pass: ~66 ms a pass for a session's 28,000 event
 * ids alone.
 */
import { redactDeep } from "./redact.ts";

/** Keys, up to three levels down (`children.<id>.eventIds`), whose values are kept as they are. */
const PACKED = new Set(["seen", "closed", "eventIds", "sidechainOf"]);

export function redactState<T>(state: T): T {
  const kept: [string[], unknown][] = [];
  const strip = (value: unknown, path: string[]): unknown => {
    if (!value || typeof value !== "object" || Array.isArray(value) || path.length > 2) return value;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      if (PACKED.has(k)) kept.push([[...path, k], v]);
      else out[k] = strip(v, [...path, k]);
    }
    return out;
  };
  const masked = redactDeep(strip(state, [])) as Record<string, unknown>;
  for (const [path, value] of kept) {
    let at = masked;
    for (const k of path.slice(0, -1)) at = at[k] as Record<string, unknown>;
    at[path.at(-1)!] = value;
  }
  return masked as T;
}
