/**
 * The importer's library entry point: import the given paths (or each agent's default location)
 * into a store, keeping per-file state in `<home>/state/imports.json` under a lock so two imports
 * never interleave their state writes.
 */
import { existsSync, realpathSync, statSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { homePaths } from "../home.ts";
import type { StorageAdapter } from "../storage/contract.ts";
import { ensureDir } from "../util/atomic.ts";
import { withLock } from "../util/lock.ts";
import { defaultRoots } from "./discover.ts";
import { importRoot, type SourceSummary } from "./run.ts";
import { loadImports, type StateCache, saveImports } from "./state.ts";
import { AGENTS, type Agent } from "./types.ts";
import type { Known } from "./write.ts";

export interface ImportOptions {
  agent: Agent | "auto";
  /** Files or folders; empty means the agent's default location (all four for `auto`). */
  paths: string[];
  adapter: StorageAdapter;
  home: string;
  redact?: boolean;
  /** False while watching (see `PassOptions.final`). */
  final?: boolean;
  /** The agents are done (see `PassOptions.finished`). */
  finished?: boolean;
  fsync?: boolean;
  cache?: Map<string, Known>;
  /** The import state as this process last saw it (watch mode: see `StateCache`). */
  stateCache?: StateCache;
  /** Write a JSONL transcript's ready part every this many bytes read (default 4 MiB). */
  writeEveryBytes?: number;
}

export interface ImportReport {
  sources: SourceSummary[];
  /** Problems with the import state itself (a corrupt imports.json is rebuilt). */
  notes: string[];
}

/** The (agent, root) pairs one pass covers. */
export function rootsFor(agent: Agent | "auto", paths: string[]): { agent: Agent | "auto"; root: string }[] {
  // By its real path: the same transcripts named through a symbolic link are the same files (they
  // were read again, every meta rewritten, and each file kept twice in the import state).
  if (paths.length > 0) return paths.map((p) => ({ agent, root: realPath(resolve(p)) }));
  const agents = agent === "auto" ? AGENTS : [agent];
  return agents.flatMap((a) => defaultRoots(a).map((root) => ({ agent: a, root: realPath(root) })));
}

/**
 * `path` with the links of its folders resolved, when it exists (else as given: reported missing
 * later). A file keeps its own name: a transcript linked under another name is told by the name
 * given (`<uuid>.jsonl`), and named in messages as the user named it.
 */
function realPath(path: string): string {
  try {
    if (!statSync(path).isFile()) return realpathSync(path);
    return join(realpathSync(dirname(path)), basename(path));
  } catch {
    return path;
  }
}

/** One import pass. Missing default locations are skipped; a missing explicit path is reported. */
export async function importSources(opts: ImportOptions): Promise<ImportReport> {
  const state = homePaths(opts.home).state;
  ensureDir(state); // a missing directory would cost the lock a retry sleep
  const lock = join(state, "imports.lock");
  return withLock(lock, async () => {
    const { imports, problem, text } = loadImports(opts.home, opts.stateCache);
    const sources: SourceSummary[] = [];
    for (const { agent, root } of rootsFor(opts.agent, opts.paths)) {
      if (!existsSync(root) && opts.paths.length === 0) continue;
      sources.push(
        await importRoot(root, agent, {
          adapter: opts.adapter,
          home: opts.home,
          imports,
          redact: opts.redact,
          final: opts.final,
          finished: opts.finished,
          cache: opts.cache,
          writeEveryBytes: opts.writeEveryBytes,
        }),
      );
    }
    saveImports(opts.home, imports, opts.fsync !== false, text, opts.stateCache);
    return { sources, notes: problem ? [problem] : [] };
  });
}
