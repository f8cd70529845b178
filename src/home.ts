/** Where freecode keeps its data: `--home`, else `FREECODE_HOME`, else `~/.freecode`. */
import { homedir } from "node:os";
import { join, resolve } from "node:path";

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
