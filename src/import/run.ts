/**
 * One import pass over a set of paths: discover the transcripts, skip what has not changed since the
 * last pass (size + mtime, then the prefix hash), read only the new part of a grown JSONL file with
 * the parser state saved last time, write through the storage adapter, save the import state.
 * Returns a summary per source path.
 */
import { existsSync, statSync } from "node:fs";
import { sep } from "node:path";
import type { StorageAdapter } from "../storage/contract.ts";
import { own } from "../util/dict.ts";
import { createCollectionPace } from "../util/memory-guard.ts";
import { ClaudeParser } from "./claude.ts";
import type { ClaudeState } from "./claude-state.ts";
import { CodexParser, type CodexState } from "./codex.ts";
import { type Candidate, discover, type KnownFiles, type LeftOut } from "./discover.ts";
import { mapGemini } from "./gemini.ts";
import { sessionIdFor } from "./ids.ts";
import { feedJsonl } from "./jsonl.ts";
import { mayStillStream, QUIET_MS, within } from "./live.ts";
import { mapOpencodeSession } from "./opencode.ts";
import { readOpencodeDb, readOpencodeExport, readOpencodeRows } from "./opencode-source.ts";
import { redactState } from "./redact-state.ts";
import { type FileState, type Imports, loadParser, prefixHash } from "./state.ts";
import type { Agent, EntryCounts, ImportedSession, ImportWarning } from "./types.ts";
import { type Known, type WriteStatus, writeSession } from "./write.ts";

export interface SourceSummary {
  agent: Agent | "auto";
  path: string;
  /**
   * `open`: files a final read left something open in, as they may still be written (`live.ts`).
   * `skipped`: paths named on the command line that are not this importer's (each with a warning).
   * `failed`: files named on the command line that could not be read (a document that does not
   * parse and is no longer written, a file that cannot be opened; each with a warning).
   */
  files: { found: number; read: number; unchanged: number; open: number; skipped: number; failed: number };
  /** With `auto`: the files found, per agent that wrote them. */
  agents?: Partial<Record<Agent, number>>;
  sessions: { created: number; updated: number; unchanged: number };
  entries: { imported: number; skipped: Record<string, number> };
  warnings: ImportWarning[];
}

export interface PassOptions {
  adapter: StorageAdapter;
  /** The freecode home: where a transcript's parser state is kept (`state.ts`). */
  home: string;
  imports: Imports;
  redact?: boolean;
  /** False while watching: open responses and unanswered calls wait for their lines. */
  final?: boolean;
  /**
   * The agents are done (`import --finished`, say in CI right after the agent exits): nothing is
   * taken for still written (`live.ts`), so what is open is closed now.
   */
  finished?: boolean;
  /** Storage knowledge kept across passes (watch mode). */
  cache?: Map<string, Known>;
  /** Write a JSONL transcript's ready part every this many bytes read (default 4 MiB). */
  writeEveryBytes?: number;
}

const newSummary = (agent: Agent | "auto", path: string): SourceSummary => ({
  agent,
  path,
  files: { found: 0, read: 0, unchanged: 0, open: 0, skipped: 0, failed: 0 },
  sessions: { created: 0, updated: 0, unchanged: 0 },
  entries: { imported: 0, skipped: {} },
  warnings: [],
});

function addCounts(sum: SourceSummary, counts: EntryCounts, warnings: ImportWarning[]): void {
  sum.entries.imported += counts.imported;
  for (const [k, n] of Object.entries(counts.skipped))
    sum.entries.skipped[k] = (sum.entries.skipped[k] ?? 0) + n;
  sum.warnings.push(...warnings);
}

/**
 * Files the import state knows, unchanged since: their candidate without sniffing them again (see
 * `KnownFiles`), read the way they were read — not by their name: a Gemini recording in `.jsonl`
 * is a document, and taken for a transcript it went to the Codex parser, which imported nothing
 * (a `--redact` re-read or a purged session's rebuild then lost it). A state from before `kind` was
 * kept tells it by what it saved (a document's hash, a transcript's offset).
 */
const knownFiles =
  (imports: Imports): KnownFiles =>
  (path, size, mtimeMs) => {
    const f = own(imports.files, path);
    if (!f || f.size !== size || f.mtimeMs !== mtimeMs) return undefined;
    const kind = f.kind ?? (f.hash !== undefined ? "document" : f.offset !== undefined ? "jsonl" : undefined);
    return kind === undefined ? undefined : { agent: f.agent, kind, path };
  };

/** Import everything under `root` (a file or folder) for `agent`. */
export async function importRoot(
  root: string,
  agent: Agent | "auto",
  opts: PassOptions,
): Promise<SourceSummary> {
  const sum = newSummary(agent, root);
  let candidates: Candidate[] = [];
  const left: LeftOut = { named: 0, unreadable: 0, byAgent: {} };
  try {
    candidates = discover(root, agent, sum.warnings, undefined, knownFiles(opts.imports), left);
  } catch (error) {
    // Each entry's own failure is a warning already; this is anything else, still not fatal.
    sum.warnings.push({ file: root, message: `not imported: ${(error as Error).message}` });
  }
  sum.files.found = candidates.length;
  if (agent === "auto") {
    sum.agents = {};
    for (const c of candidates) sum.agents[c.agent] = (sum.agents[c.agent] ?? 0) + 1;
  }
  sum.files.skipped = left.named;
  sum.files.failed = left.unreadable;
  const others = Object.entries(left.byAgent);
  if (candidates.length === 0 && others.length > 0)
    sum.warnings.push({
      file: root,
      message: `no ${agent} transcripts here, but ${others.map(([a, n]) => `${n} ${a}`).join(", ")} (\`freecode import auto\` takes each for its agent)`,
    });
  const goneOpen = forgetGone(opts.imports, root, candidates);
  for (const c of candidates) {
    const read = sum.files.read;
    try {
      await importCandidate(c, sum, opts);
    } catch (error) {
      // The store could not be written (a full or read-only disk): not this transcript's problem,
      // and no other will fare better: the import stops, exit 74 naming the store (it went on with a
      // warning per file, exit 0, or exit 2 calling a readable transcript unreadable).
      if (storeCannotWrite(error)) throw error;
      // Not read, whatever it got to (it was counted read and failed at once).
      sum.files.read = read;
      // One unreadable source must not stop the others. Named on the command line, it is the
      // command's failure (`import … && eval` must stop), unless it may still be written (a Gemini
      // recording is rewritten whole: read mid-write, it is read again next time).
      sum.warnings.push({ file: c.path, message: `not imported: ${(error as Error).message}` });
      if (c.path === root && !mayStillStream(c.mtimeMs ?? Number.NaN)) sum.files.failed++;
    }
  }
  // Left open as still written (`live.ts`): what waited is lost with it — unless the file moved and
  // this pass read it at its new path (Codex archives a rollout): its sessions were written here.
  const written = outcomesIn(sum);
  for (const g of goneOpen)
    if (!g.sessions.some((id) => written.has(id)))
      sum.warnings.push({
        file: g.path,
        message:
          "gone while it was still being written: what it left open (a response's model call, unanswered calls) was never written",
      });
  countOutcomes(sum);
  return sum;
}

/**
 * Forget the files under `root` that are gone (Claude Code deletes transcripts after 30 days by
 * default): their state (a long transcript's replay memory, an open file's held message) was kept,
 * and rewritten with the rest on every import, for ever. Their sessions stay in the store; a file
 * that comes back is read as new, and its stable ids leave what was stored as it is. Returns those
 * a read left open (the caller says what was lost with them, if nothing else wrote their sessions).
 */
function forgetGone(
  imports: Imports,
  root: string,
  found: Candidate[],
): { path: string; sessions: string[] }[] {
  const listed = new Set(found.map((c) => c.path));
  const inside = root.endsWith(sep) ? root : root + sep;
  const open: { path: string; sessions: string[] }[] = [];
  for (const path of Object.keys(imports.files)) {
    if (listed.has(path) || (path !== root && !path.startsWith(inside))) continue;
    if (existsSync(path)) continue;
    const f = imports.files[path];
    if (f?.open === true) open.push({ path, sessions: f.sessions });
    delete imports.files[path];
  }
  return open;
}

/** A signature of what is on disk: size and mtime (of every file a source is made of). */
function signature(c: Candidate): { size: number; mtimeMs: number } {
  // A file the walk just looked at: what it saw (a second `stat` per transcript per watch pass).
  if ((c.kind === "jsonl" || c.kind === "document") && c.size !== undefined && c.mtimeMs !== undefined)
    return { size: c.size, mtimeMs: c.mtimeMs };
  const paths =
    c.kind === "opencode-rows"
      ? ["session.jsonl", "message.jsonl", "part.jsonl"].map((f) => `${c.path}/${f}`)
      : c.kind === "opencode-db"
        ? [c.path, `${c.path}-wal`]
        : [c.path];
  let size = 0;
  let mtimeMs = 0;
  for (const p of paths) {
    try {
      const st = statSync(p);
      size += st.size;
      mtimeMs = Math.max(mtimeMs, st.mtimeMs);
    } catch {
      // A missing WAL file is normal.
    }
  }
  return { size, mtimeMs };
}

/**
 * A transcript is written in parts, one per this much read (see `SessionBuilder.result`), and a full
 * collection follows each part (`collections`). A part's entries wait in memory until it is written,
 * so young collections meanwhile promote them: without the full collection that old garbage piles
 * up until the heap has grown enough to trigger one, and every page the heap grows by costs a page
 * fault (~16 µs on these VMs). Importing a 129 MiB transcript (medians of 5, each alone in a fresh
 * process):
 * - 2 MiB parts, no collection (before): 1.37 s, 138 MB peak;
 * - 2 MiB parts, a full collection each (~6 ms): 1.37 s, 85 MB;
 * - 4 MiB parts, a full collection each: 1.19-1.23 s, 96 MB (this);
 * - 4 MiB parts, no collection: 1.42 s, 151 MB;
 * - 6 and 8 MiB parts, a full collection each: 1.27 s, 110 MB and 1.34 s, 120 MB.
 * Each part also costs ~1.3 ms of lock, lease and meta work, so smaller parts cost more.
 */
const WRITE_EVERY_BYTES = 4 * 1024 * 1024;

/**
 * At most one full collection per `WRITE_EVERY_BYTES` read, whatever the parts' size (a test that
 * writes a part per line must not collect per line), and no more than ~1.5 ms of collecting per
 * MiB read (~6 ms per 4 MiB with an importer's live heap; a process holding much more, a long
 * watch over many sessions, collects less often).
 */
const collections = createCollectionPace({ everyBytes: WRITE_EVERY_BYTES, maxMsPerMiB: 1.5 });

/** Errors of writing that only the store meets: reading a transcript never runs out of space. */
const WRITE_ERRORS = new Set(["ENOSPC", "EDQUOT", "EROFS", "SQLITE_FULL", "SQLITE_READONLY"]);
function storeCannotWrite(error: unknown): boolean {
  for (let e = error, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (
      typeof code === "string" &&
      (WRITE_ERRORS.has(code) || WRITE_ERRORS.has(code.split("_").slice(0, 2).join("_")))
    )
      return true;
  }
  return false;
}

/** Mark an imported session done (`source.finished`: see `--finished`), if it is stored unmarked. */
async function markFinished(adapter: StorageAdapter, id: string): Promise<void> {
  const meta = await adapter.getMeta(id);
  const source = meta?.source as { finished?: unknown } | undefined;
  if (!meta || !source || source.finished === true) return;
  await adapter.updateMeta(id, (m) => ({ ...m, source: { ...m.source!, finished: true } }));
}

/** Whether any of `ids` is not in the store. */
async function anyMissing(adapter: StorageAdapter, ids: string[]): Promise<boolean> {
  for (const id of ids) if ((await adapter.getMeta(id)) === undefined) return true;
  return false;
}

/** Which outcome of a session says more (a session written in one file and unchanged in another: written). */
const STATUS_RANK: Record<WriteStatus, number> = { gone: 0, empty: 0, unchanged: 1, updated: 2, created: 3 };

/** Note `status` as `id`'s outcome in `m` unless a stronger one is noted already. */
export function keepStrongest(m: Map<string, WriteStatus>, id: string, status: WriteStatus): void {
  const was = m.get(id);
  if (was === undefined || STATUS_RANK[status] > STATUS_RANK[was]) m.set(id, status);
}

/** How many sessions were created, updated and left unchanged, from their outcomes. */
export function sessionCounts(statuses: Iterable<WriteStatus>): SourceSummary["sessions"] {
  const counts = { created: 0, updated: 0, unchanged: 0 };
  for (const status of statuses) if (status !== "empty" && status !== "gone") counts[status]++;
  return counts;
}

/**
 * Each session's outcome in one source, the strongest of them: a session two files of a source
 * feed (an OpenCode export beside its row dump) is counted once, not once per file.
 */
const outcomesOf = new WeakMap<SourceSummary, Map<string, WriteStatus>>();

function noteOutcome(sum: SourceSummary, id: string, status: WriteStatus): void {
  let m = outcomesOf.get(sum);
  if (!m) outcomesOf.set(sum, (m = new Map()));
  keepStrongest(m, id, status);
}

/** Each session's outcome in one source (see `noteOutcome`): the totals of several sources count a
 * session once, by its strongest outcome. */
export function outcomesIn(sum: SourceSummary): ReadonlyMap<string, WriteStatus> {
  return outcomesOf.get(sum) ?? new Map();
}

/** The source's session counts from its noted outcomes. */
function countOutcomes(sum: SourceSummary): void {
  sum.sessions = sessionCounts(outcomesIn(sum).values());
}

async function importCandidate(c: Candidate, sum: SourceSummary, opts: PassOptions): Promise<void> {
  const sig = signature(c);
  const prev = opts.imports.files[c.path];
  // Unchanged files are skipped, but for a final read after a watch pass of a JSONL transcript: what
  // that pass left open is closed now (read from where it stopped: nothing new to parse).
  // And a watch pass reads again a file whose complete response waits for the file to be quiet.
  const settled = prev?.settling === true && opts.final === false && !within(sig.mtimeMs, QUIET_MS);
  const closing = (prev?.open === true && opts.final !== false) || settled;
  // A file imported with another `--redact` than now is read again from the start, as if new.
  const redact = opts.redact === true;
  const redactChanged = prev !== undefined && (prev.redact ?? false) !== redact;
  const unchanged =
    prev !== undefined &&
    !closing &&
    !redactChanged &&
    prev.agent === c.agent &&
    prev.size === sig.size &&
    prev.mtimeMs === sig.mtimeMs;
  // A session this file made that the store no longer holds (deleted for good) is made again, whole:
  // the file is read from the start. A watch pass asks only for files that changed (its idle pass
  // costs a stat per file); the next import without --watch brings back the rest.
  const purged =
    prev !== undefined &&
    !redactChanged &&
    !(unchanged && opts.final === false) &&
    (await anyMissing(opts.adapter, prev.sessions));
  if (unchanged && !purged) {
    sum.files.unchanged++;
    for (const id of prev.sessions) noteOutcome(sum, id, "unchanged");
    // `--finished` after a plain import that read it all: its sessions are marked done all the same.
    if (opts.finished && prev.finished !== true) {
      for (const id of prev.sessions) await markFinished(opts.adapter, id);
      prev.finished = true;
    }
    return;
  }
  if (purged) for (const id of prev.sessions) opts.cache?.delete(id);
  const restart = redactChanged || purged;
  sum.files.read++;
  if (redactChanged && !redact)
    sum.warnings.push({
      file: c.path,
      message:
        "imported before with --redact: read again without it, so its messages hold again what was masked (add --redact to keep it masked)",
    });
  if (redactChanged && redact)
    sum.warnings.push({
      file: c.path,
      message:
        "imported before without --redact: messages are masked now, but rollout events written then " +
        "still hold what was not masked, and so may the search index (`freecode session delete <id> --purge`, " +
        "import again, then `freecode store reindex`, to clean them)",
    });
  const next: FileState = {
    agent: c.agent,
    ...(c.kind === "jsonl" || c.kind === "document" ? { kind: c.kind } : {}),
    ...sig,
    ...(redact ? { redact } : {}),
    sessions: restart ? [] : (prev?.sessions ?? []),
  };
  const outcomes = new Map<string, WriteStatus>();
  // What storage held is loaded once per session and source, not once per part (see WriteNotes).
  const known = opts.cache ?? new Map<string, Known>();
  // Sessions that must be stored from here on (see `writeSession`'s `mustExist`): those an earlier
  // read made, when this one goes on from where it stopped, and those this read has made.
  const stored = new Set(restart || c.kind !== "jsonl" ? [] : (prev?.sessions ?? []));
  const gone = new Set<string>();
  const write = async (sessions: ImportedSession[]) => {
    for (const s of sessions) {
      const id = s.meta.id;
      if (gone.has(id)) continue;
      const mode = opts.cache ? "all" : "message-ids";
      // `--finished`: the agent said so, and `eval` takes the session for done (not for one whose last
      // event is recent and may still be running). A later import that reads more of it drops the mark.
      if (opts.finished) s.meta.source = { ...s.meta.source, finished: true };
      const out = await writeSession(opts.adapter, s, known, mode, redact, stored.has(id));
      if (out.status === "gone") {
        // Deleted while this import ran: left deleted. The file's state keeps the session, so the
        // next import finds it missing and makes it again, whole (read from the start).
        gone.add(id);
        sum.warnings.push({
          file: c.path,
          message: `session ${id} was deleted while it was imported: the rest was not written (the next import makes it again, whole)`,
        });
        continue;
      }
      if (out.status === "created" || out.status === "updated") stored.add(id);
      for (const note of out.notes) sum.warnings.push({ file: c.path, message: note });
      for (const r of out.rejected) {
        sum.warnings.push({ file: c.path, message: `${r.what} not imported: ${r.message}` });
        sum.entries.skipped["(invalid record)"] = (sum.entries.skipped["(invalid record)"] ?? 0) + 1;
      }
      keepStrongest(outcomes, s.meta.id, out.status);
    }
  };
  const basis = restart ? undefined : prev;
  if (c.kind === "jsonl") await readJsonl(c, basis, next, sum, opts, write);
  else await readDocument(c, basis, next, sum, opts, write);
  const ids = new Set(next.sessions);
  for (const id of gone) ids.add(id);
  for (const [id, status] of outcomes) {
    if (status === "empty" || status === "gone") continue;
    ids.add(id);
    noteOutcome(sum, id, status);
  }
  next.sessions = [...ids];
  // `--finished`: every session of the file is marked done, written now or not (a document read
  // again that changed nothing, an OpenCode session whose stamp did not move).
  if (opts.finished) {
    for (const id of next.sessions) if (!gone.has(id)) await markFinished(opts.adapter, id);
    next.finished = true;
  }
  opts.imports.files[c.path] = next;
}

/**
 * A JSONL transcript: continue after the last imported line when the prefix is unchanged. What can
 * no longer change is written every `WRITE_EVERY_BYTES` read, the rest at the end.
 */
async function readJsonl(
  c: Candidate,
  prev: FileState | undefined,
  next: FileState,
  sum: SourceSummary,
  opts: PassOptions,
  write: (sessions: ImportedSession[]) => Promise<void>,
): Promise<void> {
  let from = { offset: 0, lineNo: 0 };
  let saved: unknown;
  if (prev?.agent === c.agent && prev.offset !== undefined && prev.prefixHash) {
    // A file now shorter than what was read of it was rewritten too (it was read again silently).
    if (prev.offset <= next.size && (await prefixHash(c.path, prev.offset)) === prev.prefixHash) {
      saved =
        prev.parser ?? (prev.parserAt === undefined ? undefined : loadParser(opts.home, c.path, prev.offset));
      // Its parser state lost (a crash between the state's two writes): what was read is read again.
      if (saved !== undefined || prev.parserAt === undefined)
        from = { offset: prev.offset, lineNo: prev.lineNo ?? 0 };
      else
        sum.warnings.push({
          file: c.path,
          message: "its saved parser state is missing or stale (state/parsers): read again from the start",
        });
    } else
      sum.warnings.push({ file: c.path, message: "transcript was rewritten: read again from the start" });
  }
  const parseOpts = {
    path: c.path,
    redact: opts.redact,
    final: opts.final,
    ...(opts.finished ? {} : { lastWrite: next.mtimeMs }),
  };
  const parser =
    c.agent === "claude"
      ? new ClaudeParser(parseOpts, saved as ClaudeState | undefined)
      : new CodexParser(parseOpts, saved as CodexState | undefined);
  const io = { counts: { imported: 0, skipped: {} }, warnings: [] as ImportWarning[] };
  const everyBytes = opts.writeEveryBytes ?? WRITE_EVERY_BYTES;
  const checkpoint = {
    everyBytes,
    run: async () => {
      await write(parser.drain());
      // At least `everyBytes` were read since the last part.
      if (collections.due(everyBytes)) collections.collect();
    },
  };
  // A file no longer written: its last line, complete but for its newline, is read (see feedJsonl).
  const done = opts.finished === true || !mayStillStream(next.mtimeMs);
  const pos = await feedJsonl(c.path, parser, io, from, checkpoint, done ? "take" : "wait");
  const result = parser.finish();
  await write(result.sessions);
  addCounts(sum, io.counts, io.warnings);
  addCounts(sum, result.counts, result.warnings);
  next.offset = pos.offset;
  next.lineNo = pos.lineNo;
  next.prefixHash = await prefixHash(c.path, pos.offset);
  // Saved masked under --redact: the parser keeps titles (a /rename, an AI title) as read, and the
  // import state is a file in the home like the store (a key masked in the session stayed here).
  next.parser = opts.redact === true ? redactState(parser.state) : parser.state;
  if (opts.final === false || result.open === true) next.open = true;
  if (result.settling === true) next.settling = true;
  if (result.open === true) sum.files.open++;
  // A torn last line is not imported yet: make the next pass look at the file again.
  if (pos.torn) next.size = -1;
}

/**
 * Whole documents (Gemini, OpenCode exports, row dumps, databases): re-derived when changed. A
 * database is written session by session as it is read.
 */
async function readDocument(
  c: Candidate,
  prev: FileState | undefined,
  next: FileState,
  sum: SourceSummary,
  opts: PassOptions,
  write: (sessions: ImportedSession[]) => Promise<void>,
): Promise<void> {
  const counts: EntryCounts = { imported: 0, skipped: {} };
  const warnings: ImportWarning[] = [];
  const base = { path: c.path, redact: opts.redact, counts, warnings, finished: opts.finished === true };
  // A session left open (a call still pending: `live.ts`) makes the next import read the source again.
  const opened = (s: ImportedSession | undefined) => {
    if (!s?.open) return false;
    if (next.open !== true) sum.files.open++;
    next.open = true;
    return true;
  };
  if (c.kind === "opencode-db") {
    const stamps: Record<string, number> = {};
    const readIds = new Set<string>();
    for (const b of readOpencodeDb(c.path, prev?.stamps, stamps)) {
      readIds.add(b.session.id);
      const s = mapOpencodeSession(b.session, b.messages, base);
      // Its stamp is not kept, so the next import reads it even if it did not change: a session
      // left open, and one at work — OpenCode writes a response's last parts after the session's
      // last `time_updated` (up to ~2 s in the corpus's rows), and a read in between kept the
      // stamp, so the rest was never read. Read again until it has been quiet `STREAM_WAIT_MS`.
      const atWork = !opts.finished && mayStillStream(b.session.updated ?? Number.NaN);
      if (opened(s) || atWork) delete stamps[b.session.id];
      await write([s]);
    }
    next.stamps = stamps;
    // Sessions whose time_updated did not move were not read: unchanged.
    for (const raw of Object.keys(stamps))
      if (!readIds.has(raw)) noteOutcome(sum, sessionIdFor("opencode", raw), "unchanged");
  } else if (c.kind === "opencode-rows") {
    const sessions = readOpencodeRows(c.path, warnings, counts).map((b) =>
      mapOpencodeSession(b.session, b.messages, base),
    );
    for (const s of sessions) opened(s);
    await write(sessions);
  } else {
    const text = await Bun.file(c.path).text();
    next.hash = Bun.hash(text).toString(36);
    // The same text is derived again only when its last read left something to come.
    if (prev?.hash === next.hash && prev.open !== true) {
      for (const id of prev.sessions) noteOutcome(sum, id, "unchanged");
      return;
    }
    if (c.agent === "gemini") {
      const s = mapGemini(c.path, text, base);
      opened(s);
      await write(s ? [s] : []);
    } else {
      const b = readOpencodeExport(c.path, text, warnings, counts);
      const s = mapOpencodeSession(b.session, b.messages, base);
      opened(s);
      await write([s]);
    }
  }
  addCounts(sum, counts, warnings);
}
