/**
 * How many bytes each session's data takes, for gc's disk budget. The files adapter's data are
 * files, so they are measured on disk: a session's directory (meta, messages, context cache) and
 * its rollout directory. The database adapters keep everything in one file that does not shrink
 * when rows go (free pages are reused, not returned), so its size cannot tell whether gc got under
 * a budget: there a session's size is its data serialized as JSON (meta, each message and event as
 * a line, the context cache), the bytes an export of it would take. Indexes, journals and locks
 * under `state/` are derived and not counted.
 */
import { lstatSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { homePaths } from "../home.ts";
import type { StorageAdapter } from "../storage/contract.ts";

/** How the sizes were taken. */
export type SizeMethod = "files" | "serialized";

export interface DiskUsage {
  method: SizeMethod;
  /** Bytes of each session (by id) and of each rollout log with no session. */
  bytes: Map<string, number>;
}

/** The bytes under `path` (a file or a directory, symlinks not followed; 0 when it is gone). */
export function bytesUnder(path: string): number {
  let stat: ReturnType<typeof lstatSync>;
  try {
    stat = lstatSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return 0;
    throw error;
  }
  if (!stat.isDirectory()) return stat.size;
  let sum = 0;
  for (const name of readdirSync(path)) sum += bytesUnder(join(path, name));
  return sum;
}

/** The names in `dir` that are not hidden (the files adapter's temporary directories are). */
function shown(dir: string): string[] {
  try {
    return readdirSync(dir).filter((name) => !name.startsWith("."));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
}

/** Sizes of the files adapter's sessions under `home`: `sessions/<project>/<id>/` + `rollout/sessions/<id>/`. */
function filesUsage(home: string): Map<string, number> {
  const paths = homePaths(home);
  const bytes = new Map<string, number>();
  const add = (id: string, n: number) => bytes.set(id, (bytes.get(id) ?? 0) + n);
  for (const project of shown(paths.sessions)) {
    const projectDir = join(paths.sessions, project);
    if (!lstatSync(projectDir).isDirectory()) continue;
    for (const id of shown(projectDir)) add(id, bytesUnder(join(projectDir, id)));
  }
  for (const id of shown(paths.rollout)) add(id, bytesUnder(join(paths.rollout, id)));
  return bytes;
}

const lineBytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value)) + 1;

/** A session's data serialized as JSON lines (meta, messages, events, context cache). */
async function serializedBytes(adapter: StorageAdapter, id: string): Promise<number> {
  let sum = 0;
  const meta = await adapter.getMeta(id);
  if (meta) {
    sum += lineBytes(meta);
    for (const m of (await adapter.readMessages(id)).messages) sum += lineBytes(m);
    const cache = await adapter.getContextCache(id);
    if (cache !== undefined) sum += lineBytes(cache);
  }
  for await (const read of adapter.readEvents(id)) if (read.event) sum += lineBytes(read.event);
  return sum;
}

/** The bytes of every session in `ids` and of every rollout log, measured as `DiskUsage` says. */
export async function measureUsage(adapter: StorageAdapter, ids: string[]): Promise<DiskUsage> {
  if (adapter.name === "files") return { method: "files", bytes: filesUsage(adapter.location) };
  const bytes = new Map<string, number>();
  for (const id of new Set([...ids, ...(await adapter.listEventLogs())]))
    bytes.set(id, await serializedBytes(adapter, id));
  return { method: "serialized", bytes };
}
