/**
 * Regressions: a restore never removes or overwrites what is in neither snapshot tree, and never
 * touches the freecode home when it lies inside the project.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { FreecodeError } from "../../src/errors.ts";
import type { EventInput } from "../../src/rollout/events.ts";
import { createSnapshots } from "../../src/snapshot/snapshots.ts";
import { runCli, tempDir, tempHome } from "../_helpers.ts";
import { readTree, snapshotPlace, treePaths, userGit, writeFiles } from "./_project.ts";

async function refusal(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (error) {
    expect(error).toBeInstanceOf(FreecodeError);
    expect((error as FreecodeError).code).toBe("conflict");
    return (error as FreecodeError).message;
  }
  throw new Error("expected the restore to be refused");
}

describe("regression: a file's place now a directory holding what no snapshot has", () => {
  test("ignored, oversized and nested-repository content: undo refused, dry run too, nothing touched", async () => {
    await using place = await snapshotPlace();
    const { home, root } = place;
    writeFiles(root, { ".gitignore": "secret.env\n", cache: "file form\n", lib: "file form\n", keep: "1" });
    const snaps = createSnapshots({ home: home.path, projectPath: root, sessionId: "s", maxFileBytes: 100 });
    await snaps.capture();
    // The tool turns both files into directories; then ignored, large and nested-repo content lands there.
    rmSync(join(root, "cache"));
    rmSync(join(root, "lib"));
    writeFiles(root, {
      "cache/x": "x",
      "cache/secret.env": "TOKEN=abc",
      "lib/x": "x",
      "lib/model.bin": "m".repeat(500),
      "lib/vendor/v.c": "v",
      keep: "2",
    });
    userGit(join(root, "lib/vendor"), ["init", "-q"]);
    await snaps.capture();
    const before = readTree(root);

    const dry = await refusal(snaps.undo({ dryRun: true }));
    const real = await refusal(snaps.undo());
    expect(real).toBe(dry);
    expect(real).toMatch(/^undo refused, nothing changed: .* at cache, lib: move them away first$/);
    expect(readTree(root)).toEqual(before);
    expect(existsSync(join(root, "lib/vendor/.git"))).toBe(true);
    expect(snaps.list().position).toBe(1);

    // Once the user moved them away, the same undo goes through (emptied directories give way).
    rmSync(join(root, "cache/secret.env"));
    rmSync(join(root, "lib/model.bin"));
    rmSync(join(root, "lib/vendor"), { recursive: true });
    await snaps.undo();
    expect(readTree(root)).toEqual({
      ".gitignore": "secret.env\n",
      cache: "file form\n",
      lib: "file form\n",
      keep: "1",
    });
  });

  test("a capture after a directory became a file succeeds (it failed on ENOTDIR)", async () => {
    await using home = await tempHome();
    await using project = await tempDir("freecode-project-");
    writeFiles(project.path, { "cache/x": "x" });
    const snaps = createSnapshots({ home: home.path, projectPath: project.path, sessionId: "s" });
    await snaps.capture();
    rmSync(join(project.path, "cache"), { recursive: true });
    writeFiles(project.path, { cache: "now a file" });
    expect(await snaps.capture()).toMatchObject({ captured: true, isNew: true });
    await snaps.undo();
    expect(readTree(project.path)).toEqual({ "cache/x": "x" });
  });

  test("an ignored file where the target needs a directory, or a file of other content: refused", async () => {
    await using place = await snapshotPlace();
    const { home, root } = place;
    writeFiles(root, { "out/a": "a", "notes.txt": "v1" });
    const cli = (args: string[]) => runCli(args, { home: home.path });
    expect(cli(["session", "create", "--id", "s", "--project", root, "--prompt", "go"]).code).toBe(0);
    const snaps = createSnapshots({ home: home.path, projectPath: root, sessionId: "s" });
    await snaps.capture();
    // The tool removes out/ and notes.txt and ignores both names; the user then writes ignored files there.
    rmSync(join(root, "out"), { recursive: true });
    rmSync(join(root, "notes.txt"));
    writeFiles(root, { ".gitignore": "out\nnotes.txt\n" });
    await snaps.capture();
    writeFiles(root, { out: "ignored file", "notes.txt": "mine" });
    const before = readTree(root);
    expect(await refusal(snaps.undo())).toContain("at notes.txt, out:");
    expect(readTree(root)).toEqual(before);
    // The CLI maps the refusal as it maps "nothing to undo": exit 4, one line.
    const undo = cli(["session", "undo", "s"]);
    expect(undo.code).toBe(4);
    expect(undo.stderr.trim().split("\n")).toHaveLength(1);
    expect(undo.stderr).toContain("undo refused, nothing changed");
    expect(readTree(root)).toEqual(before);
    // An ignored file already holding the target's content is no loss: written over, not refused.
    rmSync(join(root, "out"));
    writeFiles(root, { "notes.txt": "v1" });
    await snaps.undo();
    expect(readTree(root)).toEqual({ "out/a": "a", "notes.txt": "v1" });
  });
});

test("what a symlink in the way points at is neither looked at nor touched (redo through it)", async () => {
  await using home = await tempHome();
  await using project = await tempDir("freecode-project-");
  await using outside = await tempDir("freecode-outside-");
  const root = project.path;
  writeFiles(outside.path, { "victim.txt": "theirs" });
  symlinkSync(outside.path, join(root, "out"));
  const snaps = createSnapshots({ home: home.path, projectPath: root, sessionId: "s" });
  await snaps.capture();
  rmSync(join(root, "out"));
  writeFiles(root, { "out/victim.txt": "mine" });
  await snaps.capture();
  await snaps.undo();
  await snaps.redo();
  expect(readTree(root)).toEqual({ "out/victim.txt": "mine" });
  expect(readTree(outside.path)).toEqual({ "victim.txt": "theirs" });
});

describe("regression: a file the target snapshot ignored is not deleted by the restore", () => {
  test(".env ignored at the target, tracked since (the tool edited .gitignore): undo keeps it", async () => {
    await using place = await snapshotPlace();
    const { home, root } = place;
    writeFiles(root, { ".gitignore": ".env\nlogs/\n", ".env": "SECRET=1\n", "app.js": "code\n" });
    const snaps = createSnapshots({ home: home.path, projectPath: root, sessionId: "s" });
    await snaps.capture();
    writeFiles(root, {
      ".gitignore": "node_modules\n",
      "logs/today.log": "created since, ignored then\n",
      "b.js": "b",
    });
    await snaps.capture();
    const undone = await snaps.undo();
    expect(undone.files.map((f) => `${f.change} ${f.path}`).sort()).toEqual([
      "deleted b.js",
      "modified .gitignore",
    ]);
    expect(readTree(root)).toEqual({
      ".gitignore": ".env\nlogs/\n",
      ".env": "SECRET=1\n",
      "app.js": "code\n",
      "logs/today.log": "created since, ignored then\n",
    });
    // Back at the target, the kept files are ignored again: the work tree is the snapshot, redo is free.
    await snaps.redo();
    expect(readTree(root)[".env"]).toBe("SECRET=1\n");
    expect(readTree(root)["b.js"]).toBe("b");
  });
});

describe("regression: a freecode home inside the project", () => {
  test("is never snapshotted nor restored, even when the project's .gitignore re-includes it", async () => {
    await using project = await tempDir("freecode-project-");
    const root = project.path;
    const home = join(root, ".freecode");
    mkdirSync(home);
    writeFiles(root, { "notes.txt": "v1\n", ".freecode/config.json": "{}\n" });
    for (const gitignore of ["", "!.freecode/\n"]) {
      writeFiles(root, { ".gitignore": gitignore });
      const snaps = createSnapshots({ home, projectPath: root, sessionId: `s${gitignore.length}` });
      await snaps.capture();
      writeFiles(root, { "notes.txt": "v2\n" });
      await snaps.capture();
      const { location, snapshots } = snaps.list();
      for (const s of snapshots) expect(treePaths(location, s.snapshot)).toEqual([".gitignore", "notes.txt"]);
      const undone = await snaps.undo();
      expect(undone.files).toEqual([{ path: "notes.txt", change: "modified" }]);
      expect(readFileSync(join(root, "notes.txt"), "utf8")).toBe("v1\n");
      expect(readFileSync(join(home, "config.json"), "utf8")).toBe("{}\n");
      await snaps.redo();
      expect(snaps.list().position).toBe(1);
      writeFiles(root, { "notes.txt": "v1\n" });
    }
  });
});

describe("regression: a project that is the freecode home, or lies inside it", () => {
  test("is refused: capture is skipped with project_in_home, undo and the CLI exit 2, nothing is created", async () => {
    await using home = await tempHome();
    const inside = join(home.path, "work");
    mkdirSync(inside);
    const cli = (args: string[]) => runCli(args, { home: home.path });
    for (const project of [home.path, inside]) {
      const id = `s${project.length}`;
      expect(cli(["session", "create", "--id", id, "--project", project, "--prompt", "go"]).code).toBe(0);
      const events: EventInput[] = [];
      const snaps = createSnapshots({
        home: home.path,
        projectPath: project,
        sessionId: id,
        record: (e) => events.push(e),
      });
      const r = await snaps.capture();
      expect(r).toMatchObject({ captured: false, reason: "project_in_home" });
      expect(!r.captured && r.error.message).toMatch(
        /(is the freecode home|lies inside the freecode home \S+): it cannot be snapshotted/,
      );
      expect(events).toEqual([{ type: "checkpoint.skipped", reason: "project_in_home" }]);
      let undo: unknown;
      await snaps.undo().catch((error) => {
        undo = error;
      });
      expect((undo as FreecodeError).code).toBe("bad_input");
      const snapshot = cli(["session", "snapshot", id]);
      expect(snapshot.code).toBe(2);
      expect(snapshot.stderr).toContain("it cannot be snapshotted");
      expect(cli(["session", "undo", id]).code).toBe(2);
      expect(existsSync(join(home.path, "snapshots"))).toBe(false);
    }
  });
});

describe("regression: what the work tree holds now that a snapshot left out, or cannot be read past", () => {
  test("a nested repository made where the target has files: undo refused, naming it (it was skipped unsaid, the restore called done)", async () => {
    await using place = await snapshotPlace();
    const { home, root } = place;
    writeFiles(root, { "lib/x.js": "orig", "a.txt": "a" });
    const snaps = createSnapshots({ home: home.path, projectPath: root, sessionId: "s" });
    await snaps.capture();
    rmSync(join(root, "lib"), { recursive: true });
    await snaps.capture();
    writeFiles(root, { "lib/x.js": "mine" });
    userGit(join(root, "lib"), ["init", "-q"]);
    const before = readTree(root);
    expect(await refusal(snaps.undo())).toMatch(
      /^undo refused, nothing changed: .* at lib: move them away first$/,
    );
    expect(readTree(root)).toEqual(before);
    expect(snaps.list().position).toBe(1);
  });

  test("a directory replaced by a looping link: capture and undo go on (ELOOP failed both)", async () => {
    await using place = await snapshotPlace();
    const { home, root } = place;
    writeFiles(root, { "build/out.js": "o", "a.txt": "a" });
    const snaps = createSnapshots({ home: home.path, projectPath: root, sessionId: "s" });
    await snaps.capture();
    rmSync(join(root, "build"), { recursive: true });
    symlinkSync("build2", join(root, "build"));
    symlinkSync("build", join(root, "build2"));
    expect(await snaps.capture()).toMatchObject({ captured: true });
    await snaps.undo();
    expect(readTree(root)).toEqual({ "a.txt": "a", "build/out.js": "o" });
  });

  test("a force-tracked file beyond a link that replaced its directory: capture and undo go on, nothing written through the link", async () => {
    await using place = await snapshotPlace();
    await using outside = await tempDir("freecode-outside-");
    const { home, root } = place;
    writeFiles(root, { ".gitignore": "*.log\n", "d/f.log": "a" });
    userGit(root, ["init", "-q"]);
    userGit(root, ["add", ".gitignore"]);
    userGit(root, ["add", "-f", "d/f.log"]);
    userGit(root, ["commit", "-qm", "c"]);
    const snaps = createSnapshots({ home: home.path, projectPath: root, sessionId: "s" });
    await snaps.capture();
    writeFiles(outside.path, { "f.log": "precious" });
    rmSync(join(root, "d"), { recursive: true });
    symlinkSync(outside.path, join(root, "d"));
    expect(await snaps.capture()).toMatchObject({ captured: true });
    await snaps.undo();
    expect(readFileSync(join(outside.path, "f.log"), "utf8")).toBe("precious");
    expect(readFileSync(join(root, "d/f.log"), "utf8")).toBe("a");
  });
});
