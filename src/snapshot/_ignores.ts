/**
 * The user's ignore rules that our git cannot find by itself, as lines for our `info/exclude`: the
 * project's own `.git/info/exclude`, and, for a project in a subdirectory of a repository, that
 * repository's `.git/info/exclude` and the `.gitignore` files on the path from its root down to the
 * project (the project's own `.gitignore` files are in the work tree: git reads them). A rule from
 * above is rewritten relative to the project: `node_modules/` stays as it is, `/packages/app/dist`
 * becomes `/dist`, and a rule that cannot match inside the project is dropped.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";

/** A file's text, or "" when it is missing, not a file or unreadable. */
function readIfFile(path: string): string {
  try {
    return existsSync(path) && statSync(path).isFile() ? readFileSync(path, "utf8") : "";
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EACCES") return "";
    throw error;
  }
}

/** The git directory behind `<dir>/.git`: the directory itself, or a worktree's common directory. */
function gitDirAt(dir: string): string | undefined {
  const dotGit = join(dir, ".git");
  if (!existsSync(dotGit)) return undefined;
  if (statSync(dotGit).isDirectory()) return dotGit;
  const pointer = /^gitdir: (.+)$/m.exec(readIfFile(dotGit))?.[1]?.trim();
  if (!pointer) return undefined;
  const gitDir = resolve(dir, pointer);
  const common = readIfFile(join(gitDir, "commondir")).trim();
  return common ? resolve(gitDir, common) : gitDir;
}

const literal = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");

/** One glob segment (`*`, `?`, `[...]`, `\x`) as a regular expression. */
function segmentRegExp(glob: string): RegExp {
  let out = "";
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    const close = c === "[" ? glob.indexOf("]", i + 2) : -1;
    if (c === "*") out += "[^/]*";
    else if (c === "?") out += "[^/]";
    else if (c === "\\" && i + 1 < glob.length) out += literal(glob[++i]!);
    else if (close > 0) {
      out += `[${glob.slice(i + 1, close).replace(/^!/, "^")}]`;
      i = close;
    } else out += literal(c);
  }
  return new RegExp(`^${out}$`);
}

/** The rests of pattern segments `segs` once they have matched the directories `dirs`. */
function rests(segs: string[], dirs: string[]): string[][] {
  if (dirs.length === 0) return segs.length > 0 ? [segs] : [];
  if (segs.length === 0) return [];
  if (segs[0] === "**") return [...rests(segs.slice(1), dirs), ...rests(segs, dirs.slice(1))];
  return segmentRegExp(segs[0]!).test(dirs[0]!) ? rests(segs.slice(1), dirs.slice(1)) : [];
}

/**
 * One ignore rule of a file in a directory above the project, rewritten for the project (`below`:
 * the project's path from that directory, as segments). Exported for its tests.
 */
export function rebaseRule(line: string, below: string[]): string[] {
  const trimmed = line.replace(/(?<!\\) +$/, "");
  if (trimmed === "" || trimmed.startsWith("#")) return [];
  const bang = trimmed.startsWith("!") ? "!" : "";
  let body = trimmed.slice(bang.length);
  const dirOnly = body.endsWith("/") ? "/" : "";
  if (dirOnly) body = body.slice(0, -1);
  // No slash but a trailing one: the rule matches a name at any depth, inside the project too;
  // unless it names a directory the project lies in (or the project): then it ignores the whole
  // project, which is snapshotted whole instead, as for a rule with a slash (a home kept as a
  // dotfiles repository with `*` in its .gitignore made every capture the empty tree).
  if (!body.includes("/")) {
    const pattern = segmentRegExp(body);
    return !bang && below.some((dir) => pattern.test(dir)) ? [] : [trimmed];
  }
  const segs = body.replace(/^\//, "").split("/");
  const unique = new Set(rests(segs, below).map((r) => `${bang}/${r.join("/")}${dirOnly}`));
  return [...unique];
}

/** The repository `projectPath` lies inside (not at its top), if any, with its git directory. */
function enclosingRepo(projectPath: string): { top: string; gitDir: string } | undefined {
  for (let dir = dirname(projectPath); ; dir = dirname(dir)) {
    const gitDir = gitDirAt(dir);
    if (gitDir) return { top: dir, gitDir };
    if (dirname(dir) === dir) return undefined;
  }
}

/** Lines for our `info/exclude` (lowest precedence first, as git reads later lines over earlier). */
export function userExcludes(projectPath: string): string {
  const own = gitDirAt(projectPath);
  if (own) return readIfFile(join(own, "info", "exclude")).replace(/[^\n]$/, "$&\n");
  const repo = enclosingRepo(projectPath);
  if (!repo) return "";
  const lines: string[] = [];
  const add = (text: string, dir: string) => {
    const below = relative(dir, projectPath).split(sep);
    for (const line of text.split(/\r?\n/)) lines.push(...rebaseRule(line, below));
  };
  add(readIfFile(join(repo.gitDir, "info", "exclude")), repo.top);
  // Shallower `.gitignore` files first: a deeper one overrides them, as in git.
  const dirs: string[] = [];
  for (let d = dirname(projectPath); d.length >= repo.top.length; d = dirname(d)) {
    dirs.unshift(d);
    if (d === repo.top) break;
  }
  for (const d of dirs) add(readIfFile(join(d, ".gitignore")), d);
  return lines.length ? `${lines.join("\n")}\n` : "";
}
