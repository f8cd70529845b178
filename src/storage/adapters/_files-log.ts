/**
 * An append-only JSONL file: one `write()` per append on an O_APPEND descriptor (so concurrent
 * writers never interleave within a line), a check that the file ends with a newline when a lease is
 * taken (a torn tail left by a crashed writer was never acknowledged: it is cut off, not kept as a
 * bad line in the middle of the log), and the fsync policy: `always` per append, `batch` within
 * ~100 ms, `never`.
 *
 * A large batch is not one atomic write against a kill: Linux stops a `write()` at a page when
 * SIGKILL comes, so a killed append of 82 MB left its first complete lines, which the next writer
 * kept (a batch never acknowledged, half stored; a retry stored those lines twice). So a batch over
 * `MARKED_BYTES` writes a mark beside the log first (`<log>.batch`: the bytes
 * the batch spans and the writer; `storage/batch-mark.ts`), removed once the write is done; a writer
 * that takes the lease and finds a mark (its writer died: the lease is exclusive) cuts the log back
 * to where that batch began, unless the batch is whole. Until then readers stop where it began.
 * Smaller batches, one page-sized copy or a few, pay nothing.
 */
import { closeSync, fstatSync, fsyncSync, ftruncateSync, readSync, statSync, writeSync } from "node:fs";
import { namingPath } from "../../util/fs-path.ts";
import { openStoreFile } from "../../util/store-file-open.ts";
import { markHolds, readBatchMark, removeBatchMark, writeBatchMark } from "../batch-mark.ts";

export type FsyncMode = "never" | "batch" | "always";

const BATCH_MS = 100;
/** Batches larger than this are marked while they are written (see above). */
export const MARKED_BYTES = 1024 * 1024;
const pending = new Set<AppendLog>();
let timer: ReturnType<typeof setTimeout> | undefined;

function scheduleSync(log: AppendLog): void {
  pending.add(log);
  timer ??= setTimeout(() => {
    timer = undefined;
    syncPending();
  }, BATCH_MS);
  timer.unref?.();
}

/** fsync every log with unsynced appends (the `batch` group commit; also run on close/exit). */
export function syncPending(): void {
  for (const log of [...pending]) log.sync();
}
process.on("exit", syncPending);

export class AppendLog {
  private fd: number | undefined;
  private ino = 0;

  /** The open file's inode (0 before it is opened): a log renamed in over it is another file. */
  get inode(): number {
    return this.ino;
  }
  /** Bytes in the file as far as this writer knows (exact while the lease is held). */
  size = 0;

  constructor(
    readonly path: string,
    private readonly fsync: FsyncMode,
  ) {}

  /**
   * Re-learn the file's state after taking the lease (the caller holds the lock): reopen it if it
   * was replaced (compaction renames a new file over it), read its size, and cut a torn tail (bytes
   * after the last newline: a crash mid-append) back to the last complete line.
   * Returns false when the file does not exist and `create` is false.
   */
  reload(create: boolean): boolean {
    let st: ReturnType<typeof statSync> | undefined;
    try {
      st = statSync(this.path);
    } catch {
      st = undefined;
    }
    if (!st && !create) {
      this.close();
      return false;
    }
    if (this.fd === undefined || !st || st.ino !== this.ino) {
      this.close();
      this.fd = openStoreFile(this.path, "append"); // read too: pread of the last byte
      this.ino = fstatSync(this.fd).ino;
    }
    this.size = fstatSync(this.fd).size;
    this.undoUnfinishedBatch();
    if (this.size > 0 && lastByte(this.fd, this.size) !== 10) this.cutTornTail();
    return true;
  }

  /** A mark left by a writer that died in a large batch: cut the log back to where it began. */
  private undoUnfinishedBatch(): void {
    const mark = readBatchMark(this.path);
    if (mark === undefined) return;
    if (markHolds(mark, this.size)) {
      const from = (mark as { from: number }).from;
      ftruncateSync(this.fd!, from);
      this.size = from;
      if (this.fsync === "always") fsyncSync(this.fd!);
      else if (this.fsync === "batch") scheduleSync(this);
    }
    removeBatchMark(this.path);
  }

  /** Truncate to just after the last newline; synced as an append would be. */
  private cutTornTail(): void {
    this.size = endOfLastLine(this.fd!, this.size);
    ftruncateSync(this.fd!, this.size);
    if (this.fsync === "always") fsyncSync(this.fd!);
    else if (this.fsync === "batch") scheduleSync(this);
  }

  /**
   * Append `lines` (whole lines, ending in a newline) with one write. All or nothing: a write that
   * fails part way (a full disk) is cut back to where it started, so a rejected batch leaves no
   * lines behind, and the next append does not land glued to a partial line (one corrupt line that
   * no repair mends: an acknowledged append lost).
   */
  append(lines: string | Uint8Array): void {
    if (this.fd === undefined) this.reload(true);
    const data = typeof lines === "string" ? Buffer.from(lines) : lines;
    const before = this.size; // exact: the caller holds the lease
    const marked = data.length > MARKED_BYTES;
    if (marked) writeBatchMark(this.path, this.ino, before, before + data.length);
    let written = 0;
    try {
      while (written < data.length) written += writeSync(this.fd!, data, written, data.length - written);
      if (marked) removeBatchMark(this.path);
    } catch (error) {
      let cutBack = written === 0;
      if (!cutBack) {
        try {
          ftruncateSync(this.fd!, before);
          cutBack = true;
        } catch {
          // Could not cut it back: the mark stays (readers stop where the batch began, the next
          // lease cuts it back); unmarked, the next lease's reload cuts a torn tail, a whole line stays.
          this.close();
        }
      }
      // Nothing of the batch is left: a mark kept would hide the appends acknowledged after it.
      if (marked && cutBack) removeBatchMark(this.path);
      // `writeSync` errors name no file: say which one could not be written.
      throw namingPath(error, this.path);
    }
    this.size += data.length;
    if (this.fsync === "always") fsyncSync(this.fd!);
    else if (this.fsync === "batch") scheduleSync(this);
  }

  /** fsync now if there are unsynced appends. */
  sync(): void {
    pending.delete(this);
    if (this.fd !== undefined) fsyncSync(this.fd);
  }

  /** The file is open (it exists, as far as the last `reload` saw). */
  get isOpen(): boolean {
    return this.fd !== undefined;
  }

  close(): void {
    if (pending.has(this)) this.sync();
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}

function lastByte(fd: number, size: number): number {
  const b = Buffer.alloc(1);
  readSync(fd, b, 0, 1, size - 1);
  return b[0]!;
}

/** The offset just past the last newline in the first `size` bytes (0 if none), read backwards. */
function endOfLastLine(fd: number, size: number): number {
  const chunk = Buffer.alloc(64 * 1024);
  let end = size;
  while (end > 0) {
    const start = Math.max(0, end - chunk.length);
    const got = readSync(fd, chunk, 0, end - start, start);
    const nl = chunk.subarray(0, got).lastIndexOf(10);
    if (nl !== -1) return start + nl + 1;
    end = start;
  }
  return 0;
}
