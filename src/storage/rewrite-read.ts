/**
 * Reading a session's messages to rewrite them (compaction, an interrupt mark, an import's patch).
 * A rewrite keeps only what it read: a line that could not be read (corrupt, or not UTF-8 and read
 * with U+FFFD in place of its bad bytes) would be dropped, or kept with its bytes replaced, without
 * a word, and `store verify` would then find nothing wrong. So such a log is refused. A torn last
 * line alone is not: it was never acknowledged, and the next append cuts it anyway.
 */
import { FreecodeError } from "../errors.ts";
import type { MessagesRead, StorageAdapter } from "./contract.ts";

/** The messages of session `id`, or a `check_failed` error naming the first unreadable line. */
export async function readForRewrite(
  store: StorageAdapter,
  id: string,
  doing: string,
): Promise<MessagesRead> {
  const read = await store.readMessages(id);
  const bad = read.issues.filter((i) => !i.torn);
  if (bad.length > 0) {
    const first = bad[0]!;
    throw new FreecodeError(
      "check_failed",
      `cannot ${doing} session ${id}: ${bad.length} message line(s) cannot be read (${first.message}), and rewriting the log would drop them; \`freecode store verify\` lists them`,
      { source: { file: first.file, line: first.line } },
    );
  }
  return read;
}
