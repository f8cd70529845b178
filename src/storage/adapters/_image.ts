/**
 * A whole-file store image kept in memory and shared safely between processes: the persistence of
 * the sqljs and json adapters, which can only save by rewriting a whole file.
 *
 * Rewriting the file on every append would cost the size of the store per append
 * (reference/bun-engineering.md §3: ~60 ms for 8 MiB), and batching in memory would lose
 * acknowledged writes when the process dies. So every write transaction is first appended as one
 * line to a journal beside the image (`<file>.journal`, cheap and durable against a process crash),
 * and the image is rewritten atomically (temp + rename) only when the journal has grown past the
 * image's own size (amortised cost per write stays flat), on `close()` and at process exit.
 *
 * Cross-process rules, all under the lock file `<file>.lock`:
 * - a writer first catches up: reloads the image if it was replaced (inode/size/mtime changed), then
 *   replays journal lines it has not seen; then writes its own line and applies it.
 * - the journal starts with a header `{"gen":N}` naming the image generation it continues; a flush
 *   writes image N+1 and then a fresh journal for N+1. A crash between the two leaves a journal whose
 *   header does not match the image: its content is already in the image, and it is ignored.
 * - a torn last line (a writer died mid-append) is never applied and is cut off by the next writer.
 * Readers check two `stat`s and take the lock only when something changed.
 */
import {
  closeSync,
  existsSync,
  fstatSync,
  fsyncSync,
  ftruncateSync,
  openSync,
  readFileSync,
  readSync,
  statSync,
  writeSync,
} from "node:fs";
import { dirname } from "node:path";
import { FreecodeError } from "../../errors.ts";
import { writeFileAtomic } from "../../util/atomic.ts";
import { dirOrAbsent } from "../../util/dir-or-absent.ts";
import { acquireLock, type LockHandle, withLockSync } from "../../util/lock.ts";
import { openStoreFile } from "../../util/store-file-open.ts";
import { writable } from "../../util/writable.ts";

export interface ImageFormat<S> {
  empty(): S;
  /** Parse a whole image (validating it); errors name `file`. */
  decode(bytes: Uint8Array, file: string): S;
  /** Serialise the state, recording generation `gen` inside it. */
  encode(state: S, gen: number): Uint8Array;
  gen(state: S): number;
  /** Apply one committed journal line (a replay of another process's write). */
  replay(state: S, entries: unknown[]): void;
  dispose?(state: S): void;
}

/** What a write body gets: the state and `commit`, which makes its entries durable. */
export type WriteBody<S, T> = (state: S, commit: (entries: unknown[]) => void) => T;

/** The journal is folded into the image once it is larger than this or than the image. */
const MIN_FLUSH_BYTES = 1 << 20;
const GROUP_SYNC_MS = 100;

const open = new Set<JournaledImage<unknown>>();
let exitHooked = false;

function statOrNull(path: string) {
  try {
    return statSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  }
}

/**
 * Take the lock polling every ~1 ms: holders keep it for well under a millisecond, so the shared
 * lock's backoff (up to 25 ms between tries) would leave it idle most of the time under contention.
 */
function acquireQuickly(path: string, timeoutMs = 15_000): LockHandle {
  return acquireLock(path, timeoutMs, 1);
}

export class JournaledImage<S> {
  readonly journalPath: string;
  readonly lockPath: string;
  private state: S | undefined;
  private imageSig = "";
  private imageSize = 0;
  private journalIno = -1;
  private journalOffset = 0;
  private journalFd: number | undefined;
  private dirty = false;
  private syncTimer: ReturnType<typeof setTimeout> | undefined;
  private closed = false;

  constructor(
    readonly file: string,
    private readonly format: ImageFormat<S>,
    private readonly fsync: "never" | "batch" | "always" = "batch",
  ) {
    this.journalPath = `${file}.journal`;
    this.lockPath = `${file}.lock`;
  }

  /** Run `fn` on the current state (caught up with every committed write of every process). */
  read<T>(fn: (state: S) => T): T {
    this.assertOpen();
    if (!this.upToDate()) {
      // In a directory this process cannot write (a read-only mount), no lock can be made: read
      // without it, as a reader that found nothing changed does (a torn line is not applied, and a
      // journal of an older image is skipped by its header). In one that does not exist there is
      // nothing to read, and a lock would make it (a mistyped --home made by a listing).
      const dir = dirname(this.file);
      if ((!existsSync(dir) && dirOrAbsent(dir)) || !writable(dir)) this.catchUp(false);
      else {
        const lock = acquireQuickly(this.lockPath);
        try {
          this.catchUp(true);
        } finally {
          lock.release();
        }
      }
    }
    return fn(this.state!);
  }

  /**
   * Run a write under the lock. `body` checks and computes its change, calls `commit(entries)`
   * (the journal line: after it the write is acknowledged), and applies the change to the state.
   */
  write<T>(body: WriteBody<S, T>): T {
    this.assertOpen();
    const lock = acquireQuickly(this.lockPath);
    try {
      this.catchUp(true);
      let committed = false;
      try {
        const result = body(this.state!, (entries) => {
          this.appendJournal(entries);
          committed = true;
        });
        this.dirty ||= committed;
        if (this.journalOffset > Math.max(MIN_FLUSH_BYTES, this.imageSize)) this.flushLocked();
        return result;
      } catch (error) {
        // Applied half-way or not at all: the journal is the truth, reload from disk next time.
        if (committed) this.invalidate();
        throw error;
      }
    } finally {
      lock.release();
    }
  }

  /** Fold the journal into the image now (if this process wrote since the last flush). */
  flush(force = false): void {
    if (this.closed || (!this.dirty && !force)) return;
    withLockSync(this.lockPath, () => {
      this.catchUp(true);
      this.flushLocked();
    });
  }

  close(): void {
    if (this.closed) return;
    try {
      this.flush();
    } finally {
      this.closed = true;
      open.delete(this as JournaledImage<unknown>);
      if (this.syncTimer) clearTimeout(this.syncTimer);
      this.closeJournal();
      if (this.state !== undefined) this.format.dispose?.(this.state);
      this.state = undefined;
    }
  }

  private assertOpen(): void {
    if (this.closed) throw new FreecodeError("internal", `the store ${this.file} is closed`);
    open.add(this as JournaledImage<unknown>);
    if (!exitHooked) {
      exitHooked = true;
      // Fold what this process wrote into the image on the way out (the journal already holds it).
      process.on("exit", () => {
        for (const image of open) image.close();
      });
    }
  }

  private upToDate(): boolean {
    if (this.state === undefined) return false;
    const image = statOrNull(this.file);
    if ((image ? `${image.ino}:${image.size}:${image.mtimeMs}` : "none") !== this.imageSig) return false;
    const journal = statOrNull(this.journalPath);
    return journal
      ? journal.ino === this.journalIno && journal.size === this.journalOffset
      : this.journalIno === -1;
  }

  private invalidate(): void {
    if (this.state !== undefined) this.format.dispose?.(this.state);
    this.state = undefined;
    this.imageSig = "";
    this.closeJournal();
  }

  private closeJournal(): void {
    if (this.journalFd !== undefined) closeSync(this.journalFd);
    this.journalFd = undefined;
    this.journalIno = -1;
    this.journalOffset = 0;
  }

  /** Reload a replaced image and replay unseen journal lines (caller holds the lock). */
  private catchUp(locked: boolean): void {
    const image = statOrNull(this.file);
    const sig = image ? `${image.ino}:${image.size}:${image.mtimeMs}` : "none";
    if (this.state === undefined || sig !== this.imageSig) {
      if (this.state !== undefined) this.format.dispose?.(this.state);
      this.state = undefined;
      this.closeJournal();
      this.state = image ? this.format.decode(readFileSync(this.file), this.file) : this.format.empty();
      this.imageSig = sig;
      this.imageSize = image?.size ?? 0;
    }
    let fd: number;
    try {
      fd = locked ? openStoreFile(this.journalPath, "update") : openSync(this.journalPath, "r");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
      this.closeJournal();
      return;
    }
    try {
      const st = fstatSync(fd);
      if (st.ino !== this.journalIno) {
        this.closeJournal();
        this.journalIno = st.ino;
      }
      if (st.size > this.journalOffset) this.replayFrom(fd, st.size, locked);
    } finally {
      closeSync(fd);
    }
  }

  private replayFrom(fd: number, size: number, locked: boolean): void {
    const bytes = Buffer.alloc(size - this.journalOffset);
    let got = 0;
    while (got < bytes.length) {
      const n = readSync(fd, bytes, got, bytes.length - got, this.journalOffset + got);
      if (n === 0) break;
      got += n;
    }
    let start = 0;
    for (;;) {
      const nl = bytes.indexOf(10, start);
      if (nl === -1 || nl >= got) break;
      const lineAt = this.journalOffset + start;
      const text = bytes.toString("utf8", start, nl);
      start = nl + 1;
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch (error) {
        throw new FreecodeError("bad_input", `corrupt journal line at byte ${lineAt}`, {
          source: { file: this.journalPath },
          cause: error,
        });
      }
      if (Array.isArray(parsed)) {
        try {
          this.format.replay(this.state!, parsed);
        } catch (error) {
          // JSON whose writes do not apply (a damaged statement, a mangled record): as corrupt as
          // a line that does not parse, and said the same way, not as a crash.
          if (error instanceof FreecodeError) throw error;
          throw new FreecodeError(
            "bad_input",
            `corrupt journal line at byte ${lineAt} (${(error as Error).message})`,
            { source: { file: this.journalPath }, cause: error },
          );
        }
        continue;
      }
      const gen = (parsed as { gen?: unknown }).gen;
      if (lineAt === 0 && gen !== this.format.gen(this.state!)) {
        // A journal left over from before the last flush: its writes are in the image already.
        if (locked) this.resetJournal();
        else this.journalOffset = size;
        return;
      }
    }
    this.journalOffset += start;
    // A torn tail: a writer died mid-line. It was never acknowledged; cut it off before appending.
    if (locked && this.journalOffset < size) ftruncateSync(fd, this.journalOffset);
  }

  private header(): string {
    return `${JSON.stringify({ gen: this.format.gen(this.state!) })}\n`;
  }

  private resetJournal(): void {
    this.closeJournal();
    writeFileAtomic(this.journalPath, this.header(), { fsync: this.fsync !== "never" });
    const st = statSync(this.journalPath);
    this.journalIno = st.ino;
    this.journalOffset = st.size;
  }

  private appendJournal(entries: unknown[]): void {
    if (this.journalIno === -1) this.resetJournal();
    this.journalFd ??= openStoreFile(this.journalPath, "append");
    const line = Buffer.from(`${JSON.stringify(entries)}\n`);
    let written = 0;
    while (written < line.length) written += writeSync(this.journalFd, line, written, line.length - written);
    this.journalOffset += line.length;
    if (this.fsync === "always") fsyncSync(this.journalFd);
    else if (this.fsync === "batch" && !this.syncTimer) {
      this.syncTimer = setTimeout(() => {
        this.syncTimer = undefined;
        if (this.journalFd !== undefined) fsyncSync(this.journalFd);
      }, GROUP_SYNC_MS);
      this.syncTimer.unref();
    }
  }

  private flushLocked(): void {
    const gen = this.format.gen(this.state!) + 1;
    try {
      writeFileAtomic(this.file, this.format.encode(this.state!, gen), { fsync: this.fsync !== "never" });
    } catch (error) {
      this.invalidate();
      throw error;
    }
    const image = statSync(this.file);
    this.imageSig = `${image.ino}:${image.size}:${image.mtimeMs}`;
    this.imageSize = image.size;
    this.resetJournal();
    this.dirty = false;
  }
}
