/**
 * Where the files adapter keeps things (SPEC.md "Three shapes on disk"), and finding a session's
 * directory from its id. A session lives under its project key; finding it by id alone looks in each
 * project directory (there are few projects, many sessions), remembering what it found.
 */
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { homePaths } from "../../home.ts";
import { formatSessionDirName } from "../project-key.ts";

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

/** Finds session directories by id, caching hits (a cached path is re-checked before use). */
export class SessionLocator {
  private readonly known = new Map<string, string>();
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
    let projects: string[];
    try {
      projects = readdirSync(this.layout.sessions);
    } catch {
      return undefined;
    }
    for (const project of projects) {
      const dir = join(this.layout.sessions, project, id);
      if (existsSync(join(dir, "meta.json"))) {
        this.known.set(id, dir);
        return dir;
      }
    }
    return undefined;
  }

  remember(id: string, dir: string): void {
    this.known.set(id, dir);
  }

  forget(id: string): void {
    this.known.delete(id);
  }

  lockPath(kind: "s" | "e", id: string): string {
    return join(this.layout.locks, `${kind}-${id}.lock`);
  }
}
