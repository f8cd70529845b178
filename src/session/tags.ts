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
import { MAX_TAGS, normalizeTags } from "./tag-rules.ts";

export interface TagChange {
  add?: readonly string[];
  remove?: readonly string[];
}

export { checkTag, MAX_TAG_CHARS, MAX_TAGS, normalizeTags, splitTagList } from "./tag-rules.ts";

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
