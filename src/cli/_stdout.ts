/**
 * The CLI's standard output, written with `fs.writeSync` on descriptor 1 rather than through
 * `process.stdout`. Touching `process.stdout` (even `.isTTY`) builds Node's stream machinery, and
 * `node:tty` loads it too: a compiled hello-world started in ~30 ms without it and ~52 ms with
 * `process.stdout.write` on these machines, a cost every command paid before doing anything.
 * (Bun's native `Bun.stdout.writer()` starts as fast, but a reader that goes away made each later
 * write print an unhandled EPIPE error of its own.)
 *
 * Text is gathered up to 64 KiB (`util/gather.ts`) and written synchronously: once `flushStdout()`
 * resolves, the pipe or file has every byte, so nothing is lost when the process ends. A pipe left
 * non-blocking by whoever made it is waited on (EAGAIN). A reader that goes away (`freecode rollout
 * cat … | head`) makes the write throw `StdoutClosed`, which the CLI turns into a quiet exit with
 * status 141, as a process killed by SIGPIPE has, not an EPIPE stack trace.
 * Any other write error (a full disk) is `StdoutFailed`: one line on stderr and exit 74.
 */
import { fstatSync, statSync, writeSync } from "node:fs";
import { gatherText } from "../util/gather.ts";
import { guardedWriter } from "../util/memory-guard.ts";

/** The reader of standard output went away (EPIPE). */
export class StdoutClosed extends Error {
  constructor() {
    super("standard output was closed by its reader");
    this.name = "StdoutClosed";
  }
}

/** The exit status of a command whose output was cut off by its reader (128 + SIGPIPE). */
export const STDOUT_CLOSED_EXIT = 141;

/** Standard output could not be written (a full disk, an I/O error): not a bug, not bad input. */
export class StdoutFailed extends Error {
  constructor(cause: unknown) {
    super(`cannot write to standard output: ${(cause as Error).message}`, { cause });
    this.name = "StdoutFailed";
  }
}

/** The exit status of a command whose output could not be written (`EX_IOERR`). */
export const STDOUT_FAILED_EXIT = 74;

/** The error that ended writing (`StdoutClosed` or `StdoutFailed`): every later write throws it. */
let failure: Error | undefined;

/** Write all of `bytes` to descriptor 1. */
function writeAll(bytes: Uint8Array): void {
  let done = 0;
  while (done < bytes.length) {
    try {
      done += writeSync(1, bytes, done, bytes.length - done);
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (code === "EAGAIN") Bun.sleepSync(1);
      // What was gathered is dropped: the next write would fail the same way.
      else throw (failure = code === "EPIPE" ? new StdoutClosed() : new StdoutFailed(error));
    }
  }
}

const out = gatherText(64 * 1024, writeAll);

/** Write what is gathered now. */
function drain(): void {
  if (failure) throw failure;
  out.drain();
}

/** Queue `text` for standard output (written once 64 KiB are gathered, or at `flushStdout`). */
export function writeStdout(text: string): void {
  if (failure) throw failure;
  out.write(text);
}

/** A writer of many pieces to stdout, their garbage collected young (see `guardedWriter`). */
export const stdoutPieces = (): ((text: string) => void) => guardedWriter(writeStdout);

/** Write everything queued; resolves once the pipe or file has taken it. */
export async function flushStdout(): Promise<void> {
  drain();
}

/**
 * Write what is queued before something goes to stderr, so that the two stay in the order they
 * were written (in a terminal, or in one file with `2>&1`). A failure is not thrown here, to the
 * writer of the stderr line: it is kept and thrown by the next write or flush of stdout.
 */
export function drainBeforeStderr(): void {
  if (failure || out.pending === 0) return;
  try {
    drain();
  } catch {
    // Kept in `failure`; the command's next write or its final flush reports it.
  }
}

let terminal: boolean | undefined;

/**
 * Whether standard output is a terminal, without `node:tty`: a character device other than
 * `/dev/null` (the one character device output is commonly sent to that is not a terminal).
 */
export function stdoutIsTerminal(): boolean {
  if (terminal === undefined) {
    try {
      const st = fstatSync(1);
      terminal = st.isCharacterDevice() && st.rdev !== statSync("/dev/null").rdev;
    } catch {
      terminal = false;
    }
  }
  return terminal;
}

/** The terminal's width in columns (`undefined` when standard output is not a terminal). */
export function stdoutColumns(): number | undefined {
  // Only a terminal pays for the stream `process.stdout` builds.
  return stdoutIsTerminal() ? process.stdout.columns || undefined : undefined;
}
