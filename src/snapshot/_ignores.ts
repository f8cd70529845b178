/**
 * The user's ignore rules that our git cannot find by itself, as lines for our `info/exclude`: the
 * project's own `.git/info/exclude`, and, for a project in a subdirectory of a repository, that
 * repository's `.git/info/exclude` and the `.gitignore` files on the path from its root down to the
 * project (the project's own `.gitignore` files are in the work tree: git reads them). A rule from
 * above is rewritten relative to the project: `node_modules/` stays as it is, `/packages/app/dist`
 * becomes `/dist`, and a rule that cannot match inside the project is dropped.
 */
import { existsSync, lstatSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { wildmatchSegment } from "./_wildmatch.ts";

/** A file's text, or "" when it is missing, not a file or unreadable. */
function readIfFile(path: string): string {
  try {
    // Without a byte-order mark, as git reads an ignore file (an editor's BOM made the first rule
    // `\uFEFF*`, which matched nothing here and everything in our exclude file).
    return existsSync(path) && statSync(path).isFile()
      ? readFileSync(path, "utf8").replace(/^\uFEFF/, "")
      : "";
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

/**
 * A pathname rule's body (one with a slash) as bodies the segment matching below reads as git reads
 * it. Git compares a rule's literal start (up to its first wildcard) as text and hands only the rest
 * to wildmatch, so a double star that is the first wildcard, glued to the text before it and
 * followed by a slash or the end (the rule `/packages/app` + double star + `/` + `*.env`), starts
 * what wildmatch sees and spans directories: it is spelled out as the rules it stands for (`app*`,
 * then any directories, then `*.env`; and, the double star and its slash matching nothing,
 * `app*.env` read as `app` and `*.env` on one segment; for a trailing one, `pack*` and everything
 * below it). An escaped slash is a slash. Segment by segment, such a rule was dropped or narrowed,
 * and undo deleted the files it ignores.
 */
export function spelledOut(body: string): string[] {
  const b = unescapeSlashes(body);
  const first = b.search(/[*?[\\]/);
  if (first <= 0 || b[first - 1] === "/" || !b.startsWith("**", first)) return [b];
  const after = b.slice(first + 2);
  if (after !== "" && !after.startsWith("/")) return [b];
  const head = b.slice(0, first);
  if (after === "") return [`${head}*`, `${head}*/**`];
  // `**/` spanning one or more directories, or none at all (the rest then goes on the same segment).
  return [`${head}*/**${after}`, `${head}${after.slice(1)}`];
}

/** `\/` made `/`; any other escape kept as it is (`\\/` is an escaped backslash, then a slash). */
function unescapeSlashes(body: string): string {
  let out = "";
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c === "\\" && i + 1 < body.length) {
      const next = body[++i]!;
      out += next === "/" ? "/" : c + next;
    } else out += c;
  }
  return out;
}

/** The rests of pattern segments `segs` once they have matched the directories `dirs`. */
function rests(segs: string[], dirs: string[], fold: boolean): string[][] {
  if (dirs.length === 0) return segs.length > 0 ? [segs] : [];
  if (segs.length === 0) return [];
  if (segs[0] === "**") return [...rests(segs.slice(1), dirs, fold), ...rests(segs, dirs.slice(1), fold)];
  return wildmatchSegment(segs[0]!, dirs[0]!, fold) ? rests(segs.slice(1), dirs.slice(1), fold) : [];
}

/**
 * One ignore rule of a file in a directory above the project, rewritten for the project (`below`:
 * the project's path from that directory, as segments). Exported for its tests.
 */
export function rebaseRule(line: string, below: string[], fold = false): string[] {
  const trimmed = line.replace(/(?<!\\) +$/, "");
  if (trimmed === "" || trimmed.startsWith("#")) return [];
  const bang = trimmed.startsWith("!") ? "!" : "";
  let body = trimmed.slice(bang.length);
  const dirOnly = body.endsWith("/") ? "/" : "";
  if (dirOnly) body = body.slice(0, -1);
  // No slash but a trailing one: the rule matches a name at any depth, inside the project too.
  if (!body.includes("/")) return [trimmed];
  const unique = new Set(
    spelledOut(body.replace(/^\//, "")).flatMap((b) =>
      rests(b.split("/"), below, fold).map((r) => `${bang}/${r.join("/")}${dirOnly}`),
    ),
  );
  return [...unique];
}

/** Whether pattern segments `segs` match the path `dirs` whole (`**` spans any number of them). */
function matchesWhole(segs: string[], dirs: string[], fold: boolean): boolean {
  if (segs.length === 0) return dirs.length === 0;
  // A trailing `**` is what is inside, not the directory itself (`proj/**` leaves `proj`).
  if (segs[0] === "**" && segs.length === 1) return dirs.length > 0;
  if (segs[0] === "**")
    return (
      matchesWhole(segs.slice(1), dirs, fold) || (dirs.length > 0 && matchesWhole(segs, dirs.slice(1), fold))
    );
  return (
    dirs.length > 0 &&
    wildmatchSegment(segs[0]!, dirs[0]!, fold) &&
    matchesWhole(segs.slice(1), dirs.slice(1), fold)
  );
}

/**
 * What one rule says of the directory `dir` (its path from the rule's file's directory): ignored
 * (true), not ignored (false, a `!` rule), or nothing (undefined: it does not match).
 */
function ruleOnDir(line: string, dir: string[], fold: boolean): boolean | undefined {
  const trimmed = line.replace(/(?<!\\) +$/, "");
  if (trimmed === "" || trimmed.startsWith("#") || dir.length === 0) return undefined;
  const negated = trimmed.startsWith("!");
  let body = trimmed.slice(negated ? 1 : 0);
  if (body.endsWith("/")) body = body.slice(0, -1);
  const hit = body.includes("/")
    ? spelledOut(body.replace(/^\//, "")).some((b) => matchesWhole(b.split("/"), dir, fold))
    : wildmatchSegment(body, dir[dir.length - 1]!, fold);
  return hit ? !negated : undefined;
}

/**
 * Whether the rules (each with the directory of its file, in the order git weighs them: the last
 * that matches decides) ignore the project directory or one it lies in, as git judges it: from the
 * top down, a directory ignored ends the walk (nothing below it can be taken back). Such a project
 * is snapshotted whole: none of these rules applies to it.
 */
function liesInIgnoredDir(
  rules: { line: string; dir: string }[],
  top: string,
  projectPath: string,
  fold: boolean,
): boolean {
  const path = relative(top, projectPath).split(sep);
  for (let depth = 1; depth <= path.length; depth++) {
    const here = join(top, ...path.slice(0, depth));
    let ignored = false;
    for (const r of rules) {
      // A .gitignore speaks of what is below its own directory.
      if (r.dir !== top && !here.startsWith(`${r.dir}${sep}`)) continue;
      const said = ruleOnDir(r.line, relative(r.dir, here).split(sep), fold);
      if (said !== undefined) ignored = said;
    }
    if (ignored) return true;
  }
  return false;
}

/** The repository `projectPath` lies inside (not at its top), if any, with its git directory. */
function enclosingRepo(projectPath: string): { top: string; gitDir: string } | undefined {
  for (let dir = dirname(projectPath); ; dir = dirname(dir)) {
    const gitDir = gitDirAt(dir);
    if (gitDir) return { top: dir, gitDir };
    if (dirname(dir) === dir) return undefined;
  }
}

/**
 * Whether git compares names without case in the repository at `top` (`core.ignorecase`, which
 * `git init` sets on a case-insensitive file system), read by the user's git as it reads it for that
 * repository (its own, the user's and the system's configuration). Unset or unreadable: no.
 */
function ignoresCase(top: string, gitBin: string): boolean {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("GIT_")) env[k] = v;
  try {
    const r = Bun.spawnSync([gitBin, "config", "--type=bool", "--get", "core.ignorecase"], {
      cwd: top,
      env,
      stdout: "pipe",
      stderr: "ignore",
    });
    return r.exitCode === 0 && r.stdout.toString().trim() === "true";
  } catch {
    return false;
  }
}

/** Lines for our `info/exclude` (lowest precedence first, as git reads later lines over earlier). */
export function userExcludes(projectPath: string, gitBin = "git"): string {
  const own = gitDirAt(projectPath);
  if (own) return readIfFile(join(own, "info", "exclude")).replace(/[^\n]$/, "$&\n");
  const repo = enclosingRepo(projectPath);
  if (!repo) return "";
  const rules: { line: string; dir: string }[] = [];
  const add = (text: string, dir: string) => {
    for (const line of text.split(/\r?\n/)) rules.push({ line, dir });
  };
  add(readIfFile(join(repo.gitDir, "info", "exclude")), repo.top);
  // Shallower `.gitignore` files first: a deeper one overrides them, as in git.
  const dirs: string[] = [];
  for (let d = dirname(projectPath); d.length >= repo.top.length; d = dirname(d)) {
    dirs.unshift(d);
    if (d === repo.top) break;
  }
  // A `.gitignore` that is a symbolic link is not read, as git (2.32 on) does not read one.
  for (const d of dirs) {
    const file = join(d, ".gitignore");
    if (!lstatSync(file, { throwIfNoEntry: false })?.isSymbolicLink()) add(readIfFile(file), d);
  }
  // A home kept as a dotfiles repository (`*` in its .gitignore) made every capture of a project
  // under it the empty tree; with `!*/` after it, the project is not ignored and `*` applies inside.
  const fold = ignoresCase(repo.top, gitBin);
  if (liesInIgnoredDir(rules, repo.top, projectPath, fold)) return "";
  const lines = rules.flatMap((r) => rebaseRule(r.line, relative(r.dir, projectPath).split(sep), fold));
  return lines.length ? `${lines.join("\n")}\n` : "";
}
