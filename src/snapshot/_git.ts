/**
 * Running the real `git` against our own snapshot directory, isolated from everything of the user's:
 * every inherited `GIT_*` variable is dropped (a freecode run from inside a git hook must not write
 * into the repository that ran the hook), system and global config are off (no user hooks, aliases,
 * `core.autocrlf`, `core.fsmonitor` or templates reach us), nor do the user's global attributes and
 * excludes (`core.attributesFile`, `core.excludesFile`, and their `$XDG_CONFIG_HOME/git/` defaults,
 * which git reads even with global config off), hooks point at an empty path, and the
 * author/committer come from the environment so no user identity is needed.
 */

import { isUtf8 } from "node:buffer";
import { FreecodeError } from "../errors.ts";
import { invalidUtf8At } from "../util/utf8.ts";

/** Where git runs: our git dir, the project as work tree, and one index per session. */
export interface GitPlace {
  /** The git binary (default `git` on PATH). */
  bin: string;
  gitDir: string;
  workTree: string;
  indexFile: string;
}

/** git is not installed, or not runnable: capture turns this into `checkpoint.skipped`. */
export class GitMissingError extends FreecodeError {
  constructor(bin: string, cause?: unknown) {
    super("unavailable", `git is not available ("${bin}" could not be run): snapshots need git`, { cause });
  }
}

/** Flags on every call: content stored byte for byte, nothing of the user's config or hooks. */
const CONFIG_FLAGS = [
  "-c",
  "core.hooksPath=/dev/null",
  "-c",
  "core.autocrlf=false",
  "-c",
  "core.attributesFile=/dev/null",
  "-c",
  "core.excludesFile=/dev/null",
  "-c",
  "core.safecrlf=false",
  "-c",
  "core.fsmonitor=false",
  "-c",
  "core.quotePath=false",
  "-c",
  "core.untrackedCache=false",
  "-c",
  "gc.auto=0",
  "-c",
  "safe.directory=*",
  "-c",
  "diff.renames=false",
];

const IDENTITY = { name: "freecode", email: "snapshots@freecode.invalid" };

function gitEnv(place: GitPlace | undefined, extra: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && !k.startsWith("GIT_")) env[k] = v;
  }
  const where = place && {
    GIT_DIR: place.gitDir,
    GIT_WORK_TREE: place.workTree,
    GIT_INDEX_FILE: place.indexFile,
  };
  return {
    ...env,
    ...where,
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_TERMINAL_PROMPT: "0",
    GIT_AUTHOR_NAME: IDENTITY.name,
    GIT_AUTHOR_EMAIL: IDENTITY.email,
    GIT_COMMITTER_NAME: IDENTITY.name,
    GIT_COMMITTER_EMAIL: IDENTITY.email,
    LC_ALL: "C",
    ...extra,
  };
}

export interface GitCall {
  /** What to write to stdin (NUL-separated path lists): text (UTF-8), or bytes (names that are not). */
  stdin?: string | Uint8Array;
  /**
   * Return stdout as bytes, one character per byte (latin1), not decoded as UTF-8: names git lists
   * that are not UTF-8 survive (`utf8Names` tells them apart).
   */
  raw?: boolean;
  /** Extra environment (e.g. `GIT_LITERAL_PATHSPECS`). */
  env?: Record<string, string>;
  /** Exit codes that are answers, not failures (e.g. 1 for `rev-parse --verify -q`). */
  okCodes?: number[];
  /** Run outside the place (`git init` refuses a work tree): no GIT_DIR, work tree or index. */
  unplaced?: boolean;
  /** With `unplaced`: where to run (git then finds the repository there, if any). */
  cwd?: string;
}

/** Run git in `place`; resolves stdout, throws `internal` with git's first stderr line on failure. */
export async function git(place: GitPlace, args: string[], call: GitCall = {}): Promise<string> {
  let proc: Bun.Subprocess<"pipe", "pipe", "pipe">;
  try {
    proc = Bun.spawn([place.bin, ...CONFIG_FLAGS, ...args], {
      cwd: call.unplaced ? call.cwd : place.workTree,
      env: gitEnv(call.unplaced ? undefined : place, call.env ?? {}),
      stdin: "pipe",
      stdout: "pipe",
      stderr: "pipe",
    });
  } catch (error) {
    throw new GitMissingError(place.bin, error);
  }
  proc.stdin.write(call.stdin ?? "");
  await proc.stdin.end();
  const [stdout, stderr, code] = await Promise.all([
    call.raw
      ? new Response(proc.stdout).arrayBuffer().then((b) => Buffer.from(b).toString("latin1"))
      : new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  if (code !== 0 && !(call.okCodes ?? []).includes(code)) {
    const why = stderr.trim().split("\n")[0] || `exit code ${code}`;
    throw new FreecodeError("internal", `git ${args[0]} failed in the snapshot store: ${why}`);
  }
  return stdout;
}

/** Split git's `-z` output into its fields. */
export const nulFields = (out: string): string[] => out.split("\0").filter((s) => s !== "");

/**
 * Names from a raw (`GitCall.raw`) NUL-separated listing, split: those that are UTF-8, decoded, and
 * the others as their bytes. A name that is not UTF-8 (a Latin-1 `caf\xe9.txt`) decoded as text
 * becomes another name (`caf\uFFFD.txt`): handed back to git or the file system, it named nothing.
 */
export function utf8Names(raw: string): { names: string[]; others: Buffer[] } {
  const names: string[] = [];
  const others: Buffer[] = [];
  for (const field of nulFields(raw)) {
    const bytes = Buffer.from(field, "latin1");
    if (isUtf8(bytes)) names.push(bytes.toString("utf8"));
    else others.push(bytes);
  }
  return { names, others };
}

/** A name that is not UTF-8 as text to show: its bad bytes as `\xe9`. */
export function shownName(bytes: Uint8Array): string {
  let out = "";
  for (let i = 0; i < bytes.length; ) {
    const at = invalidUtf8At(bytes, i);
    const end = at === -1 ? bytes.length : at;
    out += Buffer.from(bytes.subarray(i, end)).toString("utf8");
    if (at === -1) break;
    out += `\\x${bytes[at]!.toString(16).padStart(2, "0")}`;
    i = at + 1;
  }
  return out;
}

/** NUL-separated path list bytes for stdin: text names, then names given as bytes. */
export function pathList(names: readonly string[], others: readonly Uint8Array[] = []): Buffer {
  const parts: Buffer[] = [];
  for (const n of names) parts.push(Buffer.from(`${n}\0`));
  for (const b of others) parts.push(Buffer.from(b), Buffer.from([0]));
  return Buffer.concat(parts);
}
