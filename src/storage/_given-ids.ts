/**
 * Message ids callers chose (`session append`, `session.append`): one the session already holds,
 * or that the batch gives twice, is refused (`bad_input`, field `[i].id`): such a log reads, but
 * its export would not import. Each adapter checks under its own write lock, in the same step as
 * the append, so two processes appending one id cannot both find it absent (a check before the
 * append, outside that lock, let both store it). Fresh ids are not looked for (they cannot repeat,
 * and reading the log costs with its length).
 */
import { badInput } from "../errors.ts";
import type { StoredMessage } from "./records.ts";

/** How a caller says which of its messages' ids it chose (`given[i]`). */
export interface AppendOptions {
  given?: readonly boolean[];
}

/** Whether `options` asks for a check (any id given). */
export const wantsIdCheck = (options: AppendOptions | undefined): boolean =>
  options?.given?.some(Boolean) === true;

/**
 * Refuse a given id the session holds (`stored`: its ids; a set is looked into, not copied: a copy
 * per append made appends of given ids quadratic in the session's length) or the batch repeats.
 */
export function refuseGivenIds(
  sessionId: string,
  stored: Iterable<string>,
  messages: readonly StoredMessage[],
  options: AppendOptions | undefined,
): void {
  const given = options?.given;
  if (!given?.some(Boolean)) return;
  const held: ReadonlySet<string> = stored instanceof Set ? stored : new Set(stored);
  const batch = new Set<string>();
  for (const [i, m] of messages.entries()) {
    if (given[i] && (held.has(m.id) || batch.has(m.id)))
      throw badInput(`message id ${m.id} is already in session ${sessionId}`, { field: `[${i}].id` });
    batch.add(m.id);
  }
}
