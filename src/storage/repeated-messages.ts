/**
 * Messages a log holds twice under one id. freecode never writes one (an append of an id the
 * session holds is refused under the log's lock), so a repeat is a line copied by hand, a file
 * sync gone wrong or a restore over a live log. Read as it is, the session counts the message twice,
 * and copying it on (`session export`, `fork`) made a document no import takes. `store verify`
 * names each repeat and `--repair` drops a repeat equal to its first copy; one that differs is
 * the user's to settle (which copy is right is not ours to guess).
 */
import { FreecodeError } from "../errors.ts";
import { jsonEqual } from "../util/json-equal.ts";
import type { StoredMessage } from "./records.ts";

export interface RepeatedMessage {
  id: string;
  /** Positions in the log (0-based) of its first copy and of this repeat. */
  first: number;
  at: number;
  /** The repeat equals its first copy (a line written twice): dropping it loses nothing. */
  same: boolean;
}

export function repeatedMessages(messages: StoredMessage[]): RepeatedMessage[] {
  const first = new Map<string, number>();
  const out: RepeatedMessage[] = [];
  messages.forEach((m, at) => {
    const f = first.get(m.id);
    if (f === undefined) first.set(m.id, at);
    else out.push({ id: m.id, first: f, at, same: jsonEqual(messages[f], m) });
  });
  return out;
}

/** The messages with every repeat equal to its first copy left out. */
export function withoutSameRepeats(messages: StoredMessage[], repeats: RepeatedMessage[]): StoredMessage[] {
  const drop = new Set(repeats.filter((r) => r.same).map((r) => r.at));
  return messages.filter((_, i) => !drop.has(i));
}

/** How one repeat reads in a message: positions counted from 1, as a listing shows them. */
export function describeRepeat(r: RepeatedMessage): string {
  return `message ${r.id} is held twice (messages ${r.first + 1} and ${r.at + 1} of the log${r.same ? ", the same" : ", and they differ"})`;
}

/** Refuse to copy a log on (`export`, `fork`) while it holds a message twice. */
export function refuseRepeats(sessionId: string, messages: StoredMessage[], doing: string): void {
  const repeats = repeatedMessages(messages);
  if (repeats.length === 0) return;
  const r = repeats[0]!;
  const next = r.same
    ? "`freecode store verify --repair` drops a repeat equal to its first copy"
    : "remove the wrong copy from the log (`freecode store verify` lists every repeat)";
  throw new FreecodeError(
    "check_failed",
    `cannot ${doing} session ${sessionId}: ${describeRepeat(r)}${repeats.length > 1 ? ` and ${repeats.length - 1} more` : ""}; ${next}`,
  );
}
