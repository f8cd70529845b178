/**
 * Regressions (third review): re-running an interrupted restore deleted work done after the
 * interruption; a git killed mid-call left its lock files in our store and every later call failed
 * "File exists"; a rolled-back restore reverted or deleted changes it never made; two calls on one
 * session in the same process (parallel tool calls) froze the process until the lock timed out.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { RestoreFailedError } from "../../src/snapshot/restore.ts";
import { createSnapshots } from "../../src/snapshot/snapshots.ts";
import { parseJson, runCli } from "../_helpers.ts";
import { failure, gitFailing, readTree, snapshotPlace, treePaths, writeFiles } from "./_project.ts";

const hex = (id: string) => Buffer.from(id, "utf8").toString("hex");

/**
 * Snapshots `c0` and `c1` of `root` (session `s`), then an undo git interrupts: its restore and its
 * rollback write, then fail (while `<bin>/fail` exists; removed before this returns).
 */
async function interruptedUndo(home: string, root: string, bin: string, c0: Files, c1: Files) {
  const flag = join(bin, "fail");
  const git = gitFailing(bin, flag, `git "$@"; echo "error: injected failure" >&2; exit 1`);
  const snaps = createSnapshots({ home, projectPath: root, sessionId: "s", git });
  writeFiles(root, c0);
  await snaps.capture("c0");
  writeFiles(root, c1);
  await snaps.capture("c1");
  writeFileSync(flag, "");
  const error = await failure(snaps.undo());
  rmSync(flag);
  expect(error.message).toContain("could not be rolled back");
  return snaps;
}
type Files = Record<string, string>;

describe("regression: work done after an interrupted restore", () => {
  test("finishing the restore keeps it first, as the last snapshot: redo reaches it", async () => {
    await using place = await snapshotPlace();
    const { home, bin, root } = place;
    const c0 = { "a.txt": "v0", "notes.txt": "keep" };
    const snaps = await interruptedUndo(home.path, root, bin.path, c0, { "a.txt": "v1" });
    expect(snaps.list().interrupted).toMatchObject({ direction: "undo", to: 0 });
    // `session snapshots` says so, and its --json carries it.
    const cli = (args: string[]) => runCli(args, { home: home.path });
    expect(cli(["session", "create", "--id", "s", "--project", root, "--prompt", "go"]).code).toBe(0);
    const listed = parseJson<{ interrupted: unknown }>(cli(["session", "snapshots", "s", "--json"]));
    expect(listed.interrupted).toMatchObject({ direction: "undo", to: 0 });
    expect(cli(["session", "snapshots", "s"]).stdout).toContain("undo to snapshot 0 (");

    // The agent keeps working: its captures are refused, the files are on disk only.
    writeFiles(root, { "design.md": "a day of work", "notes.txt": "keep\nedited" });
    expect(await snaps.capture("t9:after")).toMatchObject({ captured: false, reason: "restore_interrupted" });
    const work = readTree(root);

    const undo = await snaps.undo();
    expect(undo).toMatchObject({ resumed: true, entryId: "c0", position: 0 });
    expect(undo.autosaved).toBeDefined();
    expect(readTree(root)).toEqual({ "a.txt": "v0", "notes.txt": "keep" });
    const list = snaps.list();
    expect(list.interrupted).toBeUndefined();
    expect(list.snapshots.map((s) => s.entryId)).toEqual(["c0", "c1", undefined]);
    expect(list.snapshots[2]!.snapshot).toBe(undo.autosaved!);
    expect(treePaths(list.location, undo.autosaved!)).toContain("design.md");

    await snaps.redo();
    expect(readTree(root)).toEqual({ "a.txt": "v1", "notes.txt": "keep" });
    await snaps.redo();
    expect(readTree(root)).toEqual(work);
  });

  test("finishing it with nothing new keeps nothing extra", async () => {
    await using place = await snapshotPlace();
    const { home, bin, root } = place;
    const c1 = { "a.txt": "v1", "b.txt": "new" };
    const snaps = await interruptedUndo(home.path, root, bin.path, { "a.txt": "v0" }, c1);
    const undo = await snaps.undo();
    expect(undo.autosaved).toBeUndefined();
    expect(snaps.list().snapshots).toHaveLength(2);
    expect(readTree(root)).toEqual({ "a.txt": "v0" });
  });
});

describe("regression: a rolled-back restore", () => {
  test("puts back only the files it was changing; edits and new files made meanwhile stay, and are kept", async () => {
    await using place = await snapshotPlace();
    const { home, bin, root } = place;
    const flag = join(bin.path, "fail");
    // The user's editor saves while the undo runs; then git fails (once).
    const git = gitFailing(
      bin.path,
      flag,
      `rm -f "${flag}"; echo edited > "$GIT_WORK_TREE/other.txt"; echo draft > "$GIT_WORK_TREE/draft.md"; ` +
        `echo "error: injected failure" >&2; exit 1`,
    );
    const snaps = createSnapshots({ home: home.path, projectPath: root, sessionId: "s", git });
    writeFiles(root, { "a.txt": "v0", "other.txt": "o0" });
    await snaps.capture("c0");
    writeFiles(root, { "a.txt": "v1", "gone.txt": "added in c1" });
    await snaps.capture("c1");
    writeFileSync(flag, "");

    const error = await failure(snaps.undo());
    expect(error).toBeInstanceOf(RestoreFailedError);
    expect((error as RestoreFailedError).rolledBack).toBe(true);
    expect(error.message).toContain(
      "the 2 files it was changing are as they were before it, nothing else was touched",
    );
    expect(error.message).not.toContain("nothing lost");
    expect(readTree(root)).toEqual({
      "a.txt": "v1",
      "gone.txt": "added in c1",
      "draft.md": "draft\n",
      "other.txt": "edited\n",
    });
    // The work tree as the rollback found it is kept, last; the position did not move.
    const list = snaps.list();
    expect(list.position).toBe(1);
    expect(list.interrupted).toBeUndefined();
    expect(list.snapshots).toHaveLength(3);
    expect(treePaths(list.location, list.snapshots[2]!.snapshot)).toEqual(["a.txt", "draft.md", "other.txt"]);
    expect(error.message).toContain(
      `kept first, with the work tree as it was, as snapshot ${list.snapshots[2]!.snapshot.slice(0, 12)}`,
    );
  });
});

describe("regression: lock files of a git killed mid-call", () => {
  test("are removed under the session lock: capture and undo go on", async () => {
    await using place = await snapshotPlace();
    const { home, root } = place;
    const snaps = createSnapshots({ home: home.path, projectPath: root, sessionId: "s:1" });
    writeFiles(root, { "a.txt": "v0" });
    await snaps.capture("c0");
    const store = snaps.list().location;
    const locks = [
      join(store, "index", `${hex("s:1")}.lock`),
      join(store, "git", "refs", "freecode", "sessions", `${hex("s:1")}.lock`),
      join(store, "git", "packed-refs.lock"),
    ];
    for (const l of locks) writeFileSync(l, "");
    const old = new Date(Date.now() - 60_000);
    utimesSync(locks[2]!, old, old); // store-wide: removed only once it is a few seconds old

    writeFiles(root, { "a.txt": "v1" });
    const capture = await snaps.capture("c1");
    expect(capture).toMatchObject({ captured: true, isNew: true });
    for (const l of locks) expect(existsSync(l)).toBe(false);
    writeFileSync(locks[0]!, "");
    await snaps.undo();
    expect(readTree(root)).toEqual({ "a.txt": "v0" });
  });

  test("a git of the session still running is waited for; a lock that cannot go is named", async () => {
    await using place = await snapshotPlace();
    const { home, root } = place;
    const snaps = createSnapshots({ home: home.path, projectPath: root, sessionId: "s" });
    writeFiles(root, { "a.txt": "v0" });
    await snaps.capture("c0");
    const store = snaps.list().location;
    const index = join(store, "index", hex("s"));
    const lock = `${index}.lock`;
    if (existsSync("/proc/self/environ")) {
      // An orphaned git of this session (its freecode was killed alone): its lock is its own.
      writeFileSync(lock, "");
      const orphan = Bun.spawn(["sh", "-c", `sleep 0.4; echo done > "${lock}.seen"; rm "${lock}"`], {
        env: { ...process.env, GIT_INDEX_FILE: index },
      });
      await Bun.sleep(50);
      writeFiles(root, { "a.txt": "v1" });
      expect(await snaps.capture("c1")).toMatchObject({ captured: true, isNew: true });
      expect(existsSync(`${lock}.seen`)).toBe(true); // removed by its owner, not by us
      await orphan.exited;
    }
    mkdirSync(lock); // cannot be unlinked
    const stuck = await snaps.capture("c2");
    expect(stuck.captured).toBe(false);
    expect(!stuck.captured && stuck.error.message).toContain(`delete ${lock}`);
  });
});

describe("regression: calls on one session in the same process", () => {
  test("take turns instead of freezing: parallel captures, and a capture with an undo dry run", async () => {
    await using place = await snapshotPlace();
    const { home, root } = place;
    const snaps = createSnapshots({ home: home.path, projectPath: root, sessionId: "s" });
    writeFiles(root, { "a.txt": "v0" });
    await snaps.capture("c0");
    writeFiles(root, { "a.txt": "v1" });
    const t0 = performance.now();
    const [a, b] = await Promise.all([snaps.capture("a:before"), snaps.capture("b:before")]);
    expect(a).toMatchObject({ captured: true, isNew: true });
    expect(b).toMatchObject({ captured: true, isNew: false });
    const other = createSnapshots({ home: home.path, projectPath: root, sessionId: "s" });
    const [c, dry] = await Promise.all([other.capture("c"), snaps.undo({ dryRun: true })]);
    expect(c.captured).toBe(true);
    expect(dry).toMatchObject({ dryRun: true, entryId: "c0" });
    expect(performance.now() - t0).toBeLessThan(5_000); // the lock timeout is 10 s
  });
});
