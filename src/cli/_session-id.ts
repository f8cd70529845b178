/**
 * A session named by the start of its id, as git takes a commit's: commands that only read a
 * session (`session show`, `export`, `snapshots`; `trace`, `replay`, `usage`, `rollout cat` and
 * `verify`; `eval add`) take any start of an id that no other id shares (`claude-3f2a` for an
 * imported session's long id). An id that names a session or a log whole is that one, even when
 * it also starts others; a start that several ids share is refused with them listed; one that no id
 * starts is left as typed, and the command says what it did not find. Commands that change or
 * delete a session take the whole id (a start that is unique today may name another one tomorrow):
 * their "no session X" says which ids X starts.
 */
import { badInput, FreecodeError } from "../errors.ts";
import { checkId } from "../storage/_validate.ts";
import type { StorageAdapter } from "../storage/contract.ts";

/** How many of the ids a start shares are named in a message. */
const SHOWN = 5;

/** The ids in the store: its sessions (soft-deleted ones too), and with `logs` its rollout logs. */
async function storeIds(adapter: StorageAdapter, logs: boolean): Promise<Set<string>> {
  const ids = new Set(logs ? await adapter.listEventLogs() : []);
  for (const m of (await adapter.listSessions({ all: true })).items) ids.add(m.id);
  return ids;
}

/** `a, b, c, d, e, and 3 more`. */
function named(ids: string[]): string {
  const more = ids.length > SHOWN ? `, and ${ids.length - SHOWN} more` : "";
  return `${ids.slice(0, SHOWN).join(", ")}${more}`;
}

/** The ids of `ids` that start with `typed`, sorted. */
function startingWith(ids: Iterable<string>, typed: string): string[] {
  const out: string[] = [];
  for (const id of ids) if (id.startsWith(typed)) out.push(id);
  return out.sort();
}

/**
 * The whole id `typed` names in the store (see above); `bad_input` when it starts several. `of`:
 * `sessions` for the `session` commands (a rollout log alone is no session: completed to one, the
 * command said "no session" of an id nobody typed), `any` for the rollout's.
 */
export async function completeId(
  adapter: StorageAdapter,
  typed: string,
  of: "sessions" | "any" = "sessions",
): Promise<string> {
  checkId(typed);
  if ((await adapter.getMeta(typed)) !== undefined) return typed;
  return completeFrom(await storeIds(adapter, of === "any"), typed);
}

/** The id of `ids` that `typed` names whole or is the only start of; else `typed` itself. */
export function completeFrom(ids: Iterable<string>, typed: string): string {
  const matches = startingWith(ids, typed);
  if (matches.includes(typed)) return typed;
  if (matches.length === 1) return matches[0]!;
  if (matches.length === 0) return typed;
  throw badInput(
    `"${typed}" is the start of ${matches.length} session ids (${named(matches)}): give more of it`,
    { field: "id" },
  );
}

/**
 * `error` with a hint when it is a command's "no session X" and X starts ids in the store: a
 * command that changes a session was given the start of one.
 */
export async function withStartHint(adapter: StorageAdapter, error: unknown): Promise<unknown> {
  if (!(error instanceof FreecodeError) || error.code !== "not_found") return error;
  const typed = /^no session (\S+)$/.exec(error.message)?.[1];
  if (typed === undefined) return error;
  // Sessions only (a log alone is no session either), and longer than what was typed.
  const sessions = (await adapter.listSessions({ all: true })).items.map((m) => m.id);
  const starts = startingWith(sessions, typed).filter((id) => id !== typed);
  if (starts.length === 0) return error;
  return new FreecodeError(
    "not_found",
    `${error.message} (it is the start of ${named(starts)}: a command that changes a session takes its whole id)`,
    error.source ? { source: error.source } : {},
  );
}
