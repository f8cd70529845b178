/** Where freecode keeps its data: `--home`, else `FREECODE_HOME`, else `~/.freecode`. */
import { existsSync, lstatSync, readlinkSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { badInput } from "./errors.ts";
import { writable } from "./util/writable.ts";

/** Resolve the freecode home directory from an explicit flag and the environment. */
export function resolveHome(flag?: string, env: Record<string, string | undefined> = process.env): string {
  const chosen = flag || env.FREECODE_HOME;
  if (chosen) return resolve(chosen);
  return join(env.HOME || homedir(), ".freecode");
}

/** The well-known paths under a home (SPEC.md "Three shapes on disk"). */
export function homePaths(home: string) {
  return {
    home,
    config: join(home, "config.json"),
    sessions: join(home, "sessions"),
    rollout: join(home, "rollout", "sessions"),
    state: join(home, "state"),
    remote: join(home, "remote"),
    snapshots: join(home, "snapshots"),
  };
}

/**
 * Whether derived state (listing and search indexes) may be kept in files under `home`: the home
 * exists and its `state/` (or, before it is made, the home) can be written. Where it cannot — a
 * read-only mount, another user's files, a mistyped `--home` — readers keep that state in memory
 * for the one process, and write nothing there.
 */
export function keepsState(home: string): boolean {
  if (!existsSync(home)) return false;
  const { state } = homePaths(home);
  return existsSync(state) ? writable(state) : writable(home);
}

/**
 * Refuse a home that is a symbolic link to nothing (a disk not mounted, a moved folder): read, it
 * looked like an empty store ("No sessions"); written, every command failed on a missing directory.
 * Nothing is made at the link's target: where it points may be a mount point not mounted yet.
 */
export function checkHome(home: string, flag = "--home"): void {
  let link = false;
  try {
    link = lstatSync(home).isSymbolicLink();
  } catch {
    return;
  }
  if (!link || existsSync(home)) return;
  const target = resolve(dirname(home), readlinkSync(home));
  throw badInput(
    `${flag} ${home} is a symbolic link to ${target}, which does not exist (a disk not mounted?): make it, or choose another home`,
  );
}
