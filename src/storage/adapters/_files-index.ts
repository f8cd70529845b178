/**
 * The files adapter's listing index: derived data, never the source of truth. Writers append one
 * line (`{id, key}`) to `state/sessions-journal.jsonl` whenever they write a meta; a lister replays
 * the journal from where the index stopped, and re-reads a project directory whose mtime moved
 * (sessions copied in or removed by hand). A missing, corrupt or foreign index, or a rotated journal,
 * means a full rebuild from the session files. So listing costs a few stats plus one query, however
 * many sessions there are, and a session written by another process shows up without a manual step.
 *
 * A writer killed while holding its lease leaves its appends uncounted in meta.json and writes no
 * journal line; its lock file stays behind. So a row is read with those messages folded in (the
 * same healing `getMeta` does), and the sessions of the lock files present are read again at each
 * listing until a writer takes the lock over (and writes the healed meta back, with a journal line).
 * Dot-names are skipped: they are temporary directories (session ids cannot start with a dot).
 */
import { renameSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { acknowledgedSize } from "../batch-mark.ts";
import type { ListPage, ListQuery } from "../contract.ts";
import type { SessionMeta } from "../records.ts";
import { journalStat, readJournal } from "./_files-journal.ts";
import { type FilesLayout, listDir, sessionFiles } from "./_files-paths.ts";
import { healCounters, readMetaFile } from "./_files-session.ts";

/** Bumped when the index's shape changes: an index of another version is rebuilt. */
export const INDEX_VERSION = 1;
const ROTATE_BYTES = 8 * 1024 * 1024;

export interface IndexState {
  version: number;
  journalIno: number;
  journalOffset: number;
  /** Project directory name → its mtime when last scanned. */
  projects: Record<string, number>;
}

export interface IndexRow {
  meta: SessionMeta;
  /** The project directory name the session lives in. */
  key: string;
}

/** What a storage engine for the index provides (SQLite, or a JSON file when SQLite cannot start). */
export interface IndexBackend {
  readonly kind: "sqlite" | "json";
  /** Run `fn` exclusively against the index (a transaction, or a lock). */
  exclusive<T>(fn: () => T): T;
  state(): IndexState | undefined;
  setState(state: IndexState): void;
  upsert(rows: IndexRow[]): void;
  remove(ids: string[]): void;
  /** Ids stored for one project directory. */
  idsOf(key: string): string[];
  /** The project directory a session is stored under, as the index has it. */
  keyOf(id: string): string | undefined;
  clear(): void;
  query(query: ListQuery): ListPage;
  close(): void;
}

export class SessionIndex {
  /**
   * `readOnly`: the index lives in memory over a home this process cannot write — its journal is
   * read as it is, never rotated (a rotation there failed: EACCES, and nothing was listed).
   */
  constructor(
    private readonly layout: FilesLayout,
    readonly backend: IndexBackend,
    private readonly readOnly = false,
  ) {}

  private row(key: string, id: string): IndexRow | undefined {
    try {
      const meta = readHealedMeta(join(this.layout.sessions, key, id));
      return meta ? { meta, key } : undefined;
    } catch {
      return undefined; // a corrupt meta is reported by `store verify`, not by listing
    }
  }

  /** Rebuild everything from the session files; returns how many sessions were indexed. */
  rebuild(): number {
    return this.backend.exclusive(() => this.rebuildLocked());
  }

  private rebuildLocked(): number {
    let journal = journalStat(this.layout.journal);
    if (journal.size > ROTATE_BYTES && !this.readOnly) {
      // Rotate: entries written before the scan below are covered by the scan itself.
      renameSync(this.layout.journal, `${this.layout.journal}.old`);
      rmSync(`${this.layout.journal}.old`, { force: true });
      journal = { ino: 0, size: 0 };
    }
    this.backend.clear();
    const projects: Record<string, number> = {};
    let count = 0;
    for (const key of listDir(this.layout.sessions)) {
      const mtime = this.mtime(key);
      if (mtime === undefined) continue;
      projects[key] = mtime;
      const rows: IndexRow[] = [];
      for (const id of listDir(join(this.layout.sessions, key))) {
        if (id.startsWith(".")) continue;
        const row = this.row(key, id);
        if (row) rows.push(row);
      }
      this.backend.upsert(rows);
      count += rows.length;
    }
    this.backend.setState({
      version: INDEX_VERSION,
      journalIno: journal.ino,
      journalOffset: journal.size,
      projects,
    });
    return count;
  }

  private mtime(key: string): number | undefined {
    try {
      const st = statSync(join(this.layout.sessions, key));
      return st.isDirectory() ? st.mtimeMs : undefined;
    } catch {
      return undefined;
    }
  }

  /** Bring the index up to date with the session files (cheap when nothing changed). */
  sync(): void {
    const journal = journalStat(this.layout.journal);
    const keys = listDir(this.layout.sessions).filter((k) => !k.startsWith("."));
    const mtimes = new Map(keys.map((k) => [k, this.mtime(k)] as const));
    const locked = this.lockedSessions();
    const before = this.backend.state();
    if (before && locked.length === 0 && this.isCurrent(before, journal, mtimes)) return;
    this.backend.exclusive(() => {
      const state = this.backend.state();
      const fresh = journalStat(this.layout.journal);
      if (
        !state ||
        state.version !== INDEX_VERSION ||
        (state.journalIno !== 0 && state.journalIno !== fresh.ino) ||
        fresh.size < state.journalOffset ||
        (fresh.size > ROTATE_BYTES && !this.readOnly)
      ) {
        this.rebuildLocked();
        return;
      }
      const next: IndexState = { ...state, journalIno: fresh.ino, projects: { ...state.projects } };
      this.replayJournal(next, fresh.size);
      for (const [key, mtime] of mtimes) {
        if (mtime !== undefined && state.projects[key] !== mtime) this.rescanProject(key, mtime, next);
      }
      for (const key of Object.keys(state.projects)) {
        if (!mtimes.has(key)) {
          this.backend.remove(this.backend.idsOf(key));
          delete next.projects[key];
        }
      }
      this.rereadLocked(locked);
      this.backend.setState(next);
    });
  }

  /** Ids of the sessions whose lock file exists (held now, or left by a writer that died). */
  private lockedSessions(): string[] {
    const ids: string[] = [];
    for (const name of listDir(this.layout.locks)) {
      const m = /^s-(.+)\.lock$/.exec(name);
      if (m) ids.push(m[1]!);
    }
    return ids;
  }

  /**
   * Read the rows of `ids` again, healed: their counters may be behind their logs. Where the index
   * has each: one it lacks is new (the journal and the project rescan bring it) or gone (a lock
   * file a writer left after a purge). Looked for in every project directory, 4,000 such lock
   * files over 1,000 projects made every listing take 18 s.
   */
  private rereadLocked(ids: string[]): void {
    const rows: IndexRow[] = [];
    for (const id of ids) {
      const key = this.backend.keyOf(id);
      const row = key === undefined ? undefined : this.row(key, id);
      if (row) rows.push(row);
    }
    this.backend.upsert(rows);
  }

  private isCurrent(
    state: IndexState,
    journal: { ino: number; size: number },
    mtimes: Map<string, number | undefined>,
  ) {
    if (state.version !== INDEX_VERSION || state.journalOffset !== journal.size) return false;
    if (state.journalIno !== journal.ino && journal.size > 0) return false;
    if (Object.keys(state.projects).length !== mtimes.size) return false;
    for (const [key, mtime] of mtimes) if (state.projects[key] !== mtime) return false;
    return true;
  }

  private replayJournal(state: IndexState, size: number): void {
    if (size <= state.journalOffset) return;
    const { entries, consumed } = readJournal(this.layout.journal, state.journalOffset, size);
    // A garbled line is skipped: the project rescan below still catches new directories.
    const touched = new Map<string, string>();
    for (const { id, key } of entries) touched.set(id, key);
    const rows: IndexRow[] = [];
    const gone: string[] = [];
    for (const [id, key] of touched) {
      const row = this.row(key, id);
      if (row) rows.push(row);
      else gone.push(id);
    }
    this.backend.remove(gone);
    this.backend.upsert(rows);
    state.journalOffset += consumed;
  }

  private rescanProject(key: string, mtime: number, state: IndexState): void {
    const onDisk = new Set(listDir(join(this.layout.sessions, key)).filter((id) => !id.startsWith(".")));
    const indexed = new Set(this.backend.idsOf(key));
    const rows: IndexRow[] = [];
    for (const id of onDisk) {
      if (indexed.has(id)) continue;
      const row = this.row(key, id);
      if (row) rows.push(row);
    }
    this.backend.upsert(rows);
    this.backend.remove([...indexed].filter((id) => !onDisk.has(id)));
    state.projects[key] = mtime;
  }

  list(query: ListQuery): ListPage {
    this.sync();
    return this.backend.query(query);
  }
}

/**
 * The meta of the session in `dir` with the messages meta.json does not count yet folded in
 * (`healCounters`): one stat when it is current; undefined when there is no meta.json.
 */
function readHealedMeta(dir: string): SessionMeta | undefined {
  const files = sessionFiles(dir);
  const read = readMetaFile(files.meta);
  if (!read) return undefined;
  const size = acknowledgedSize(files.messages) ?? 0;
  return healCounters(read.meta, files.messages, read.messagesBytes, size);
}
