/**
 * Where a session stands among its snapshots: the ordered list of snapshots undo and redo walk, and
 * the position the work tree was last put at. One small JSON file per session, replaced atomically,
 * so the position survives a restart; validated on every read.
 */
import { existsSync, readFileSync } from "node:fs";
import * as v from "valibot";
import { badInput } from "../errors.ts";
import { writeFileAtomic } from "../util/atomic.ts";

const TreeId = v.pipe(v.string(), v.regex(/^[0-9a-f]{40,64}$/, "not a git object id"));

export const SnapshotEntrySchema = v.object({
  /** The git tree id: what `checkpoint.*` events call `snapshot`. */
  tree: TreeId,
  /** The commit that keeps the tree reachable on the session's ref. */
  commit: TreeId,
  entryId: v.optional(v.string()),
  /** When it was captured (ms since the epoch). */
  at: v.number(),
  /** Files left out for their size, nested repositories as `dir/`: restore neither writes nor deletes them. */
  skipped: v.optional(v.array(v.string())),
});
export type SnapshotEntry = v.InferOutput<typeof SnapshotEntrySchema>;

export const SnapshotStateSchema = v.object({
  version: v.literal(1),
  sessionId: v.string(),
  projectPath: v.string(),
  /** Index into `entries` of the snapshot the work tree was last captured or restored at (-1: none). */
  position: v.pipe(v.number(), v.integer(), v.minValue(-1)),
  entries: v.array(SnapshotEntrySchema),
});
export type SnapshotState = v.InferOutput<typeof SnapshotStateSchema>;

/** The state at `path`, or an empty one when the session has no snapshots yet. */
export function readState(path: string, sessionId: string, projectPath: string): SnapshotState {
  if (!existsSync(path)) return { version: 1, sessionId, projectPath, position: -1, entries: [] };
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    throw badInput(`snapshot state is not JSON: ${(error as Error).message}`, { file: path }, error);
  }
  const parsed = v.safeParse(SnapshotStateSchema, raw);
  if (!parsed.success) throw badInput(`snapshot state: ${v.summarize(parsed.issues)}`, { file: path });
  const state = parsed.output;
  if (state.position >= state.entries.length)
    throw badInput(`snapshot state: position ${state.position} is past the last snapshot`, { file: path });
  return state;
}

export function writeState(path: string, state: SnapshotState): void {
  writeFileAtomic(path, `${JSON.stringify(state, null, 1)}\n`);
}

/**
 * Put `entry` after the current position: snapshots past it (the redo branch) are dropped, as in
 * any editor's undo stack. Returns the new state.
 */
export function pushEntry(state: SnapshotState, entry: SnapshotEntry): SnapshotState {
  const entries = [...state.entries.slice(0, state.position + 1), entry];
  return { ...state, entries, position: entries.length - 1 };
}
