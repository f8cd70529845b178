/**
 * The snapshot store of one project work tree: a git directory of our own under the freecode home,
 * `<home>/snapshots/<project key>/git`, never the project's `.git`. Sessions on the same project
 * share its objects; each has its own index file, ref and state file, so two sessions never stage
 * into the same index. Every captured tree is committed onto the session's ref
 * (`refs/freecode/sessions/<hex id>`), so a `git gc` of our directory never loses one.
 */
import { existsSync, realpathSync, statSync } from "node:fs";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { FreecodeError, notFound } from "../errors.ts";
import { homePaths } from "../home.ts";
import { formatSessionDirName } from "../storage/project-key.ts";
import { ensureDir, writeFileAtomic } from "../util/atomic.ts";
import { withLock } from "../util/lock.ts";
import { type GitPlace, git } from "./_git.ts";
import { userExcludes } from "./_ignores.ts";
import { readState, writeState } from "./state.ts";

export interface SnapshotRepo {
  /** `<home>/snapshots/<project key>`. */
  readonly root: string;
  readonly projectPath: string;
  readonly sessionId: string;
  readonly place: GitPlace;
  /** The session's position file. */
  readonly statePath: string;
  /** Held while a capture or restore of this session runs. */
  readonly lockPath: string;
  readonly ref: string;
  /**
   * The freecode home (or its snapshots) when it lies inside the project, as `dir/` relative paths:
   * never snapshotted, never restored (an agent run in `~` has its home, `~/.freecode`, in its work tree).
   */
  readonly own: string[];
  /** The freecode home, when the project is that directory or lies inside it (never snapshotted). */
  readonly homeAbove?: string;
}

/**
 * The project is the freecode home or lies inside it: a restore would rewrite freecode's own data
 * (other sessions, the snapshot store itself). Capture turns this into `checkpoint.skipped`.
 */
export class ProjectInHomeError extends FreecodeError {
  constructor(projectPath: string, home: string) {
    const where = projectPath === home ? "is the freecode home" : `lies inside the freecode home ${home}`;
    super(
      "bad_input",
      `project ${projectPath} ${where}: it cannot be snapshotted (a restore would rewrite freecode's ` +
        `own data); use a project directory outside the home`,
    );
  }
}

/**
 * Run `fn` holding the store lock `<root>/store.lock`, held while a store is created (`ensureRepo`)
 * or removed (`forget.ts`), so a first capture and a forget never overlap. Callers in this process
 * take turns first (`_turns.ts`): a lock file waited for blocks the thread, and the holder needs it.
 */
export function withStoreLock<T>(root: string, fn: () => Promise<T>): Promise<T> {
  return withLock(join(root, "store.lock"), fn);
}

/** Session ids may hold `:` `@` `+` `=`: hex makes them safe as ref and file names everywhere. */
export const hexId = (id: string) => Buffer.from(id, "utf8").toString("hex");

/** The project directory as one canonical path (a symlinked path maps to the same store). */
export function canonicalProject(projectPath: string): string {
  const abs = resolve(projectPath);
  if (!existsSync(abs) || !statSync(abs).isDirectory())
    throw notFound(`project directory ${abs} does not exist: nothing to snapshot`);
  return realpathSync(abs);
}

/** Where the snapshots of `projectPath` live under `home` (nothing is created). */
export function snapshotRoot(home: string, projectPath: string): string {
  return join(homePaths(home).snapshots, formatSessionDirName(projectPath));
}

/** `path` with its existing part resolved through symlinks (the rest need not exist yet). */
function realish(path: string): string {
  const abs = resolve(path);
  if (existsSync(abs)) return realpathSync(abs);
  const parent = dirname(abs);
  return parent === abs ? abs : join(realish(parent), basename(abs));
}

/** `dir` relative to `projectPath` as `a/b/` when strictly inside it. */
function inside(projectPath: string, dir: string): string | undefined {
  const rel = relative(projectPath, realish(dir));
  if (rel === "" || rel.startsWith("..") || isAbsolute(rel)) return undefined;
  return `${rel.split(sep).join("/")}/`;
}

/** Whether `path` is `dir` or lies inside it. */
function within(dir: string, path: string): boolean {
  const rel = relative(dir, path);
  return rel === "" || !(rel.startsWith("..") || isAbsolute(rel));
}

/** The repo of one session on one project (paths only; `ensureRepo` creates it). */
export function snapshotRepo(
  home: string,
  projectPath: string,
  sessionId: string,
  bin = "git",
): SnapshotRepo {
  const root = snapshotRoot(home, projectPath);
  const gitDir = join(root, "git");
  const id = hexId(sessionId);
  const homeDir = realish(homePaths(home).home);
  return {
    root,
    projectPath,
    sessionId,
    place: { bin, gitDir, workTree: projectPath, indexFile: join(root, "index", id) },
    statePath: join(root, "sessions", `${id}.json`),
    lockPath: join(root, "sessions", `${id}.lock`),
    ref: `refs/freecode/sessions/${id}`,
    own: [inside(projectPath, home) ?? inside(projectPath, homePaths(home).snapshots)].filter(
      (p): p is string => p !== undefined,
    ),
    ...(within(homeDir, projectPath) ? { homeAbove: homeDir } : {}),
  };
}

/**
 * Create our git directory on first use (no template: a user's `init.templateDir` could add hooks),
 * and the session's state file if it has none: under the store lock, so concurrent first captures
 * init once, and a forget of the store's last other session (which removes the store when no
 * state file is left) cannot remove it under this one. Call it holding no session lock (a lock is
 * never waited for holding another); once the session lock is taken, `repoExists` says whether a
 * forget of this very session removed them meanwhile (then call it again).
 */
export async function ensureRepo(repo: SnapshotRepo): Promise<void> {
  if (repo.homeAbove) throw new ProjectInHomeError(repo.projectPath, repo.homeAbove);
  // Our state file exists (and only a forget of this session, under its lock, removes it): the store stays.
  if (!repoExists(repo))
    await withStoreLock(repo.root, async () => {
      ensureDir(join(repo.root, "index"));
      ensureDir(join(repo.root, "sessions"));
      if (!existsSync(join(repo.place.gitDir, "HEAD"))) {
        await git(repo.place, ["init", "--quiet", "--bare", "--template=", repo.place.gitDir], {
          unplaced: true,
        });
        writeFileAtomic(
          join(repo.root, "README"),
          "freecode snapshots of one project work tree (see `git`)\n",
        );
      }
      if (!existsSync(repo.statePath))
        writeState(repo.statePath, readState(repo.statePath, repo.sessionId, repo.projectPath));
    });
  syncExcludes(repo);
}

/** Whether our git directory and the session's state file exist (`ensureRepo` made them). */
export function repoExists(repo: SnapshotRepo): boolean {
  return existsSync(join(repo.place.gitDir, "HEAD")) && existsSync(repo.statePath);
}

/** A path as an anchored, literal exclude pattern (glob characters and a leading `!`/`#` escaped). */
const anchored = (dir: string) => `/${dir.replace(/[*?[\\!#]/g, "\\$&")}`;

/**
 * Content stored and restored byte for byte: no end-of-line conversion, ident, filter or encoding,
 * whatever the project's `.gitattributes` say (`info/attributes` takes precedence over them).
 */
const ATTRIBUTES = "* -text -eol -ident -filter -working-tree-encoding -diff -merge\n";

/**
 * Our `info/exclude` and `info/attributes`. Excludes: the user's rules git would not find from our
 * git dir (`_ignores.ts`), then `.git` (also as a file: worktrees and submodules) and our own home
 * if it lies in the project, last so no rule above re-includes them.
 */
function syncExcludes(repo: SnapshotRepo): void {
  const info = join(repo.place.gitDir, "info");
  ensureDir(info);
  const ours = [".git", ...repo.own.map(anchored)].join("\n");
  // Atomically: another session's git may be reading them right now.
  writeFileAtomic(join(info, "exclude"), `${userExcludes(repo.projectPath, repo.place.bin)}${ours}\n`);
  writeFileAtomic(join(info, "attributes"), ATTRIBUTES);
}

/** Commit `tree` onto the session's ref (parent: the ref's tip) and return the commit id. */
export async function keepTree(repo: SnapshotRepo, tree: string, message: string): Promise<string> {
  const tip = (
    await git(repo.place, ["rev-parse", "--verify", "-q", `${repo.ref}^{commit}`], { okCodes: [1] })
  ).trim();
  const parent = tip ? ["-p", tip] : [];
  const commit = (await git(repo.place, ["commit-tree", tree, ...parent, "-m", message])).trim();
  await git(repo.place, ["update-ref", repo.ref, commit, ...(tip ? [tip] : [""])]);
  return commit;
}
