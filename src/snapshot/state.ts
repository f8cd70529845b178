/**
 * Where a session stands among its snapshots: the ordered list of snapshots undo and redo walk, and
 * the position the work tree was last put at. One small JSON file per session, replaced atomically,
 * so the position survives a restart; validated on every read.
 */
import { existsSync, readFileSync } from "node:fs";
import * as v from "valibot";
import { badInput, FreecodeError } from "../errors.ts";
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
  /**
   * Kept by a restore (changes no snapshot held, autosaved before an undo or kept by a rollback or a
   * resumed restore): a message said so, so it is never dropped from the list (`pushEntry`,
   * `insertEntry`).
   */
  kept: v.optional(v.literal(true)),
});
export type SnapshotEntry = v.InferOutput<typeof SnapshotEntrySchema>;

export const SnapshotStateSchema = v.object({
  version: v.literal(1),
  sessionId: v.string(),
  projectPath: v.string(),
  /** Index into `entries` of the snapshot the work tree was last captured or restored at (-1: none). */
  position: v.pipe(v.number(), v.integer(), v.minValue(-1)),
  entries: v.array(SnapshotEntrySchema),
  /**
   * Written before a restore touches the work tree, removed once it is done or rolled back: while
   * it stands the restore to `entries[to]` was interrupted (the work tree may be anywhere between
   * the snapshot at `position` and that one), and only running it again goes on from there.
   */
  restoring: v.optional(
    v.object({
      to: v.pipe(v.number(), v.integer(), v.minValue(0)),
      direction: v.picklist(["undo", "redo"]),
    }),
  ),
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
  if (state.restoring && (state.restoring.to >= state.entries.length || state.position < 0))
    throw badInput(`snapshot state: restoring a snapshot that is not in the list`, { file: path });
  return state;
}

export function writeState(path: string, state: SnapshotState): void {
  writeFileAtomic(path, `${JSON.stringify(state, null, 1)}\n`);
}

/**
 * Put `entry` after the current position: snapshots past it (the redo branch) are dropped, as in
 * any editor's undo stack, except kept ones (`kept`), which are never dropped: they move to just
 * before `entry`, history that undo walks back through. Returns the new state.
 */
export function pushEntry(state: SnapshotState, entry: SnapshotEntry): SnapshotState {
  const after = state.entries.slice(state.position + 1).filter((e) => e.kept);
  // A kept snapshot of the very same tree is this entry: listed once, still kept.
  const same = after.some((e) => e.tree === entry.tree);
  const entries = withoutRepeats([
    ...state.entries.slice(0, state.position + 1),
    ...after.filter((e) => e.tree !== entry.tree),
    same ? { ...entry, kept: true as const } : entry,
  ]);
  return { ...state, entries, position: entries.length - 1 };
}

/**
 * Neighbours holding one tree listed once (the first, kept if either was): a kept snapshot moved next
 * to the same tree would be an undo step that changes nothing, and each undo-edit-capture round
 * added one more.
 */
function withoutRepeats(entries: SnapshotEntry[]): SnapshotEntry[] {
  const out: SnapshotEntry[] = [];
  for (const e of entries) {
    const prev = out.at(-1);
    if (prev?.tree !== e.tree) out.push(e);
    else if (e.kept && !prev.kept) out[out.length - 1] = { ...prev, kept: true };
  }
  return out;
}

/**
 * Insert `entry`, kept (`kept`), just after the current position and make it the position: the
 * autosave of an undo over changes no snapshot holds. Nothing is dropped or reordered, every entry
 * after the position (kept or not) stays after it, in order, so once the undo has restored a snapshot
 * at or before the old position, one redo brings the autosave back. When the entry just after the
 * position already holds the same tree, that one is marked kept instead of listing the tree twice (a
 * copy elsewhere is not reused: redo would not reach it next).
 */
export function insertEntry(state: SnapshotState, entry: SnapshotEntry): SnapshotState {
  const at = state.position + 1;
  const next = state.entries[at];
  const reuse = next?.tree === entry.tree;
  const entries = [
    ...state.entries.slice(0, at),
    { ...(reuse && next ? next : entry), kept: true as const },
    ...state.entries.slice(reuse ? at + 1 : at),
  ];
  return { ...state, entries, position: at };
}

/**
 * Put `entry` last, kept (`kept`), the position unchanged, so nothing is dropped: a tree kept while
 * a restore is under way (work done since it was interrupted, or found by a rollback), which redo
 * reaches. A tree already listed is not listed twice, but that entry is marked kept.
 */
export function appendEntry(state: SnapshotState, entry: SnapshotEntry): SnapshotState {
  const kept = { ...entry, kept: true as const };
  if (!state.entries.some((e) => e.tree === entry.tree))
    return { ...state, entries: [...state.entries, kept] };
  const entries = state.entries.map((e) => (e.tree === entry.tree ? { ...e, kept: true as const } : e));
  return { ...state, entries };
}

/** The state at `position` with no restore under way. */
export function settled(state: SnapshotState, position: number): SnapshotState {
  const { restoring: _, ...rest } = state;
  return { ...rest, position };
}

const short = (tree: string) => tree.slice(0, 12);

/** A restore that failed part-way and could not be rolled back: it must be run again first. */
export class RestoreInterruptedError extends FreecodeError {
  constructor(sessionId: string, state: SnapshotState, restoring: NonNullable<SnapshotState["restoring"]>) {
    const [here, to] = [state.entries[state.position]!, state.entries[restoring.to]!];
    super(
      "conflict",
      `${restoring.direction === "undo" ? "an" : "a"} ${restoring.direction} of session ${sessionId} to snapshot ${short(to.tree)} was interrupted: ` +
        `the work tree is between snapshots ${short(here.tree)} and ${short(to.tree)} (both kept); ` +
        `run ${restoring.direction} again to finish it`,
    );
  }
}

/**
 * The index of the snapshot `direction` restores, the work tree being staged as `workTree`: undo
 * goes back one, or, over changes no snapshot holds, to the current snapshot (they are kept first).
 * `conflict` when there is none, or redo would overwrite such changes (a work tree equal to a kept
 * snapshot is no such change).
 */
export function targetOf(state: SnapshotState, workTree: string, direction: "undo" | "redo"): number {
  const dirty = workTree !== state.entries[state.position]!.tree;
  if (direction === "undo") {
    const target = dirty ? state.position : state.position - 1;
    if (target < 0)
      throw new FreecodeError(
        "conflict",
        `nothing to undo: session ${state.sessionId} is at its first snapshot`,
      );
    return target;
  }
  const target = state.position + 1;
  if (target >= state.entries.length)
    throw new FreecodeError(
      "conflict",
      `nothing to redo: session ${state.sessionId} is at its latest snapshot`,
    );
  // Already at the next snapshot (a restore stopped before it could say so) is no change of the user's;
  // a work tree equal to a kept snapshot (a rolled-back redo left it so) is held by that snapshot.
  const held = (tree: string) => state.entries.some((e) => e.kept && e.tree === tree);
  if (dirty && workTree !== state.entries[target]!.tree && !held(workTree))
    throw new FreecodeError(
      "conflict",
      `the work tree has changes no snapshot holds: redo would overwrite them (undo or capture first)`,
    );
  return target;
}
