/**
 * What `session import` holds a document's meta and messages to beyond the store's own checks: the
 * rules the commands that make and change a session keep (`session append`, `tag`, `rename`), so a
 * document edited by hand cannot make a session none of them would. Refused, naming the field: a
 * text part with no words (shown blank), a negative or fractional token count (totals and cost went
 * negative), a tag with a comma or a control character. Put right, as those commands put them right
 * (an older version's session must still round-trip): a text part's words given as `text` go in
 * `content`, tags are trimmed and each kept once, a title's line breaks and tabs become spaces, and
 * a status remembered on a session that is not put away is dropped. A title is otherwise as given:
 * `rename` keeps other control characters and an agent's own title may run past `rename`'s length
 * (refusing them refused sessions freecode had made).
 */
import * as v from "valibot";
import { badInput } from "../errors.ts";
import type { SessionMeta, StoredMessage } from "../storage/records.ts";
import { UsageCountsSchema } from "./schema.ts";
import { checkTag, MAX_TAGS } from "./tag-rules.ts";

type At = (field: string) => { file?: string; field: string };

/** The meta as the commands would hold it (see above); `bad_input` naming the field otherwise. */
export function metaAsCommandsMake(meta: SessionMeta, at: At): SessionMeta {
  // One line, as every command makes it; other control characters stay, as `rename` keeps them
  // (listings escape them), and so does a length past `rename`'s: an agent's own title may be
  // longer, and its sessions must round-trip.
  const out: SessionMeta = { ...meta, title: meta.title.replace(/[\r\n\t]+/g, " ").trim() };
  if (meta.tags !== undefined) {
    const tags = meta.tags.map((tag, i) => {
      try {
        return checkTag(tag, `meta.tags[${i}]`);
      } catch (error) {
        throw badInput(`invalid session meta: ${(error as Error).message}`, at(`meta.tags[${i}]`));
      }
    });
    out.tags = [...new Set(tags)];
    if (out.tags.length > MAX_TAGS)
      throw badInput(
        `invalid session meta: at most ${MAX_TAGS} tags (got ${out.tags.length})`,
        at("meta.tags"),
      );
  }
  if (meta.status !== "archived" && meta.status !== "deleted") delete out.previousStatus;
  if (!(out.status === "deleted" && out.previousStatus === "archived")) delete out.archivedFrom;
  return out;
}

/** Message `i` as `session append` would hold it (see above); `bad_input` naming the field otherwise. */
export function messageAsCommandsMake(m: StoredMessage, i: number, at: At): StoredMessage {
  if (m.usage !== undefined) {
    const usage = v.safeParse(UsageCountsSchema, m.usage);
    if (!usage.success) {
      const issue = usage.issues[0];
      throw badInput(
        `invalid message: ${issue.message}`,
        at(`messages[${i}].usage.${v.getDotPath(issue) ?? ""}`),
      );
    }
  }
  let parts: StoredMessage["parts"] | undefined;
  m.parts.forEach((p, j) => {
    if ((p.type !== "text" && p.type !== "code") || typeof p.content === "string") return;
    const { text, ...rest } = p as typeof p & { text?: unknown };
    if (typeof text !== "string")
      throw badInput(
        `invalid message: a ${p.type} part's words go in "content"`,
        at(`messages[${i}].parts[${j}].content`),
      );
    parts ??= [...m.parts];
    parts[j] = { ...rest, content: text };
  });
  return parts ? { ...m, parts } : m;
}
