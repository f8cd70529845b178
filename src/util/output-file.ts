/**
 * Writing a file the user named (an eval report, an export, an OTLP trace). A regular file, or one
 * not there yet, is replaced atomically (`atomic.ts`). Anything else is written through, as a shell
 * redirect would: a symlink's target is written and the link kept; a device or FIFO (a named pipe
 * a CI step reads) is written in place; stdout and stderr (`/dev/stdout`, `/dev/fd/1`) are written
 * to as they are open, appended to a file they were redirected to; a file where none can be created
 * beside it (procfs) is written in place. Replaced by a regular file, the report never reached its
 * reader, and run as root `junit:/dev/full` replaced the device. A target that cannot be opened
 * reads "cannot write", as a failed write does.
 */
import { closeSync, lstatSync, openSync, readlinkSync, realpathSync, statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { type AtomicWrite, FILE_MODE, writeFileAtomicWith, writeProduced } from "./atomic.ts";

export function writeOutputFile(
  path: string,
  produce: (write: AtomicWrite) => void,
  options: { fsync?: boolean } = {},
): void {
  // One of this process's descriptors (`/dev/stdout` is a link to `/proc/self/fd/1`): written to as
  // it is, whatever it is open on — a pipe, a socket (which cannot be opened by path), or a file
  // stdout was redirected to (replaced, it lost what was written to it before, `>>` or not).
  // Looking at the path (its links, what they reach) fails when a file stands where a directory of
  // it should be: a write that failed, said as one (it read "cannot read").
  let own: string | undefined;
  let st: ReturnType<typeof statSync>;
  try {
    own = ownDescriptor(path);
    // Followed through its links: what a write to `path` reaches.
    st = own === undefined ? statSync(path, { throwIfNoEntry: false }) : undefined;
  } catch (error) {
    throw Object.assign(error as Error, { syscall: "write", path });
  }
  if (own !== undefined) {
    writeThrough(path, Number(own), produce);
    return;
  }
  if (st === undefined || st.isFile()) {
    try {
      writeFileAtomicWith(st ? realpathSync(path) : whereALinkLeads(path), produce, options);
    } catch (error) {
      // A file whose directory takes no new file (procfs, sysfs: the temp file beside it is "no
      // such file", the directory there) is written in place, as a redirect would, and its own
      // refusal is the reason: `junit:/proc/version` said "no such file or directory" (exit 3).
      if (!(st && (error as NodeJS.ErrnoException).code === "ENOENT")) throw openIsWrite(error);
      writeInPlace(path, produce);
    }
    return;
  }
  // A device or a FIFO: opened through the links, written in place.
  writeInPlace(path, produce);
}

/** A target that cannot be opened to be written is one that cannot be written ("cannot write X"). */
function openIsWrite(error: unknown): unknown {
  const e = error as NodeJS.ErrnoException;
  if (e.syscall === "open") e.syscall = "write";
  return e;
}

function writeInPlace(path: string, produce: (write: AtomicWrite) => void): void {
  let fd: number;
  try {
    fd = openSync(path, "w", FILE_MODE);
  } catch (error) {
    throw Object.assign(openIsWrite(error) as Error, { path });
  }
  try {
    writeThrough(path, fd, produce);
  } finally {
    closeSync(fd);
  }
}

/**
 * `/dev/fd/N`, `/proc/self/fd/N` for stdout and stderr. Other descriptors are opened by path like
 * any file: a number past 2 may be one of the runtime's own (writing a report into it broke it), or
 * none (EBADF was an internal error).
 */
const OWN_FD = /^\/(dev|proc\/self)\/fd\/([12])$/;

/** Whether `path` is this process's standard output (`/dev/stdout`, `/dev/fd/1`, a link to one). */
export function isStdoutPath(path: string): boolean {
  try {
    return ownDescriptor(path) === "1";
  } catch {
    return false;
  }
}

/** The descriptor of this process `path` or one of the links it goes through names, if any. */
function ownDescriptor(path: string): string | undefined {
  for (const p of linkChain(path)) {
    const n = OWN_FD.exec(p)?.[2];
    if (n !== undefined) return n;
  }
  return undefined;
}

function writeThrough(path: string, fd: number, produce: (write: AtomicWrite) => void): void {
  try {
    writeProduced(fd, produce);
  } catch (error) {
    throw Object.assign(error as Error, { path });
  }
}

/** Where `path`'s links lead (a dangling link: where it points; its target is created, the link kept). */
const whereALinkLeads = (path: string): string => linkChain(path).at(-1)!;

/** `path`, then each path its symbolic links lead to, in turn (at most 40, as the kernel follows). */
function linkChain(path: string): string[] {
  const chain = [path];
  for (let p = path; chain.length <= 40 && lstatSync(p, { throwIfNoEntry: false })?.isSymbolicLink(); ) {
    p = resolve(dirname(p), readlinkSync(p));
    chain.push(p);
  }
  return chain;
}
