/**
 * Where the files adapter keeps things (SPEC.md "Three shapes on disk"), and finding a session's
 * directory from its id. A session lives under its project key; finding it by id alone looks in each
 * project directory, remembering what it found. A process that looks up many ids (an import creating
 * sessions: each new one is looked up twice and found nowhere) keeps a map of every session instead,
 * kept current from the sessions journal (every session a freecode process creates, moves or
 * deletes is written there, under the session's lock) and from new project directories.
 */
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { homePaths } from "../../home.ts";
import { formatSessionDirName } from "../project-key.ts";
import { journalStat, readJournal } from "./_files-journal.ts";

export interface FilesLayout {
  sessions: string;
  rollout: string;
  state: string;
  locks: string;
  journal: string;
  indexDb: string;
  indexJson: string;
}

/** The paths of the files adapter under `home`. */
export function filesLayout(home: string): FilesLayout {
  const p = homePaths(home);
  return {
    sessions: p.sessions,
    rollout: p.rollout,
    state: p.state,
    locks: join(p.state, "locks"),
    journal: join(p.state, "sessions-journal.jsonl"),
    indexDb: join(p.state, "sessions-index.db"),
    indexJson: join(p.state, "sessions-index.json"),
  };
}

/** The files of one session. */
export function sessionFiles(dir: string) {
  return {
    dir,
    meta: join(dir, "meta.json"),
    messages: join(dir, "messages.jsonl"),
    cache: join(dir, "context-cache.json"),
  };
}
export type SessionFiles = ReturnType<typeof sessionFiles>;

/**
 * After this many lookups that looked in every project directory, a locator keeps its map of all
 * sessions. With 300 project directories, each new session cost ~3 ms of such looking (two
 * lookups of ~300 stats), and a first import's cost grew with the sessions already imported.
 */
const SCANS_BEFORE_MAP = 2;

interface SessionMap {
  /** Session id → its directory, as last seen. */
  where: Map<string, string>;
  projects: Set<string>;
  sessionsMtime: number;
  journalIno: number;
  /** Journal bytes applied. */
  journalAt: number;
}

/** The names in a directory (none when it cannot be read). */
export function listDir(path: string): string[] {
  try {
    return readdirSync(path);
  } catch {
    return [];
  }
}

/**
 * The names in a directory that are not hidden: temporary directories start with a dot, and no
 * session id may (`SessionIdSchema`), so nothing stored is skipped.
 */
const listShown = (path: string): string[] => listDir(path).filter((name) => !name.startsWith("."));

/**
 * Finds session directories by id, caching hits (a cached path is re-checked before use). Once it
 * keeps a map (see `SCANS_BEFORE_MAP`), an id is not looked for in every project directory: a
 * session written by another freecode process is known from the journal, and one copied in by hand
 * is found if its project directory is new; one copied by hand into a project directory the map
 * already knows is not found by this locator (the listing index still sees it).
 */
export class SessionLocator {
  private readonly known = new Map<string, string>();
  private scans = 0;
  private map: SessionMap | undefined;
  constructor(private readonly layout: FilesLayout) {}

  /** The directory a new session of `projectPath` goes to. */
  dirFor(projectPath: string, id: string): string {
    return join(this.layout.sessions, formatSessionDirName(projectPath), id);
  }

  /** The directory of session `id`, or undefined when it does not exist. */
  find(id: string): string | undefined {
    const cached = this.known.get(id);
    if (cached && existsSync(join(cached, "meta.json"))) return cached;
    this.known.delete(id);
    const dir = this.map || this.scans >= SCANS_BEFORE_MAP ? this.fromMap(id) : this.scan(id);
    if (dir) this.known.set(id, dir);
    return dir;
  }

  remember(id: string, dir: string): void {
    this.known.set(id, dir);
    this.map?.where.set(id, dir);
  }

  forget(id: string): void {
    this.known.delete(id);
    this.map?.where.delete(id);
  }

  lockPath(kind: "s" | "e", id: string): string {
    return join(this.layout.locks, `${kind}-${id}.lock`);
  }

  /** Look for `id` in every project directory. */
  private scan(id: string): string | undefined {
    this.scans++;
    for (const project of listShown(this.layout.sessions)) {
      const dir = join(this.layout.sessions, project, id);
      if (existsSync(join(dir, "meta.json"))) return dir;
    }
    return undefined;
  }

  private fromMap(id: string): string | undefined {
    const dir = this.current().where.get(id);
    return dir !== undefined && existsSync(join(dir, "meta.json")) ? dir : undefined;
  }

  /** The map, brought up to date: the journal's new lines, and project directories added since. */
  private current(): SessionMap {
    const journal = journalStat(this.layout.journal);
    const map = this.map;
    // A journal rotated, replaced or gone since: its lines may be lost, so look at the directories.
    // (A new journal is told by its inode or by being shorter than what was read of the old one:
    // the listing index rotates it past 8 MiB.)
    if (!map || journal.ino !== map.journalIno || journal.size < map.journalAt) return this.build();
    const sessions = statSync(this.layout.sessions, { throwIfNoEntry: false });
    if (sessions && sessions.mtimeMs !== map.sessionsMtime) {
      map.sessionsMtime = sessions.mtimeMs;
      const projects = new Set(listShown(this.layout.sessions));
      for (const project of projects) if (!map.projects.has(project)) this.addProject(map, project);
      map.projects = projects;
    }
    if (journal.size > map.journalAt) {
      const { entries, consumed } = readJournal(this.layout.journal, map.journalAt, journal.size);
      for (const { id, key } of entries) map.where.set(id, join(this.layout.sessions, key, id));
      map.journalAt += consumed;
    }
    return map;
  }

  /** Every session, from the directories; the journal is read from its present end on. */
  private build(): SessionMap {
    // The journal's place is taken first: what is written during the scan is replayed next time.
    const journal = journalStat(this.layout.journal);
    const map: SessionMap = {
      where: new Map(),
      projects: new Set(),
      sessionsMtime: statSync(this.layout.sessions, { throwIfNoEntry: false })?.mtimeMs ?? 0,
      journalIno: journal.ino,
      journalAt: journal.size,
    };
    for (const project of listShown(this.layout.sessions)) {
      map.projects.add(project);
      this.addProject(map, project);
    }
    this.map = map;
    return map;
  }

  private addProject(map: SessionMap, project: string): void {
    const dir = join(this.layout.sessions, project);
    for (const id of listShown(dir)) map.where.set(id, join(dir, id));
  }
}
