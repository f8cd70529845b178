/**
 * Whether a message derived again holds nothing the stored one lacks: the same message read from
 * an older, shorter copy of its transcript (a backup, a copy taken mid-session). A transcript read
 * a line at a time only ever adds to a message — parts, a tool's result, its final usage, an
 * interrupt mark — so such a message is not a change but a step back, and patching it in would
 * take stored results away. Messages of whole documents (OpenCode, Gemini) may really shrink and
 * are not judged by this.
 */
import type { Part, StoredMessage } from "../storage/records.ts";

const same = (a: unknown, b: unknown) => a === b || JSON.stringify(a) === JSON.stringify(b);

/** `d` says no more than `s`: same kind and content, no result or the same one. */
function partSaysLess(d: Part, s: Part): boolean {
  if (d.type !== s.type || d.content !== s.content || d.callId !== s.callId) return false;
  if (d.type !== "tool") return same(d, s);
  if (d.tool?.name !== s.tool?.name || !same(d.tool?.args, s.tool?.args)) return false;
  if (d.result === undefined) return true;
  return same(d.result, s.result) && d.failed === s.failed && d.denied === s.denied;
}

const tokens = (m: StoredMessage) =>
  (m.usage?.inputTokens ?? 0) +
  (m.usage?.outputTokens ?? 0) +
  (m.usage?.cacheReadInputTokens ?? 0) +
  (m.usage?.cacheCreationInputTokens ?? 0);

/** Whether `derived` (read again) holds nothing that `stored` lacks. */
export function saysLess(derived: StoredMessage, stored: StoredMessage): boolean {
  if (derived.role !== stored.role || derived.parts.length > stored.parts.length) return false;
  if (derived.interrupted && !stored.interrupted) return false;
  if (derived.usage && (!stored.usage || tokens(derived) > tokens(stored))) return false;
  return derived.parts.every((p, i) => partSaysLess(p, stored.parts[i]!));
}
