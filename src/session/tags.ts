/**
 * Session tags: free-form labels in the meta (`tags`), used by `eval` to select sessions. A tag is
 * compared exactly (case matters). What is added is checked: surrounding whitespace is trimmed, and
 * then it must be non-empty, at most `MAX_TAG_CHARS` characters, free of control characters (a tag
 * is printed one per line, where a newline or an ESC would forge output) and of commas (the list
 * separator of `--add a,b`, so every tag can be given on the command line). What is removed is only
 * trimmed, so a tag stored before these checks (by an import) can still be removed.
 */
import { badInput } from "../errors.ts";
import type { StorageAdapter } from "../storage/contract.ts";
import type { SessionMeta } from "../storage/records.ts";
import { getSession } from "./lifecycle.ts";

/** The longest tag, in characters (UTF-16 code units, as `String.length` counts them). */
export const MAX_TAG_CHARS = 128;
/** The most tags a session may hold after an add. */
export const MAX_TAGS = 256;

// C0, DEL and C1 controls; also the line and paragraph separators, which break lines as well.
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;

export interface TagChange {
  add?: readonly string[];
  remove?: readonly string[];
}

/** `tag` trimmed, or `bad_input` naming `field` when it cannot be a tag. */
export function checkTag(tag: string, field = "tags"): string {
  const t = tag.trim();
  if (!t) throw badInput("a tag must not be empty", { field });
  if (t.length > MAX_TAG_CHARS)
    throw badInput(`a tag must be at most ${MAX_TAG_CHARS} characters (got ${t.length})`, { field });
  if (CONTROL.test(t)) throw badInput(`tag ${JSON.stringify(t)} contains a control character`, { field });
  if (t.includes(",")) throw badInput(`tag ${JSON.stringify(t)} contains a comma`, { field });
  return t;
}

/** A comma-separated list (`a,b`; a repeated flag gives several), trimmed; an empty item stays, to be refused. */
export function splitTagList(list: string | readonly string[] | undefined): string[] {
  if (list === undefined) return [];
  return (typeof list === "string" ? [list] : list).flatMap((s) => s.split(",")).map((t) => t.trim());
}

/** `tags` checked (see `checkTag`), in their order, each once. */
export function normalizeTags(tags: readonly string[], field = "tags"): string[] {
  return [...new Set(tags.map((t, i) => checkTag(t, `${field}[${i}]`)))];
}

/** The tags after `change`: kept in order, new ones appended, duplicates dropped. */
export function applyTagChange(current: readonly string[], change: TagChange): string[] {
  const add = normalizeTags(change.add ?? [], "add");
  const remove = new Set(
    (change.remove ?? []).map((t, i) => {
      if (!t.trim()) throw badInput("a tag must not be empty", { field: `remove[${i}]` });
      return t.trim();
    }),
  );
  const both = add.find((t) => remove.has(t));
  if (both !== undefined)
    throw badInput(`tag ${JSON.stringify(both)} is both added and removed`, { field: "remove" });
  // Compared trimmed on both sides: a tag stored with spaces around it (an import) can be removed.
  const next = [...new Set([...current, ...add])].filter((t) => !remove.has(t.trim()));
  if (next.length > MAX_TAGS && add.some((t) => !current.includes(t)))
    throw badInput(`a session holds at most ${MAX_TAGS} tags (this would make ${next.length})`, {
      field: "add",
    });
  return next;
}

const sameTags = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && a.every((t, i) => t === b[i]);

/**
 * Add and remove tags of session `id`, under the session's lock; the meta after. A tag both added and
 * removed is `bad_input`; removing a tag the session does not have is not an error. With nothing to
 * change (or a change that changes nothing) the meta is not written. No tags left: no `tags` field.
 */
export async function tagSession(store: StorageAdapter, id: string, change: TagChange): Promise<SessionMeta> {
  const meta = await getSession(store, id);
  // Checked before the lock, so a bad tag fails without touching the store.
  applyTagChange(meta.tags ?? [], change);
  if (!change.add?.length && !change.remove?.length) return meta;
  return store.updateMeta(meta.id, (m) => {
    const current = m.tags ?? [];
    const next = applyTagChange(current, change);
    if (sameTags(current, next)) return m;
    const { tags: _, ...rest } = m;
    return next.length > 0 ? { ...rest, tags: next } : rest;
  });
}

/** The tags of session `id` (an empty list when it has none). */
export async function sessionTags(store: StorageAdapter, id: string): Promise<string[]> {
  return (await getSession(store, id)).tags ?? [];
}
