/**
 * The snapshot store of one project work tree: a git directory of our own under the freecode home,
 * `<home>/snapshots/<project key>/git`, never the project's `.git`. Sessions on the same project
 * share its objects; each has its own index file, ref and state file, so two sessions never stage
 * into the same index. Every captured tree is committed onto the session's ref
 * (`refs/freecode/sessions/<hex id>`), so a `git gc` of our directory never loses one.
 */
import { existsSync, realpathSync, statSync, writeFileSync } from "node:fs";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { notFound } from "../errors.ts";
import { homePaths } from "../home.ts";
import { formatSessionDirName } from "../storage/project-key.ts";
import { ensureDir } from "../util/atomic.ts";
import { type GitPlace, git } from "./_git.ts";
import { userExcludes } from "./_ignores.ts";

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
}

/** Session ids may hold `:` `@` `+` `=`: hex makes them safe as ref and file names everywhere. */
const hexId = (id: string) => Buffer.from(id, "utf8").toString("hex");

/** The project directory as one canonical path (a symlinked path maps to the same store). */
export function canonicalProject(projectPath: string): string {
  const abs = resolve(projectPath);
  if (!existsSync(abs) || !statSync(abs).isDirectory())
    throw notFound(`project directory ${abs} does not exist: nothing to snapshot`);
  return realpathSync(abs);
}

/** Where the snapshots of `projectPath` live under `home` (nothing is created). */
export function snapshotRoot(home: string, projectPath: string): string {
  return join(homePaths(home).home, "snapshots", formatSessionDirName(projectPath));
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
  return {
    root,
    projectPath,
    sessionId,
    place: { bin, gitDir, workTree: projectPath, indexFile: join(root, "index", id) },
    statePath: join(root, "sessions", `${id}.json`),
    lockPath: join(root, "sessions", `${id}.lock`),
    ref: `refs/freecode/sessions/${id}`,
    own: [inside(projectPath, home) ?? inside(projectPath, join(homePaths(home).home, "snapshots"))].filter(
      (p): p is string => p !== undefined,
    ),
  };
}

/** Create our git directory on first use (no template: a user's `init.templateDir` could add hooks). */
export async function ensureRepo(repo: SnapshotRepo): Promise<void> {
  ensureDir(join(repo.root, "index"));
  ensureDir(join(repo.root, "sessions"));
  if (!existsSync(join(repo.place.gitDir, "HEAD"))) {
    await git(repo.place, ["init", "--quiet", "--bare", "--template=", repo.place.gitDir], {
      unplaced: true,
    });
    writeFileSync(join(repo.root, "README"), "freecode snapshots of one project work tree (see `git`)\n");
  }
  syncExcludes(repo);
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
  writeFileSync(join(info, "exclude"), `${userExcludes(repo.projectPath)}${ours}\n`);
  writeFileSync(join(info, "attributes"), ATTRIBUTES);
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
