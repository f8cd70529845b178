/**
 * The mark a large append leaves beside its log while it writes (`<log>.batch`; see
 * `adapters/_files-log.ts`): the bytes the batch spans and the writing process (and the log's inode
 * then, for whoever looks at a mark by hand: a mark holds by its bytes). A `write()` killed part
 * way leaves the batch's first complete lines in the log; until the next writer cuts them back, the
 * mark says where the acknowledged log ends. Readers stop there (the lines past it were never
 * acknowledged: an export, fork or migration copied them, and the next writer then deleted them from
 * the log), and `store verify` names a mark whose writer died (`--repair` cuts the log back).
 */
import { closeSync, existsSync, ftruncateSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { FILE_MODE } from "../util/atomic.ts";
import { aliveHere, type LockOwner, thisProcess } from "../util/lock.ts";
import { openStoreFile } from "../util/store-file-open.ts";

export interface BatchMark {
  /** The log's inode when the batch began (informative: not compared, see `markHolds`). */
  ino: number;
  /** The log's size before the batch: where the acknowledged log ends while the batch is unfinished. */
  from: number;
  /** The log's size once the batch is whole. */
  to: number;
  /** The writing process (marks written before it was recorded have none). */
  by?: LockOwner;
}

export const markPathOf = (log: string): string => `${log}.batch`;

/** Write the mark for a batch of `log` spanning `[from, to)` (the log's inode `ino`). */
export function writeBatchMark(log: string, ino: number, from: number, to: number): void {
  const mark: BatchMark = { ino, from, to, by: thisProcess() };
  writeFileSync(markPathOf(log), JSON.stringify(mark), { mode: FILE_MODE });
}

export const removeBatchMark = (log: string): void => rmSync(markPathOf(log), { force: true });

/**
 * The mark beside `log`: undefined when there is none; `unreadable` when it was cut short (its
 * writer died writing the mark, before any byte of its batch).
 */
export function readBatchMark(log: string): BatchMark | "unreadable" | undefined {
  // Nearly always absent: a stat, rather than a read that throws.
  if (!existsSync(markPathOf(log))) return undefined;
  let text: string;
  try {
    text = readFileSync(markPathOf(log), "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    return "unreadable";
  }
  try {
    const m = JSON.parse(text) as Partial<BatchMark>;
    if (typeof m.ino === "number" && typeof m.from === "number" && typeof m.to === "number")
      return m as BatchMark;
  } catch {
    // cut short
  }
  return "unreadable";
}

/**
 * Whether `mark` holds for a log of `size` bytes: its batch is under way or was cut off (the log is
 * past where it began and short of where it ends). A whole batch does not hold. The log's inode is
 * not compared: a home copied or restored from a backup gives the log a new one, and the mark must
 * still hide the lines the batch got out; freecode's own rewrites (compaction) take the lease first,
 * which removes any mark before the new file is renamed in.
 */
export const markHolds = (mark: BatchMark | "unreadable" | undefined, size: number) =>
  typeof mark === "object" && size >= mark.from && size < mark.to;

/** A log's size, and where what is acknowledged ends: before an unfinished batch (its mark). */
export interface LogEnd {
  size: number;
  acknowledged: number;
  /** The mark of the unfinished batch, when one holds. */
  mark?: BatchMark;
}

/** `log`'s end as readers take it (one stat; the mark read only for a log that has bytes). */
export function logEnd(log: string): LogEnd | undefined {
  const st = statSync(log, { throwIfNoEntry: false });
  if (!st) return undefined;
  const mark = st.size > 0 ? readBatchMark(log) : undefined;
  if (!markHolds(mark, st.size)) return { size: st.size, acknowledged: st.size };
  const m = mark as BatchMark;
  return { size: st.size, acknowledged: m.from, mark: m };
}

/**
 * How many bytes of `log` are acknowledged: its size, or where an unfinished batch began. A reader
 * reads no further (`lineRuns`' `toOffset`). Undefined when the log does not exist.
 */
export const acknowledgedSize = (log: string): number | undefined => logEnd(log)?.acknowledged;

/** Whether a mark's writer is alive on this host: its batch is under way, not cut off. */
export const markAtWork = (mark: BatchMark | "unreadable" | undefined): boolean =>
  typeof mark === "object" && mark.by !== undefined && aliveHere(mark.by);

/**
 * Cut `log` back to where the unfinished batch its mark names began, and remove the mark (the
 * caller holds the log's lock: no writer is at work). Returns the bytes cut off (0 when the mark did
 * not hold: only the mark is removed).
 */
export function undoBatch(log: string): number {
  const mark = readBatchMark(log);
  if (mark === undefined) return 0;
  let cut = 0;
  const st = statSync(log, { throwIfNoEntry: false });
  if (st && markHolds(mark, st.size)) {
    const fd = openStoreFile(log, "update");
    try {
      const from = (mark as BatchMark).from;
      ftruncateSync(fd, from);
      cut = st.size - from;
    } finally {
      closeSync(fd);
    }
  }
  removeBatchMark(log);
  return cut;
}
