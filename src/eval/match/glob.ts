/**
 * Globs for tool names and paths. Tool names match case-insensitively with `*` and `?` (`mcp__*`,
 * `read*`), like promptfoo's `trajectory:tool-used`. Changed-file paths are first placed in the
 * session's project (`placePath`), then a relative glob matches the path relative to the project and
 * an absolute glob the absolute path: matching any trailing part instead let `src/**` pass
 * `/etc/src/api/passwd` and `vendor/evil/src/x.ts`, so "no writes outside src/" held for writes
 * outside the project.
 */
import { posix } from "node:path";
import { isWildcard, type Wildcard, wildcard, wildcardMatches } from "../../util/wildcard.ts";

const nameCache = new Map<string, Wildcard | string>();

/** A tool name as a glob that matches it alone: its `*`, `?` and `\\` escaped by a backslash. */
export const literalName = (name: string): string => name.replace(/[*?\\]/g, "\\$&");

/**
 * Whether a tool name matches a name or glob (case-insensitive). A backslash takes the character
 * after it as it is (`mcp__x__\\*` is the tool named `mcp__x__*`, which `eval add` writes so: as a
 * glob it also matched `mcp__x__run`, and the starter case's count failed on its own session).
 * Matched without backtracking (`util/wildcard.ts`): names and titles come from transcripts.
 */
export function nameMatches(pattern: string, name: string): boolean {
  let compiled = nameCache.get(pattern);
  if (compiled === undefined) {
    // Plain names (the common case) compare without a pattern.
    compiled = isWildcard(pattern, true)
      ? wildcard(pattern, { escapes: true, foldCase: true })
      : pattern.toLowerCase();
    nameCache.set(pattern, compiled);
  }
  if (typeof compiled === "string") return compiled === name || compiled === name.toLowerCase();
  return wildcardMatches(compiled, name);
}

/** Whether any pattern matches the name. */
export const anyNameMatches = (patterns: readonly string[], name: string) =>
  patterns.some((p) => nameMatches(p, name));

const globCache = new Map<string, { glob: Bun.Glob; seen: Map<string, boolean> }>();
/** Verdicts remembered per glob: the same paths recur across the sessions of a selection. */
const SEEN_LIMIT = 10_000;

function globFor(pattern: string) {
  let entry = globCache.get(pattern);
  if (!entry) {
    entry = { glob: new Bun.Glob(pattern), seen: new Map() };
    globCache.set(pattern, entry);
  }
  return entry;
}

/**
 * Whether a path matches a glob: the whole path, or (relative globs) any trailing part of it. A loose
 * rule for selecting sessions by project (`project: app` picks `/home/u/app`); changed files are
 * matched with `placePath` and `placedMatches` instead.
 */
export function pathMatches(pattern: string, path: string): boolean {
  const source = globSource(pattern);
  const entry = globFor(source);
  const known = entry.seen.get(path);
  if (known !== undefined) return known;
  const hit = matchPath(entry.glob, source, path);
  if (entry.seen.size < SEEN_LIMIT) entry.seen.set(path, hit);
  return hit;
}

/**
 * Whether a session's project path matches a `project` selector: the path without a trailing
 * separator, as `session list --project` takes it (`/work/app/` was selected by no `/work/app`).
 */
export function projectMatches(pattern: string, project: string): boolean {
  const trimmed = project.replace(/[\\/]+$/, "");
  return pathMatches(pattern, trimmed === "" || /^[a-z]:$/i.test(trimmed) ? project : trimmed);
}

function matchPath(glob: Bun.Glob, pattern: string, path: string): boolean {
  const slashed = path.replace(/\\/g, "/");
  // A drive-letter glob was made lower-case (`globSource`): so is the path it is matched with.
  const normalized = DRIVE.test(pattern) ? slashed.toLowerCase() : slashed;
  if (glob.match(normalized)) return true;
  if (pattern.startsWith("/") || DRIVE.test(pattern)) return false;
  for (let i = normalized.indexOf("/"); i !== -1; i = normalized.indexOf("/", i + 1)) {
    if (glob.match(normalized.slice(i + 1))) return true;
  }
  return false;
}

/**
 * A changed path placed in the project. `inProject`: true (then `rel` is the path relative to the
 * project), false (outside it), undefined (an absolute path and the project directory unknown).
 * `abs`: the absolute path, unless the path is relative and the project directory unknown.
 */
export interface PlacedPath {
  inProject?: boolean;
  rel?: string;
  abs?: string;
}

const DRIVE = /^[a-z]:\//i;
const isAbsolutePath = (p: string) => p.startsWith("/") || DRIVE.test(p);

/**
 * A glob as written, made one that matches paths as they are compared (forward slashes). The
 * separator after a drive letter decides what a backslash is: in `C:\Users\me\*` every backslash
 * is a Windows separator, as its user means it; in `C:/Users/me/\[id\]`, as in a POSIX glob, a
 * backslash escapes the character after it (`eval add` writes a changed path holding `*?[]{}!` so:
 * read as separators, the starter case of a session that changed `app/[id]/page.tsx` failed on its
 * own session). A drive-letter glob is lower-cased, as Windows compares paths (`C:\Users` and
 * `c:/users` select the same).
 */
function globSource(pattern: string): string {
  if (/^[a-z]:\\/i.test(pattern)) return pattern.replace(/\\/g, "/").toLowerCase();
  if (DRIVE.test(pattern)) return pattern.toLowerCase();
  return isAbsolutePath(pattern) ? pattern : pattern.replace(/^(\.\/)+/, "");
}

/** Forward slashes, `.` and `..` resolved, no trailing slash (but a root keeps its own). */
function clean(path: string): string {
  const p = posix.normalize(path.replace(/\\/g, "/"));
  return p.length > 1 && p.endsWith("/") && !/^[a-z]:\/$/i.test(p) ? p.slice(0, -1) : p;
}

/**
 * Place a recorded path in the project at `project` (an absolute directory; anything else counts
 * as unknown). A relative path is taken as relative to the project, so one that climbs out with
 * `..` is outside it. Drive-letter paths compare case-insensitively, as Windows does.
 */
export function placePath(path: string, project?: string): PlacedPath {
  const p = clean(path);
  const root = project ? clean(project) : undefined;
  const known = root !== undefined && isAbsolutePath(root) ? root : undefined;
  if (!isAbsolutePath(p)) {
    if (p === ".." || p.startsWith("../")) {
      return known ? { inProject: false, abs: clean(`${known}/${p}`) } : { inProject: false };
    }
    return known ? { inProject: true, rel: p, abs: clean(`${known}/${p}`) } : { inProject: true, rel: p };
  }
  if (!known) return { abs: p };
  const fold = DRIVE.test(known) ? (s: string) => s.toLowerCase() : (s: string) => s;
  const prefix = known.endsWith("/") ? known : `${known}/`;
  if (fold(p) === fold(known)) return { inProject: true, rel: "", abs: p };
  if (fold(p).startsWith(fold(prefix))) return { inProject: true, rel: p.slice(prefix.length), abs: p };
  return { inProject: false, abs: p };
}

/**
 * Whether a placed path matches a glob: true, false, or undefined when it cannot be told without the
 * project directory (an absolute path some placement of which would match a relative glob, or a
 * relative path against an absolute glob).
 */
export function placedMatches(pattern: string, placed: PlacedPath): boolean | undefined {
  const source = globSource(pattern);
  const absolute = isAbsolutePath(source);
  const { glob } = globFor(source);
  if (absolute) {
    if (placed.abs === undefined) return undefined;
    return glob.match(DRIVE.test(source) ? placed.abs.toLowerCase() : placed.abs);
  }
  if (placed.inProject === true) return glob.match(placed.rel!);
  if (placed.inProject === false) return false;
  // The project is some directory above the path: a trailing part of it is its relative path.
  return pathMatches(source, placed.abs!) ? undefined : false;
}
