/**
 * Reading one line of a file back by its byte offset, later: what lets a fold keep a reference to a
 * line (8 bytes) instead of a copy of what it needs from it. An append-only log never changes the
 * lines it has, so a line read back is the line that was folded, as long as the file is the same
 * file: the reader notes the file's identity (device and inode) when it is made and checks it on
 * every read, so a log replaced or removed since fails with a clear error instead of giving another
 * line. Reads go through a block kept from the last read (lines are usually asked for in file order),
 * and the file is opened per block read, not held open: a process folding thousands of logs keeps
 * no descriptors.
 */
import { closeSync, fstatSync, openSync, readSync, statSync } from "node:fs";
import { conflict, notFound } from "../errors.ts";

const BLOCK = 256 * 1024;
const NEWLINE = 10;

/** Lines of one file, read back by offset. */
export class LineAt {
  private readonly dev: number;
  private readonly ino: number;
  private block: Buffer | undefined;
  /** File offset of `block[0]`, and how many bytes of it hold file data. */
  private blockAt = 0;
  private blockLength = 0;

  /** Note `path`'s identity now (the file the lines are folded from). */
  constructor(readonly path: string) {
    const st = statSync(path);
    this.dev = st.dev;
    this.ino = st.ino;
  }

  /** The text of the line that starts at `offset` (without its newline). */
  at(offset: number): string {
    let nl = this.newlineFrom(offset);
    for (let size = BLOCK; nl < 0; size *= 2) {
      const got = this.load(offset, size);
      if (got === 0) throw this.changed("it is shorter now");
      nl = this.newlineFrom(offset);
      if (nl < 0 && got < size) nl = got; // the file's last line, without a newline
    }
    const start = offset - this.blockAt;
    const bom =
      this.block![start] === 0xef && this.block![start + 1] === 0xbb && this.block![start + 2] === 0xbf;
    return this.block!.toString("utf8", bom ? start + 3 : start, nl);
  }

  /** The index in `block` of the newline ending the line at `offset`; `-1` if not in the block. */
  private newlineFrom(offset: number): number {
    if (!this.block || offset < this.blockAt || offset >= this.blockAt + this.blockLength) return -1;
    return this.block.subarray(0, this.blockLength).indexOf(NEWLINE, offset - this.blockAt);
  }

  /** Read `size` bytes from `offset` into the block; returns how many there were. */
  private load(offset: number, size: number): number {
    let fd: number;
    try {
      fd = openSync(this.path, "r");
    } catch {
      throw notFound("the log was read earlier and is gone now: its lines cannot be read back", {
        file: this.path,
      });
    }
    try {
      const st = fstatSync(fd);
      if (st.dev !== this.dev || st.ino !== this.ino) throw this.changed("another file is at its path now");
      if (!this.block || this.block.length < size) this.block = Buffer.allocUnsafe(size);
      this.blockAt = offset;
      this.blockLength = readSync(fd, this.block, 0, size, offset);
      return this.blockLength;
    } finally {
      closeSync(fd);
    }
  }

  /** The error for a file that is not the one folded any more. */
  changed(why: string) {
    return conflict(`${this.path}: the log was read earlier and ${why}: its lines cannot be read back`);
  }
}
