/**
 * Per-file import state in `<home>/state/imports.json`: how far each transcript was read (byte
 * offset, line number, a hash of the imported prefix), and for whole documents a content hash. A
 * JSONL transcript's parser state (a long one's replay memory: ~12 bytes an entry) is kept in a file
 * of its own under `state/parsers/`, read only when that transcript is read again and written only
 * when it was read: with every parser inside it, imports.json held all of them, and every import
 * (every watch pass that found something new) parsed and rewrote them all. It is derived data — the
 * writer merges by stable ids, so a lost or corrupt state file only costs a full re-read, never a
 * duplicate. Written atomically: the parser files first (not flushed: one that a crash left behind
 * is told by its offset, and costs a re-read), then imports.json.
 */
import {
  closeSync,
  existsSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  rmSync,
  statSync,
} from "node:fs";
import { basename, join } from "node:path";
import * as v from "valibot";
import { homePaths } from "../home.ts";
import { ensureDir, writeFileAtomic } from "../util/atomic.ts";
import { AGENTS } from "./types.ts";

const FileStateSchema = v.looseObject({
  agent: v.picklist(AGENTS),
  /** How the file was read: a JSONL transcript or a whole document (a Gemini recording may be
   * `.jsonl` and a document), so an unchanged file is read again the same way. */
  kind: v.optional(v.picklist(["jsonl", "document"])),
  size: v.number(),
  mtimeMs: v.number(),
  /** JSONL: byte offset just past the last imported line, and that line's number. */
  offset: v.optional(v.number()),
  lineNo: v.optional(v.number()),
  /** JSONL: hash of the imported prefix (head and tail samples), to tell growth from a rewrite. */
  prefixHash: v.optional(v.string()),
  /** Whole documents: hash of the content. */
  hash: v.optional(v.string()),
  /** OpenCode databases: session id → time_updated when imported. */
  stamps: v.optional(v.record(v.string(), v.number())),
  /** The parser's state, in memory after a read (and in files from before it was kept apart). */
  parser: v.optional(v.unknown()),
  /** The parser's state is in its own file (`parserFile`), saved at this offset. */
  parserAt: v.optional(v.number()),
  /** The last read was a `--watch` pass, or a final one that left a response open because it may
   * still be streaming (`live.ts`): what it left open (a response, calls unanswered) waits for a
   * final read, even if the file does not change again. */
  open: v.optional(v.boolean()),
  /**
   * A `--watch` pass left a response open that said it is complete (`stop_reason`): a later pass
   * reads the file again once it has been quiet for `QUIET_MS`, changed or not, to close it.
   */
  settling: v.optional(v.boolean()),
  /** Read with `--redact` (absent: without): a change of the flag reads the file again. */
  redact: v.optional(v.boolean()),
  /** Its sessions were marked done by `import --finished` (`source.finished`). */
  finished: v.optional(v.boolean()),
  sessions: v.array(v.string()),
});
export type FileState = v.InferOutput<typeof FileStateSchema>;

const ImportsSchema = v.object({ version: v.literal(1), files: v.record(v.string(), FileStateSchema) });
export type Imports = v.InferOutput<typeof ImportsSchema>;

export const importsPath = (home: string) => join(homePaths(home).state, "imports.json");

/** Load the state; a missing file is empty, a corrupt one is reported and started afresh. */
/**
 * What one process last loaded or saved, and the file's identity then. A watch pass read, parsed and
 * validated the whole state every second (~1.1 KB a transcript: 340 KB for 300) although only this
 * process had written it: while the file is the one this process saw, its text is taken back as it
 * is (it was validated or written here).
 */
export interface StateCache {
  stamp?: string;
  text?: string;
}

const stampOf = (path: string): string | undefined => {
  try {
    const st = statSync(path);
    return `${st.ino}:${st.size}:${st.mtimeMs}`;
  } catch {
    return undefined;
  }
};

export function loadImports(
  home: string,
  cache?: StateCache,
): { imports: Imports; problem?: string; text?: string } {
  const path = importsPath(home);
  const empty: Imports = { version: 1, files: {} };
  if (cache?.text !== undefined && cache.stamp !== undefined && cache.stamp === stampOf(path))
    return { imports: JSON.parse(cache.text) as Imports, text: cache.text };
  if (!existsSync(path)) return { imports: empty };
  try {
    const parsed = v.safeParse(ImportsSchema, JSON.parse(readFileSync(path, "utf8")));
    // `text` is the state as it would be saved (the schema's key order), to tell a pass that changed
    // nothing (see `saveImports`).
    if (parsed.success) {
      const text = JSON.stringify(parsed.output);
      if (cache) Object.assign(cache, { stamp: stampOf(path), text });
      return { imports: parsed.output, text };
    }
    return { imports: empty, problem: `${path}: ${v.summarize(parsed.issues)} (re-reading every source)` };
  } catch (error) {
    return { imports: empty, problem: `${path}: ${(error as Error).message} (re-reading every source)` };
  }
}

/**
 * Save the state atomically (temp file + fsync + rename), unless it is what `previous` (the text
 * loaded) already holds: a watch pass that found nothing new rewrote and fsynced the whole file
 * every second (~1.1 KB a transcript: 340 KB a pass for 300 files).
 */
export function saveImports(
  home: string,
  imports: Imports,
  fsync = true,
  previous?: string,
  cache?: StateCache,
): void {
  const files: Imports["files"] = {};
  const kept = new Set<string>();
  for (const [path, f] of Object.entries(imports.files)) {
    const { parser, ...rest } = f;
    if (parser !== undefined && f.offset !== undefined) {
      ensureDir(parsersDir(home));
      writeFileAtomic(parserFile(home, path), JSON.stringify({ path, offset: f.offset, parser }), {
        fsync: false,
      });
      rest.parserAt = f.offset;
    }
    if (rest.parserAt !== undefined) kept.add(basename(parserFile(home, path)));
    files[path] = rest;
  }
  const text = JSON.stringify({ ...imports, files });
  if (text !== previous) writeFileAtomic(importsPath(home), text, { fsync });
  if (cache) Object.assign(cache, { stamp: stampOf(importsPath(home)), text });
  // The parsers of files the state no longer has (gone from their folder: `run.ts` forgets them).
  if (text !== previous && existsSync(parsersDir(home)))
    for (const name of readdirSync(parsersDir(home)))
      if (name.endsWith(".json") && !kept.has(name)) rmSync(join(parsersDir(home), name), { force: true });
}

const parsersDir = (home: string) => join(homePaths(home).state, "parsers");
const parserFile = (home: string, path: string) =>
  join(parsersDir(home), `${Bun.hash(path).toString(36)}.json`);

/**
 * The parser state saved for `path` at `offset` (see `FileState.parserAt`); undefined when its file
 * is missing, unreadable, another path's, or of another offset (written by a pass whose
 * imports.json a crash lost): the transcript must then be read from the start.
 */
export function loadParser(home: string, path: string, offset: number): unknown {
  try {
    const doc = JSON.parse(readFileSync(parserFile(home, path), "utf8")) as {
      path?: unknown;
      offset?: unknown;
      parser?: unknown;
    };
    return doc.path === path && doc.offset === offset ? doc.parser : undefined;
  } catch {
    return undefined;
  }
}

const SAMPLE = 64 * 1024;

/** The buffer `readRange` reads into, kept (fresh memory costs a page fault per 4 KiB). */
let scratch = Buffer.allocUnsafe(0);

/** Up to `length` bytes of `fd` from `start` (fewer at the end of the file); valid until the next call. */
function readRange(fd: number, start: number, length: number): Uint8Array {
  if (scratch.length < length) scratch = Buffer.allocUnsafe(Math.max(length, SAMPLE));
  let got = 0;
  while (got < length) {
    const n = readSync(fd, scratch, got, length - got, start + got);
    if (n === 0) break;
    got += n;
  }
  return scratch.subarray(0, got);
}

/**
 * Hash of bytes `[0, end)` of a file: the whole prefix when small, else its head and tail plus the
 * length — enough to tell an appended file from a rewritten one without re-reading gigabytes.
 * Read synchronously: two small reads cost less than a round trip through the async file API.
 */
export async function prefixHash(path: string, end: number): Promise<string> {
  const fd = openSync(path, "r");
  try {
    const hash = (start: number, length: number) => Bun.hash(readRange(fd, start, length)).toString(36);
    if (end <= SAMPLE * 2) return hash(0, end);
    const head = hash(0, SAMPLE);
    return `${end}:${head}:${hash(end - SAMPLE, SAMPLE)}`;
  } finally {
    closeSync(fd);
  }
}
