/**
 * The sessions journal (`state/sessions-journal.jsonl`): one line `{id, key}` (the session and its
 * project directory) appended whenever a session's meta is written, created, moved or deleted. The
 * listing index replays it to stay current, and so does a locator that keeps a map of sessions.
 */
import { closeSync, openSync, readSync, statSync, writeSync } from "node:fs";
import { openStoreFile } from "../../util/store-file-open.ts";

/** Append one journal line (O_APPEND, one write). */
export function appendJournal(path: string, id: string, key: string): void {
  const fd = openStoreFile(path, "append");
  try {
    writeSync(fd, `${JSON.stringify({ id, key })}\n`);
  } finally {
    closeSync(fd);
  }
}

/** The journal's inode and size (both 0 when there is none). */
export function journalStat(path: string): { ino: number; size: number } {
  const st = statSync(path, { throwIfNoEntry: false });
  return st ? { ino: st.ino, size: st.size } : { ino: 0, size: 0 };
}

/**
 * The journal's whole lines in bytes `[from, to)`, in order (a line still being written waits; a
 * garbled one is skipped), and how many bytes they took.
 */
export function readJournal(
  path: string,
  from: number,
  to: number,
): { entries: { id: string; key: string }[]; consumed: number } {
  const buf = Buffer.allocUnsafe(Math.max(0, to - from));
  let got = 0;
  const fd = openSync(path, "r");
  try {
    while (got < buf.length) {
      const n = readSync(fd, buf, got, buf.length - got, from + got);
      if (n === 0) break;
      got += n;
    }
  } finally {
    closeSync(fd);
  }
  const consumed = buf.subarray(0, got).lastIndexOf(10) + 1;
  const entries: { id: string; key: string }[] = [];
  for (const line of buf.toString("utf8", 0, consumed).split("\n")) {
    if (!line) continue;
    try {
      const { id, key } = JSON.parse(line) as { id: unknown; key: unknown };
      if (typeof id === "string" && typeof key === "string") entries.push({ id, key });
    } catch {
      // A garbled line: readers still find the session by its directory.
    }
  }
  return { entries, consumed };
}
