/** Small project work trees for the snapshot tests, and a look at a user's own `.git`. */
import { expect } from "bun:test";
import { chmodSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { FreecodeError } from "../../src/errors.ts";
import { tempDir, tempHome } from "../_helpers.ts";

/** Write `files` (relative path → content) under `root`. */
export function writeFiles(root: string, files: Record<string, string>): void {
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), content);
  }
}

/** Every file below `root` (except inside `.git`) with its content, sorted by path. */
export function readTree(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const p = join(dir, e.name);
      if (e.name === ".git") continue;
      if (e.isDirectory()) walk(p);
      else out[relative(root, p)] = readFileSync(p, "utf8");
    }
  };
  walk(root);
  return out;
}

/** Run the user's git in `cwd` (their own repository: no isolation, as a user would). */
export function userGit(cwd: string, args: string[]): string {
  const proc = Bun.spawnSync(["git", ...args], {
    cwd,
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: "u",
      GIT_AUTHOR_EMAIL: "u@x",
      GIT_COMMITTER_NAME: "u",
      GIT_COMMITTER_EMAIL: "u@x",
    },
    stderr: "pipe",
  });
  if (proc.exitCode !== 0) throw new Error(`git ${args.join(" ")}: ${proc.stderr.toString()}`);
  return proc.stdout.toString();
}

/** What must not move in a user's repository: HEAD, refs, the index file, status, config. */
export function repoFingerprint(root: string): Record<string, unknown> {
  const git = join(root, ".git");
  return {
    head: userGit(root, ["rev-parse", "HEAD"]),
    refs: userGit(root, ["for-each-ref"]),
    index: readFileSync(join(git, "index")).toString("base64"),
    indexMtime: statSync(join(git, "index")).mtimeMs,
    config: readFileSync(join(git, "config"), "utf8"),
    stash: userGit(root, ["stash", "list"]),
    entries: readdirSync(git).sort(),
  };
}

/** The paths in snapshot `tree` of the store at `location` (what `list().location` gives). */
export function treePaths(location: string, tree: string): string[] {
  const proc = Bun.spawnSync(
    ["git", "--git-dir", join(location, "git"), "ls-tree", "-r", "-z", "--name-only", tree],
    {
      stderr: "pipe",
    },
  );
  if (proc.exitCode !== 0) throw new Error(`git ls-tree: ${proc.stderr.toString()}`);
  return proc.stdout.toString().split("\0").filter(Boolean).sort();
}

/** A git in `dir` that runs `script` (sh) instead of `checkout-index` while `flag` exists. */
export function gitFailing(dir: string, flag: string, script: string): string {
  const bin = join(dir, "git");
  writeFileSync(
    bin,
    `#!/bin/sh\nfor a in "$@"; do if [ "$a" = checkout-index ] && [ -e "${flag}" ]; then ${script}; fi; done\nexec git "$@"\n`,
  );
  chmodSync(bin, 0o755);
  return bin;
}

/** The `FreecodeError` that `p` rejects with (fails the test if it resolves). */
export async function failure(p: Promise<unknown>): Promise<FreecodeError> {
  try {
    await p;
  } catch (error) {
    expect(error).toBeInstanceOf(FreecodeError);
    return error as FreecodeError;
  }
  throw new Error("expected a failure");
}

/**
 * A freecode home, a project directory (`root`) and a directory for a fake `git` (`gitFailing`),
 * all removed when the test ends: what every snapshot test starts from.
 */
export async function snapshotPlace() {
  const home = await tempHome();
  const project = await tempDir("freecode-project-");
  const bin = await tempDir("freecode-bin-");
  return {
    home,
    project,
    bin,
    root: project.path,
    async [Symbol.asyncDispose]() {
      await bin[Symbol.asyncDispose]();
      await project[Symbol.asyncDispose]();
      await home[Symbol.asyncDispose]();
    },
  };
}
