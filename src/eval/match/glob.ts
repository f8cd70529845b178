/**
 * Globs for tool names and changed-file paths. Tool names match case-insensitively with `*` and `?`
 * (`mcp__*`, `read*`), like promptfoo's `trajectory:tool-used`. Paths use Bun.Glob; a relative glob
 * also matches the end of an absolute path (`src/*.ts` matches `/home/u/app/src/a.ts`), because
 * recorded paths are often absolute while case files are written relative to the project.
 */

const nameCache = new Map<string, RegExp | string>();

/** Whether a tool name matches a name or glob (case-insensitive). */
export function nameMatches(pattern: string, name: string): boolean {
  let re = nameCache.get(pattern);
  // Plain names (the common case) compare without a regex.
  if (typeof re === "string") return re === name || re === name.toLowerCase();
  if (!re && !/[*?]/.test(pattern)) {
    nameCache.set(pattern, pattern.toLowerCase());
    return nameMatches(pattern, name);
  }
  if (!re) {
    const body = pattern
      .replace(/[.+^${}()|[\]\\]/g, "\\$&")
      .replace(/\*/g, ".*")
      .replace(/\?/g, ".");
    re = new RegExp(`^${body}$`, "i");
    nameCache.set(pattern, re);
  }
  return re.test(name);
}

/** Whether any pattern matches the name. */
export const anyNameMatches = (patterns: readonly string[], name: string) =>
  patterns.some((p) => nameMatches(p, name));

const globCache = new Map<string, { glob: Bun.Glob; seen: Map<string, boolean> }>();
/** Verdicts remembered per glob: the same paths recur across the sessions of a selection. */
const SEEN_LIMIT = 10_000;

/** Whether a path matches a glob: the whole path, or (relative globs) any trailing part of it. */
export function pathMatches(pattern: string, path: string): boolean {
  let entry = globCache.get(pattern);
  if (!entry) {
    entry = { glob: new Bun.Glob(pattern), seen: new Map() };
    globCache.set(pattern, entry);
  }
  const known = entry.seen.get(path);
  if (known !== undefined) return known;
  const hit = matchPath(entry.glob, pattern, path);
  if (entry.seen.size < SEEN_LIMIT) entry.seen.set(path, hit);
  return hit;
}

function matchPath(glob: Bun.Glob, pattern: string, path: string): boolean {
  const normalized = path.replace(/\\/g, "/");
  if (glob.match(normalized)) return true;
  if (pattern.startsWith("/")) return false;
  for (let i = normalized.indexOf("/"); i !== -1; i = normalized.indexOf("/", i + 1)) {
    if (glob.match(normalized.slice(i + 1))) return true;
  }
  return false;
}
