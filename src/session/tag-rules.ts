/**
 * What a tag may be (see `tags.ts`): checked where tags are added, by `session tag`, by
 * `session create --tag` and by the library's `createSession`. Apart from `tags.ts` so that
 * `lifecycle.ts` can check a new session's tags without an import cycle.
 */

import { badInput } from "../errors.ts";
import { charCount } from "../util/cut-text.ts";

/** The longest tag, in characters (code points: an emoji is one). */
export const MAX_TAG_CHARS = 128;
/** The most tags a session may hold after an add. */
export const MAX_TAGS = 256;

// C0, DEL and C1 controls; also the line and paragraph separators, which break lines as well.
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;

/** `tag` trimmed, or `bad_input` naming `field` when it cannot be a tag. */
export function checkTag(tag: string, field = "tags"): string {
  const t = tag.trim();
  if (!t) throw badInput("a tag must not be empty", { field });
  const chars = charCount(t);
  if (chars > MAX_TAG_CHARS)
    throw badInput(`a tag must be at most ${MAX_TAG_CHARS} characters (got ${chars})`, { field });
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
