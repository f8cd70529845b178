/**
 * Atomic file replacement: write a temp file beside the target, fsync it, rename it over the target,
 * fsync the directory. A reader sees the old file or the new one, never half of either.
 */
import { closeSync, fsyncSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from "node:fs";
import { dirname } from "node:path";
import { gatherText } from "./gather.ts";

/** Private modes for everything freecode creates (files 0600, directories 0700). */
export const FILE_MODE = 0o600;
export const DIR_MODE = 0o700;

/** `mkdir -p` with the private directory mode. */
export function ensureDir(path: string): void {
  mkdirSync(path, { recursive: true, mode: DIR_MODE });
}

/** fsync a directory so a rename or a new file inside it survives a crash. */
export function fsyncDir(path: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(path, "r");
    fsyncSync(fd);
  } catch {
    // Some platforms (Windows) cannot open a directory: the rename is still atomic there.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

let tempCounter = 0;

/** Replace `path` with `data` atomically (temp + fsync + rename + directory fsync). */
export function writeFileAtomic(
  path: string,
  data: string | Uint8Array,
  options: { fsync?: boolean } = {},
): void {
  writeFileAtomicWith(path, (write) => write(data), options);
}

/** What `writeFileAtomicWith` hands its producer: appends to the temp file (gathered, 1 MiB a write). */
export type AtomicWrite = (data: string | Uint8Array) => void;

const GATHER_BYTES = 1024 * 1024;

/**
 * Replace `path` atomically with what `produce` writes, a piece at a time: a large document (an
 * OTLP export of a big log) need not be one string. If `produce` throws, the target is untouched.
 */
export function writeFileAtomicWith(
  path: string,
  produce: (write: AtomicWrite) => void,
  options: { fsync?: boolean } = {},
): void {
  const dir = dirname(path);
  ensureDir(dir);
  const tmp = `${path}.${process.pid}.${++tempCounter}.tmp`;
  let fd: number | undefined;
  try {
    try {
      fd = openSync(tmp, "w", FILE_MODE);
    } catch (error) {
      // The temp file is ours: the file that could not be written is the one asked for.
      throw Object.assign(error as Error, { path });
    }
    writeProduced(fd, produce);
    if (options.fsync !== false) fsyncSync(fd);
    closeSync(fd);
    fd = undefined;
    renameSync(tmp, path);
  } catch (error) {
    if (fd !== undefined) closeSync(fd);
    rmSync(tmp, { force: true });
    throw error;
  }
  if (options.fsync !== false) fsyncDir(dir);
}

/** Write what `produce` writes to `fd`, gathered in one kept buffer (1 MiB a write). */
export function writeProduced(fd: number, produce: (write: AtomicWrite) => void): void {
  const writeAll = (bytes: Uint8Array) => {
    let written = 0;
    while (written < bytes.length) written += writeSync(fd, bytes, written, bytes.length - written);
  };
  // One kept buffer (a fresh one per MiB made an export of hundreds of MB peak at ~900 MB).
  const text = gatherText(GATHER_BYTES, writeAll);
  produce((data) => {
    if (typeof data === "string") text.write(data);
    else {
      text.drain();
      writeAll(data);
    }
  });
  text.drain();
}
