/**
 * Atomic file replacement: write a temp file beside the target, fsync it, rename it over the target,
 * fsync the directory. A reader sees the old file or the new one, never half of either.
 */
import { closeSync, fsyncSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from "node:fs";
import { dirname } from "node:path";

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
  const dir = dirname(path);
  ensureDir(dir);
  const tmp = `${path}.${process.pid}.${++tempCounter}.tmp`;
  const bytes = typeof data === "string" ? Buffer.from(data) : data;
  let fd: number | undefined;
  try {
    fd = openSync(tmp, "w", FILE_MODE);
    let written = 0;
    while (written < bytes.length) written += writeSync(fd, bytes, written, bytes.length - written);
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
