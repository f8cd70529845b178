/**
 * Regressions (fourth review): a snapshot a rollback or a resumed restore kept was listed after the
 * position, and the next capture that differed (or the autosave of the next undo) dropped it with the
 * redo branch, so the work it held was out of undo/redo's reach; redo refused a work tree equal to
 * such a snapshot. And a git of the session still running without a lock file (`checkout-index` of
 * a killed restore, still writing the work tree) was not waited for: a resume raced it.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { clearStaleGitLocks } from "../../src/snapshot/_stale.ts";
import { snapshotRepo } from "../../src/snapshot/repo.ts";
import { createSnapshots } from "../../src/snapshot/snapshots.ts";
import { pushEntry, type SnapshotEntry, type SnapshotState } from "../../src/snapshot/state.ts";
import { tempDir, tempHome } from "../_helpers.ts";
import { failure, gitFailing, readTree, snapshotPlace, treePaths, writeFiles } from "./_project.ts";

/** A git whose `checkout-index` fails once (while `<bin>/fail` exists) after "the editor" saved `edit`. */
function editorThenFail(bin: string, edit: Record<string, string>): { git: string; flag: string } {
  const flag = join(bin, "fail");
  const writes = Object.entries(edit)
    .map(([path, content]) => `printf '%s' '${content}' > "$GIT_WORK_TREE/${path}"; `)
    .join("");
  const git = gitFailing(bin, flag, `rm -f "${flag}"; ${writes}echo "error: injected failure" >&2; exit 1`);
  return { git, flag };
}

describe("regression: kept snapshots are never dropped from the list", () => {
  test("kept by a rolled-back undo: a capture that differs moves it before itself; undo reaches it", async () => {
    await using place = await snapshotPlace();
    const { home, bin, root } = place;
    const { git, flag } = editorThenFail(bin.path, { "a.txt": "USER EDIT", "draft.md": "draft" });
    const snaps = createSnapshots({ home: home.path, projectPath: root, sessionId: "s", git });
    writeFiles(root, { "a.txt": "v0" });
    await snaps.capture("c0");
    writeFiles(root, { "a.txt": "v1" });
    await snaps.capture("c1");
    writeFileSync(flag, "");
    const error = await failure(snaps.undo());
    expect(error.message).toContain("kept first");
    const kept = snaps.list().snapshots[2]!;
    expect(kept).toMatchObject({ kept: true, current: false });
    expect(treePaths(snaps.list().location, kept.snapshot)).toEqual(["a.txt", "draft.md"]);

    writeFiles(root, { "c.txt": "tool" });
    expect(await snaps.capture("next")).toMatchObject({ captured: true, isNew: true });
    const list = snaps.list();
    expect(list.snapshots.map((s) => s.entryId)).toEqual(["c0", "c1", undefined, "next"]);
    expect(list.snapshots[2]!.snapshot).toBe(kept.snapshot);
    expect(list.position).toBe(3);
    // Undo walks back through it: the editor's work comes back.
    await snaps.undo();
    expect(readTree(root)).toEqual({ "a.txt": "USER EDIT", "draft.md": "draft" });
  });

  test("kept by a rolled-back redo: redo accepts a work tree equal to it; later captures keep it", async () => {
    await using place = await snapshotPlace();
    const { home, bin, root } = place;
    const { git, flag } = editorThenFail(bin.path, { "notes.txt": "mine" });
    const snaps = createSnapshots({ home: home.path, projectPath: root, sessionId: "s", git });
    writeFiles(root, { "a.txt": "v0", "notes.txt": "n" });
    await snaps.capture("c0");
    writeFiles(root, { "a.txt": "v1" });
    await snaps.capture("c1");
    await snaps.undo();
    writeFileSync(flag, "");
    const error = await failure(snaps.redo());
    expect(error.message).toContain("run redo again");
    const mine = readTree(root);
    expect(mine).toEqual({ "a.txt": "v0", "notes.txt": "mine" });
    const kept = snaps.list().snapshots[2]!;
    expect(kept.kept).toBe(true);

    // "run redo again", as told: the work tree is held by the kept snapshot, so nothing is lost.
    expect(await snaps.redo()).toMatchObject({ entryId: "c1", position: 1 });
    await snaps.undo();
    // A new branch drops c1, never the kept snapshot.
    writeFiles(root, { "b.txt": "x" });
    await snaps.capture("t2");
    const list = snaps.list();
    expect(list.snapshots.map((s) => s.snapshot)).toContain(kept.snapshot);
    expect(list.snapshots.map((s) => s.entryId)).toEqual(["c0", undefined, "t2"]);
    await snaps.undo();
    expect(readTree(root)).toEqual(mine);
  });

  test("kept by a resumed restore, or by an undo's autosave: the next capture keeps it too", async () => {
    await using place = await snapshotPlace();
    const { home, bin, root } = place;
    const flag = join(bin.path, "fail");
    const git = gitFailing(bin.path, flag, `git "$@"; echo "error: injected failure" >&2; exit 1`);
    const snaps = createSnapshots({ home: home.path, projectPath: root, sessionId: "s", git });
    writeFiles(root, { "a.txt": "v0" });
    await snaps.capture("c0");
    writeFiles(root, { "a.txt": "v1", "b.txt": "new" });
    await snaps.capture("c1");
    writeFileSync(flag, "");
    expect((await failure(snaps.undo())).message).toContain("could not be rolled back");
    rmSync(flag);
    writeFiles(root, { "design.md": "a day of work" }); // captures are refused meanwhile
    const resumed = await snaps.undo();
    expect(resumed).toMatchObject({ resumed: true, position: 0 });
    const work = resumed.autosaved!;
    expect(treePaths(snaps.list().location, work)).toContain("design.md");

    writeFiles(root, { "c.txt": "next tool run" });
    await snaps.capture("t2");
    expect(snaps.list().snapshots.map((s) => s.snapshot)).toContain(work);

    // An undo over uncaptured changes keeps them ("redo brings them back"); a capture after it too.
    writeFiles(root, { "c.txt": "edited, never captured" });
    const undo = await snaps.undo();
    writeFiles(root, { "d.txt": "another branch" });
    await snaps.capture("t3");
    const trees = snaps.list().snapshots.map((s) => s.snapshot);
    expect(trees).toContain(work);
    expect(trees).toContain(undo.autosaved!);
  });
});

/** A project at A (c0) with B (c1) and an undo's autosave D (kept) after it, the work tree back at A. */
async function atFirstWithRedoBranch(snaps: ReturnType<typeof createSnapshots>, root: string) {
  writeFiles(root, { "a.txt": "A" });
  await snaps.capture("c0");
  writeFiles(root, { "a.txt": "B" });
  await snaps.capture("c1");
  writeFiles(root, { "a.txt": "D-user" });
  const d = (await snaps.undo()).autosaved!;
  await snaps.undo();
  expect(readTree(root)).toEqual({ "a.txt": "A" });
  const list = snaps.list();
  expect(list.position).toBe(0);
  expect(list.snapshots.map((s) => s.snapshot)[2]).toBe(d);
  return { b: list.snapshots[1]!.snapshot, d };
}

describe("regression (fifth review): an undo's autosave drops and reorders nothing", () => {
  test("it is inserted just after the position: one redo brings it back, then the rest in order", async () => {
    await using place = await snapshotPlace();
    const { home, root } = place;
    const snaps = createSnapshots({ home: home.path, projectPath: root, sessionId: "s" });
    const { b, d } = await atFirstWithRedoBranch(snaps, root);

    writeFiles(root, { "a.txt": "F-user" });
    const undo = await snaps.undo();
    expect(undo).toMatchObject({ entryId: "c0", position: 0 });
    const f = undo.autosaved!;
    const list = snaps.list();
    expect(list.snapshots.map((s) => s.snapshot)).toEqual([list.snapshots[0]!.snapshot, f, b, d]);
    expect(list.snapshots.map((s) => s.kept ?? false)).toEqual([false, true, false, true]);
    // "redo brings them back": the very next redo, not an older kept snapshot.
    expect((await snaps.redo()).snapshot).toBe(f);
    expect(readTree(root)).toEqual({ "a.txt": "F-user" });
    expect((await snaps.redo()).entryId).toBe("c1");
    expect((await snaps.redo()).snapshot).toBe(d);
    expect(readTree(root)).toEqual({ "a.txt": "D-user" });
  });

  test("rolled back, the position has not moved and nothing is dropped: the retry reaches the same snapshot", async () => {
    await using place = await snapshotPlace();
    const { home, bin, root } = place;
    const flag = join(bin.path, "fail");
    const git = gitFailing(bin.path, flag, `rm -f "${flag}"; echo "error: injected failure" >&2; exit 1`);
    const snaps = createSnapshots({ home: home.path, projectPath: root, sessionId: "s", git });
    const { b, d } = await atFirstWithRedoBranch(snaps, root);

    writeFiles(root, { "a.txt": "F-user" });
    writeFileSync(flag, "");
    const error = await failure(snaps.undo());
    expect(error.message).toContain("the position has not moved");
    expect(readTree(root)).toEqual({ "a.txt": "F-user" });
    const list = snaps.list();
    expect(list.position).toBe(0);
    const f = list.snapshots[1]!;
    expect(f).toMatchObject({ kept: true, current: false });
    expect(list.snapshots.map((s) => s.snapshot).slice(2)).toEqual([b, d]);

    // "run undo again", as told: the same snapshot, the autosave reused rather than listed twice.
    const retry = await snaps.undo();
    expect(retry).toMatchObject({ entryId: "c0", position: 0, autosaved: f.snapshot });
    expect(readTree(root)).toEqual({ "a.txt": "A" });
    expect(snaps.list().snapshots.map((s) => s.snapshot)).toEqual(list.snapshots.map((s) => s.snapshot));
    expect((await snaps.redo()).snapshot).toBe(f.snapshot);
    expect(readTree(root)).toEqual({ "a.txt": "F-user" });
  });

  test("an autosave equal to a snapshot listed elsewhere is inserted anyway, so redo reaches it", async () => {
    await using place = await snapshotPlace();
    const { home, root } = place;
    const snaps = createSnapshots({ home: home.path, projectPath: root, sessionId: "s" });
    const { b, d } = await atFirstWithRedoBranch(snaps, root);

    writeFiles(root, { "a.txt": "D-user" }); // as the kept snapshot at index 2, not the next one
    const undo = await snaps.undo();
    expect(undo.autosaved).toBe(d);
    expect(
      snaps
        .list()
        .snapshots.map((s) => s.snapshot)
        .slice(1),
    ).toEqual([d, b, d]);
    expect((await snaps.redo()).snapshot).toBe(d);
    expect(readTree(root)).toEqual({ "a.txt": "D-user" });
  });
});

const procReadable = existsSync("/proc/self/environ");

describe("regression: a git of the session that holds no lock", () => {
  test.skipIf(!procReadable)(
    "is waited for before the next call (checkout-index takes no lock)",
    async () => {
      await using place = await snapshotPlace();
      const { home, root } = place;
      const snaps = createSnapshots({ home: home.path, projectPath: root, sessionId: "s" });
      writeFiles(root, { "a.txt": "v0" });
      await snaps.capture("c0");
      const index = snapshotRepo(home.path, root, "s").place.indexFile;
      expect(existsSync(`${index}.lock`)).toBe(false);
      // An orphaned git of this session still writing the work tree, no lock file.
      const orphan = Bun.spawn(["sh", "-c", `sleep 0.6; echo late > "${root}/orphan.txt"`], {
        env: { ...process.env, GIT_INDEX_FILE: index },
      });
      await Bun.sleep(100);
      const capture = await snaps.capture("c1");
      expect(capture.captured).toBe(true);
      expect(existsSync(join(root, "orphan.txt"))).toBe(true); // it ended before the capture looked
      expect(treePaths(snaps.list().location, capture.captured ? capture.snapshot : "")).toContain(
        "orphan.txt",
      );
      await orphan.exited;
    },
  );

  test.skipIf(!procReadable)(
    "one still running after the wait fails the call with `locked`, naming its pid",
    async () => {
      await using home = await tempHome();
      await using project = await tempDir("freecode-project-");
      const repo = snapshotRepo(home.path, project.path, "s");
      const orphan = Bun.spawn(["sleep", "5"], {
        env: { ...process.env, GIT_INDEX_FILE: repo.place.indexFile },
      });
      try {
        await Bun.sleep(100);
        const error = await failure(clearStaleGitLocks(repo.place, repo.ref, 200));
        expect(error.code).toBe("locked");
        expect(error.message).toContain(`git (pid ${orphan.pid})`);
        expect(error.message).not.toContain("holding");
      } finally {
        orphan.kill();
        await orphan.exited;
      }
    },
  );
});

describe("regression (sixth review): a kept snapshot moved next to the same tree", () => {
  test("is listed once: each undo-edit-capture round added an undo step that changed nothing", () => {
    const e = (tree: string, extra: Partial<SnapshotEntry> = {}): SnapshotEntry => ({
      tree: tree.repeat(40),
      commit: "c".repeat(40),
      at: 1,
      ...extra,
    });
    // At X; after it Y (dropped by a new capture) and a kept X (an autosave equal to the position's).
    let state: SnapshotState = {
      version: 1,
      sessionId: "s",
      projectPath: "/p",
      position: 0,
      entries: [e("a"), e("b"), e("a", { kept: true })],
    };
    state = pushEntry(state, e("d"));
    expect(state.entries.map((x) => [x.tree[0], x.kept ?? false])).toEqual([
      ["a", true],
      ["d", false],
    ]);
    expect(state.position).toBe(1);
  });
});
