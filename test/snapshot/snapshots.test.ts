/** createSnapshots with the real git in temp dirs: capture, undo, redo, and what they never touch. */
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { FreecodeError } from "../../src/errors.ts";
import type { EventInput } from "../../src/rollout/events.ts";
import { createSnapshots } from "../../src/snapshot/snapshots.ts";
import { tempDir, tempHome } from "../_helpers.ts";
import { readTree, repoFingerprint, userGit, writeFiles } from "./_project.ts";

async function setup(files: Record<string, string>) {
  const home = await tempHome();
  const project = await tempDir("freecode-project-");
  writeFiles(project.path, files);
  const events: EventInput[] = [];
  const open = (opts: { sessionId?: string; git?: string; maxFileBytes?: number } = {}) =>
    createSnapshots({
      home: home.path,
      projectPath: project.path,
      sessionId: opts.sessionId ?? "s1",
      record: (e) => events.push(e),
      ...opts,
    });
  return {
    home,
    project,
    events,
    open,
    async [Symbol.asyncDispose]() {
      await home[Symbol.asyncDispose]();
      await project[Symbol.asyncDispose]();
    },
  };
}

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (error) {
    expect(error).toBeInstanceOf(FreecodeError);
    return `${(error as FreecodeError).code}: ${(error as FreecodeError).message}`;
  }
  throw new Error("expected an error");
}

describe("snapshots: capture, undo, redo", () => {
  test("round trip in a user's git repo: contents, deletions, creations; ignored files and .git untouched", async () => {
    await using t = await setup({
      ".gitignore": "build/\n*.log\n",
      "src/a.ts": "a1\n",
      "src/keep.ts": "keep\n",
      "doc/old.md": "old\n",
    });
    const root = t.project.path;
    userGit(root, ["init", "-q"]);
    userGit(root, ["add", "-A"]);
    userGit(root, ["commit", "-q", "-m", "init"]);
    writeFiles(root, { "src/a.ts": "a1-staged\n" });
    userGit(root, ["add", "src/a.ts"]); // the user has something staged: their index must not move
    writeFiles(root, { "build/out.js": "built\n", "debug.log": "log1\n" });
    const before = repoFingerprint(root);

    const snaps = t.open();
    const s0 = await snaps.capture("call-1:before");
    expect(s0).toMatchObject({ captured: true, isNew: true });
    const tree0 = readTree(root);
    // The tool: edit, delete, create (also in a new directory), and touch ignored files.
    writeFiles(root, {
      "src/a.ts": "a2\n",
      "src/new.ts": "new\n",
      "lib/deep/x.ts": "x\n",
      "debug.log": "log2\n",
    });
    rmSync(join(root, "doc/old.md"));
    writeFiles(root, { "build/out.js": "built2\n" });
    const s1 = await snaps.capture("call-1:after");
    expect(s1).toMatchObject({ captured: true, isNew: true });
    const tree1 = readTree(root);

    const undone = await snaps.undo();
    expect(undone.snapshot).toBe(s0.captured ? s0.snapshot : "");
    expect(undone.files.map((f) => `${f.change} ${f.path}`).sort()).toEqual([
      "added doc/old.md",
      "deleted lib/deep/x.ts",
      "deleted src/new.ts",
      "modified src/a.ts",
    ]);
    expect(undone.filesChanged).toBe(4);
    // Ignored files keep their newest content; the empty directory a created file left is gone.
    expect(readTree(root)).toEqual({ ...tree0, "build/out.js": "built2\n", "debug.log": "log2\n" });
    expect(existsSync(join(root, "lib"))).toBe(false);

    const redone = await snaps.redo();
    expect(redone.filesChanged).toBe(4);
    expect(readTree(root)).toEqual(tree1);
    expect(repoFingerprint(root)).toEqual(before);
    expect(userGit(root, ["diff", "--cached", "--name-only"])).toBe("src/a.ts\n");

    expect(t.events.map((e) => e.type)).toEqual([
      "checkpoint.captured",
      "checkpoint.captured",
      "checkpoint.restored",
      "checkpoint.restored",
    ]);
    expect(t.events[0]).toMatchObject({ entryId: "call-1:before", snapshot: undone.snapshot });
    expect(t.events[2]).toMatchObject({ entryId: "call-1:before", filesChanged: 4 });
    expect(t.events[3]).toMatchObject({ entryId: "call-1:after", filesChanged: 4 });
  });

  test("a project that is not a git repository; no .git is created in it", async () => {
    await using t = await setup({ "a.txt": "1\n" });
    const snaps = t.open();
    await snaps.capture();
    writeFiles(t.project.path, { "a.txt": "2\n", "b.txt": "b\n" });
    await snaps.capture();
    expect((await snaps.undo()).filesChanged).toBe(2);
    expect(readTree(t.project.path)).toEqual({ "a.txt": "1\n" });
    expect(existsSync(join(t.project.path, ".git"))).toBe(false);
    expect(snaps.list().location.startsWith(join(t.home.path, "snapshots"))).toBe(true);
  });

  test("the position survives a reload (a new process reads the state file)", async () => {
    await using t = await setup({ f: "v0" });
    const first = t.open();
    for (const v of ["v1", "v2"]) {
      await first.capture();
      writeFiles(t.project.path, { f: v });
    }
    await first.capture();
    await first.undo();
    const again = t.open();
    expect(again.list().snapshots.map((s) => s.current)).toEqual([false, true, false]);
    await again.undo();
    expect(readTree(t.project.path)).toEqual({ f: "v0" });
    await t.open().redo();
    await t.open().redo();
    expect(readTree(t.project.path)).toEqual({ f: "v2" });
  });

  test("undo past the first snapshot, and redo at the latest, are clear conflicts", async () => {
    await using t = await setup({ f: "a" });
    const snaps = t.open();
    expect(await codeOf(snaps.undo())).toBe("conflict: session s1 has no snapshots: nothing to undo");
    await snaps.capture();
    expect(await codeOf(snaps.undo())).toBe("conflict: nothing to undo: session s1 is at its first snapshot");
    expect(await codeOf(snaps.redo())).toBe(
      "conflict: nothing to redo: session s1 is at its latest snapshot",
    );
  });

  test("a new capture after undo drops the redo branch; an unchanged one keeps it", async () => {
    await using t = await setup({ f: "a" });
    const snaps = t.open();
    await snaps.capture();
    writeFiles(t.project.path, { f: "b" });
    await snaps.capture();
    await snaps.undo();
    expect((await snaps.capture()).captured && (await snaps.capture())).toMatchObject({ isNew: false });
    expect(snaps.list().snapshots).toHaveLength(2); // the same tree: still at 0, redo still there
    writeFiles(t.project.path, { f: "c" });
    await snaps.capture();
    expect(snaps.list().snapshots).toHaveLength(2);
    expect(snaps.list().position).toBe(1);
    expect(await codeOf(snaps.redo())).toMatch(/^conflict: nothing to redo/);
  });

  test("undo keeps changes no snapshot held (redo brings them back); redo refuses to overwrite them", async () => {
    await using t = await setup({ f: "a" });
    const snaps = t.open();
    await snaps.capture();
    writeFiles(t.project.path, { f: "uncaptured" });
    const dry = await snaps.undo({ dryRun: true });
    expect(dry.files).toEqual([{ path: "f", change: "modified" }]);
    expect(readTree(t.project.path)).toEqual({ f: "uncaptured" });
    expect(t.events).toHaveLength(1); // a dry run records nothing
    const undone = await snaps.undo();
    expect(undone.autosaved).toBeString();
    expect(readTree(t.project.path)).toEqual({ f: "a" });
    writeFiles(t.project.path, { f: "again" });
    expect(await codeOf(snaps.redo())).toMatch(/^conflict: the work tree has changes no snapshot holds/);
    writeFiles(t.project.path, { f: "a" });
    await snaps.redo();
    expect(readTree(t.project.path)).toEqual({ f: "uncaptured" });
  });

  test("files over maxFileBytes are left out, and a restore neither writes nor deletes them", async () => {
    await using t = await setup({ small: "s", "data.bin": "x" });
    const snaps = t.open({ maxFileBytes: 100 });
    await snaps.capture();
    const big = "y".repeat(500);
    // data.bin was snapshotted small and has grown past the limit; new.bin is new and big.
    writeFiles(t.project.path, { "data.bin": big, "new.bin": big, small: "s2" });
    const c = await snaps.capture();
    expect(c).toMatchObject({ captured: true, skippedFiles: ["data.bin", "new.bin"] });
    const undone = await snaps.undo();
    expect(undone.files).toEqual([{ path: "small", change: "modified" }]);
    expect(readTree(t.project.path)).toEqual({ small: "s", "data.bin": big, "new.bin": big });
  });

  test("snapshots stay reachable: git gc --prune=now in our store loses none (the redo branch included)", async () => {
    await using t = await setup({ f: "a" });
    const snaps = t.open();
    await snaps.capture();
    writeFiles(t.project.path, { f: "b", g: "g" });
    await snaps.capture();
    await snaps.undo();
    const gitDir = join(snaps.list().location, "git");
    const gc = Bun.spawnSync(["git", "--git-dir", gitDir, "gc", "--quiet", "--prune=now"], {
      stderr: "pipe",
    });
    expect(gc.exitCode).toBe(0);
    await snaps.redo();
    expect(readTree(t.project.path)).toEqual({ f: "b", g: "g" });
  });

  test("nested repositories created since are left out: undo neither deletes nor edits them", async () => {
    await using t = await setup({ "a.txt": "1" });
    const root = t.project.path;
    const snaps = t.open();
    await snaps.capture();
    writeFiles(root, { "a.txt": "2", "vendor/lib/x.c": "x", "fresh/y": "y" });
    userGit(join(root, "vendor/lib"), ["init", "-q"]);
    userGit(join(root, "vendor/lib"), ["add", "-A"]);
    userGit(join(root, "vendor/lib"), ["commit", "-q", "-m", "v"]);
    userGit(join(root, "fresh"), ["init", "-q"]); // no commit: a plain `git add -A` fails on it
    const c = await snaps.capture();
    expect(c).toMatchObject({ captured: true, skippedFiles: ["fresh/", "vendor/lib/"] });
    const undone = await snaps.undo();
    expect(undone.files).toEqual([{ path: "a.txt", change: "modified" }]);
    expect(readTree(root)).toEqual({ "a.txt": "1", "vendor/lib/x.c": "x", "fresh/y": "y" });
    expect(existsSync(join(root, "fresh/.git"))).toBe(true);
  });

  test("sessions on one project keep their own positions", async () => {
    await using t = await setup({ f: "a" });
    const one = t.open({ sessionId: "one" });
    const two = t.open({ sessionId: "two:x@y" });
    await one.capture();
    await two.capture();
    writeFiles(t.project.path, { f: "b" });
    await one.capture();
    expect(one.list().snapshots).toHaveLength(2);
    expect(two.list().snapshots).toHaveLength(1);
  });
});

describe("snapshots: when git cannot help", () => {
  test("git missing: capture records checkpoint.skipped and does not throw; undo says why", async () => {
    await using t = await setup({ f: "a" });
    const snaps = t.open({ git: join(t.home.path, "no-such-git") });
    const r = await snaps.capture("e1");
    expect(r).toMatchObject({ captured: false, reason: "git_missing" });
    expect(t.events).toEqual([{ type: "checkpoint.skipped", reason: "git_missing" }]);
    expect(await codeOf(snaps.undo())).toMatch(/^unavailable: git is not available/);
  });

  test("a broken snapshot store: capture_failed, not a crash", async () => {
    await using t = await setup({ f: "a" });
    const snaps = t.open();
    await snaps.capture();
    const gitDir = join(snaps.list().location, "git");
    rmSync(join(gitDir, "objects"), { recursive: true });
    mkdirSync(join(gitDir, "objects"));
    writeFileSync(join(gitDir, "objects", "info"), "not a directory");
    writeFiles(t.project.path, { f: "b" });
    expect(await snaps.capture()).toMatchObject({ captured: false, reason: "capture_failed" });
    expect(t.events.at(-1)).toEqual({ type: "checkpoint.skipped", reason: "capture_failed" });
  });

  test("a missing project directory is not_found; a bad session id is bad_input", async () => {
    await using home = await tempHome();
    expect(() =>
      createSnapshots({ home: home.path, projectPath: join(home.path, "nope"), sessionId: "s" }),
    ).toThrow(/does not exist/);
    expect(() => createSnapshots({ home: home.path, projectPath: home.path, sessionId: "../x" })).toThrow(
      /bad session id/,
    );
  });
});
