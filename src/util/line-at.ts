/**
 * Reading one line of a file back by its byte offset, later: what lets a fold keep a reference to a
 * line (8 bytes) instead of a copy of what it needs from it. An append-only log never changes the
 * lines it has, so a line read back is the line that was folded, as long as the file is the same
 * file: the reader notes the file's identity (device and inode) when it is made and checks it on
 * every read, so a log replaced or removed since fails with a clear error instead of giving another
 * line. Reads go through one block shared by the process's readers and kept from the last read
 * (lines are usually asked for in file order), and the file is opened per block read, not held
 * open: a process folding thousands of logs keeps no descriptors and one block.
 */
import { closeSync, fstatSync, openSync, readSync, statSync } from "node:fs";
import { conflict, notFound } from "../errors.ts";
import { onPath } from "./fs-path.ts";

const BLOCK = 256 * 1024;
const NEWLINE = 10;
/** The largest block kept for the next read (one for a longer line is dropped after it). */
const KEEP = 8 * 1024 * 1024;

// One block for every reader in the process, kept between reads: a fresh buffer costs a page fault
// per 4 KiB on first touch, which on these VMs cost about 1 ms per 256 KiB: more than reading a
// small log's line back. Reads are synchronous, so readers take turns; the block says whose it is.
let block: Buffer | undefined;
let owner: LineAt | undefined;
/** File offset of `block[0]`, and how many bytes of it hold file data. */
let blockAt = 0;
let blockLength = 0;

/** Lines of one file, read back by offset. */
export class LineAt {
  private readonly dev: number;
  private readonly ino: number;

  /** Note `path`'s identity now (the file the lines are folded from). */
  constructor(readonly path: string) {
    const st = statSync(path);
    this.dev = st.dev;
    this.ino = st.ino;
  }

  /**
   * Bytes of this file from `offset`, as a reader just read them (copied): lines in them are read
   * back without reading the file again. A fold of a small log (eval folds thousands) is given its
   * whole file this way; a block larger than `BLOCK` is not kept.
   */
  seed(bytes: Uint8Array, offset: number): void {
    if (bytes.length > BLOCK) return;
    if (!block || block.length < bytes.length) block = Buffer.allocUnsafe(BLOCK);
    block.set(bytes);
    blockAt = offset;
    blockLength = bytes.length;
    owner = this;
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
    const b = block!;
    const start = offset - blockAt;
    const bom = b[start] === 0xef && b[start + 1] === 0xbb && b[start + 2] === 0xbf;
    const text = b.toString("utf8", bom ? start + 3 : start, nl);
    if (b.length > KEEP) [block, owner] = [undefined, undefined];
    return text;
  }

  /** The index in the block of the newline ending the line at `offset`; `-1` if not in the block. */
  private newlineFrom(offset: number): number {
    if (owner !== this || !block || offset < blockAt || offset >= blockAt + blockLength) return -1;
    return block.subarray(0, blockLength).indexOf(NEWLINE, offset - blockAt);
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
      if (!block || block.length < size) block = Buffer.allocUnsafe(size);
      owner = undefined; // until the read is done: a failed read leaves no block behind
      blockLength = onPath(this.path, () => readSync(fd, block!, 0, size, offset));
      blockAt = offset;
      owner = this;
      return blockLength;
    } finally {
      closeSync(fd);
    }
  }

  /** The error for a file that is not the one folded any more. */
  changed(why: string) {
    return conflict(`${this.path}: the log was read earlier and ${why}: its lines cannot be read back`);
  }
}
