/**
 * The documents the sync endpoint holds: `<home>/remote/<key>.json`, one file per upload, written
 * atomically and privately (0600 in a 0700 directory). The key is 32 random bytes in base64url: the
 * link is the capability, so it must not be guessable, and only a string of exactly that shape is
 * ever joined to the directory (no `..`, no `/`, nothing else reaches the filesystem).
 *
 * A file is `{"expiresAt":<ms>,"document":<the document as uploaded>}`: the expiry sits in the first
 * bytes, so the sweep reads a few bytes of each file rather than whole documents, and the document
 * is served as the exact byte range it was uploaded as (already checked on the way in).
 */
import crypto from "node:crypto";
import { closeSync, openSync, readdirSync, readSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { ensureDir, writeFileAtomicWith } from "../util/atomic.ts";

/** A key as handed out: 43 base64url characters (32 bytes). */
const KEY = /^[A-Za-z0-9_-]{43}$/;
const HEAD = /^\{"expiresAt":(\d{1,16}),"document":/;
/** An atomic write's temp file of an upload (`util/atomic.ts`): `<key>.json.<pid>.<n>.tmp`. */
const TEMP = /^[A-Za-z0-9_-]{43}\.json\.\d+\.\d+\.tmp$/;
/** Enough bytes to hold any head `HEAD` matches. */
const HEAD_BYTES = 64;
/** Temp files of a write that crashed are removed once this old. */
const STALE_TEMP_MS = 60 * 60 * 1000;

/** Whether `key` has the shape of a key this store hands out. */
export const isExportKey = (key: string): boolean => KEY.test(key);

export type StoredExport =
  | { kind: "found"; file: string; start: number; end: number; expiresAt: number }
  | { kind: "expired" }
  | { kind: "missing" };

/** `put` would take the store past its `maxStoredBytes`. */
export class ExportsFull extends Error {
  constructor(readonly limit: number) {
    super(`the server already holds its limit of ${limit} bytes of exports`);
  }
}

export interface RemoteExports {
  readonly dir: string;
  /** Store an (already checked) document; its key and expiry. `ExportsFull` past the quota. */
  put(document: Uint8Array): { key: string; expiresAt: number };
  /** Where the document of `key` is (a byte range of `file`); an expired one is removed. */
  get(key: string): StoredExport;
  /** Remove every expired document (and temp files a crash left); how many documents went. */
  sweep(): number;
}

export interface RemoteExportsOptions {
  /** `<home>/remote`. */
  dir: string;
  ttlMs: number;
  /** fsync the writes (default true). */
  fsync?: boolean;
  /** The most bytes of documents held at once (default: no limit): one token holder cannot fill the disk. */
  maxStoredBytes?: number;
  now?: () => number;
}

/** The export store in `options.dir` (created 0700 on first write). */
export function remoteExports(options: RemoteExportsOptions): RemoteExports {
  const { dir, ttlMs } = options;
  const now = options.now ?? Date.now;
  const pathOf = (key: string) => join(dir, `${key}.json`);
  const limit = options.maxStoredBytes ?? Number.POSITIVE_INFINITY;
  /** Bytes of the stored files, counted from the directory once, then kept up to date. */
  let held: number | undefined;
  const heldBytes = (): number => {
    if (held !== undefined) return held;
    held = 0;
    let names: string[] = [];
    try {
      names = readdirSync(dir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    }
    for (const name of names)
      if (name.endsWith(".json") && isExportKey(name.slice(0, -5)))
        held += statSync(join(dir, name), { throwIfNoEntry: false })?.size ?? 0;
    return held;
  };
  /** Remove a stored file, keeping the count. */
  const remove = (file: string) => {
    const size = statSync(file, { throwIfNoEntry: false })?.size ?? 0;
    rmSync(file, { force: true });
    if (held !== undefined) held = Math.max(0, held - size);
  };

  /** The expiry and document range of a stored file, or undefined when it is not one of ours. */
  function head(file: string): { expiresAt: number; start: number; end: number } | undefined {
    let fd: number | undefined;
    try {
      fd = openSync(file, "r");
      const buf = Buffer.alloc(HEAD_BYTES);
      const n = readSync(fd, buf, 0, HEAD_BYTES, 0);
      const m = HEAD.exec(buf.subarray(0, n).toString("latin1"));
      if (!m) return undefined;
      // The document ends before the closing brace, the file's last byte.
      return { expiresAt: Number(m[1]), start: m[0].length, end: statSync(file).size - 1 };
    } catch (error) {
      // Gone, or not a file of ours (a directory with a key's name): left alone, as README says.
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ENOENT" || code === "EISDIR") return undefined;
      throw error;
    } finally {
      if (fd !== undefined) closeSync(fd);
    }
  }

  /** Remove every expired document (and old temp files); how many documents went. */
  function sweepExpired(): number {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return 0;
      throw error;
    }
    let removed = 0;
    const t = now();
    for (const name of names) {
      const file = join(dir, name);
      if (TEMP.test(name)) {
        // A crashed write's leftover; a write in progress is younger than this. Only ours: any
        // other `.tmp` in the directory (a user's) was removed too.
        const age = t - (statSync(file, { throwIfNoEntry: false })?.mtimeMs ?? t);
        if (age > STALE_TEMP_MS) rmSync(file, { force: true });
        continue;
      }
      const key = name.endsWith(".json") ? name.slice(0, -5) : "";
      if (!isExportKey(key)) continue; // not ours: left alone
      const h = head(file);
      if (h && h.expiresAt <= t) {
        remove(file);
        removed++;
      }
    }
    return removed;
  }

  return {
    dir,
    put(document) {
      const size = document.length + HEAD_BYTES;
      if (limit !== Number.POSITIVE_INFINITY && heldBytes() + size > limit) {
        // Expired ones may make room, and files removed by hand (counted again from the directory:
        // the kept count knows only this process's own removals).
        sweepExpired();
        held = undefined;
        if (heldBytes() + size > limit) throw new ExportsFull(limit);
      }
      ensureDir(dir);
      const key = crypto.randomBytes(32).toString("base64url");
      const expiresAt = now() + ttlMs;
      writeFileAtomicWith(
        pathOf(key),
        (write) => {
          write(`{"expiresAt":${expiresAt},"document":`);
          write(document);
          write("}");
        },
        { fsync: options.fsync !== false },
      );
      if (held !== undefined) held += statSync(pathOf(key)).size;
      return { key, expiresAt };
    },
    get(key) {
      if (!isExportKey(key)) return { kind: "missing" };
      const file = pathOf(key);
      const h = head(file);
      if (!h) return { kind: "missing" };
      if (h.expiresAt <= now()) {
        remove(file);
        return { kind: "expired" };
      }
      return { kind: "found", file, ...h };
    },
    sweep: sweepExpired,
  };
}
