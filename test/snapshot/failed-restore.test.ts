/**
 * Regressions: a restore that git fails part-way. It deleted files first and then failed to write,
 * losing the user's uncaptured work; the autosave holding that work was on the ref but not in the
 * state file; a retry then called the restore's own half-done work "changes no snapshot holds".
 * Now the autosave is recorded before the tree is touched, a failed restore is rolled back, and one
 * that cannot be rolled back is recorded as interrupted, to be finished by running it again.
 */
import { describe, expect, test } from "bun:test";
import { rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { EventInput } from "../../src/rollout/events.ts";
import { RestoreFailedError } from "../../src/snapshot/restore.ts";
import { createSnapshots } from "../../src/snapshot/snapshots.ts";
import { runCli } from "../_helpers.ts";
import { failure, gitFailing, readTree, snapshotPlace, writeFiles } from "./_project.ts";

/**
 * A git that fails `checkout-index` while `flag` exists: `before` fails it without writing,
 * once (the flag goes); `after` writes, then fails, every time.
 */
function flakyGit(dir: string, flag: string, mode: "before" | "after"): string {
  const fail =
    mode === "before"
      ? `rm -f "${flag}"; echo "error: injected failure" >&2; exit 1`
      : `git "$@"; echo "error: injected failure" >&2; exit 1`;
  return gitFailing(dir, flag, fail);
}

/** Whether `chattr +i` works here (root on a file system that supports it). */
const chattrWorks = (() => {
  const probe = join(tmpdir(), `freecode-chattr-${process.pid}`);
  writeFileSync(probe, "");
  const set = Bun.spawnSync(["chattr", "+i", probe], { stderr: "pipe" }).exitCode === 0;
  if (set) Bun.spawnSync(["chattr", "-i", probe]);
  rmSync(probe, { force: true });
  return set;
})();
const chattr = (flag: "+i" | "-i", path: string) => Bun.spawnSync(["chattr", flag, path]);

describe("regression: a restore that fails part-way", () => {
  test("is rolled back: the user's work is back, the autosave is in the list, a retry goes through", async () => {
    await using place = await snapshotPlace();
    const { home, bin, root } = place;
    const flag = join(bin.path, "fail");
    const events: EventInput[] = [];
    const git = flakyGit(bin.path, flag, "before");
    const snaps = createSnapshots({
      home: home.path,
      projectPath: root,
      sessionId: "s",
      git,
      record: (e) => events.push(e),
    });
    writeFiles(root, { "a.txt": "v1" });
    await snaps.capture("c0");
    writeFiles(root, { "a.txt": "v2" });
    await snaps.capture("c1");
    // Work no snapshot holds; then git fails to write, after the restore deleted new.txt.
    writeFiles(root, { "a.txt": "mine", "new.txt": "precious" });
    const mine = readTree(root);
    writeFileSync(flag, "");
    events.length = 0;

    const error = await failure(snaps.undo());
    expect(error).toBeInstanceOf(RestoreFailedError);
    expect(error.code).toBe("internal");
    expect(error.message).toMatch(
      /^undo to snapshot \w{12} failed and was rolled back: the 2 files it was changing are as they were before it, nothing else was touched; the position has not moved/,
    );
    expect(error.message).toContain("run undo again");
    expect(readTree(root)).toEqual(mine);
    // The autosave is listed just after the position, which has not moved, recorded as a capture;
    // nothing was restored.
    const list = snaps.list();
    expect(list.snapshots.map((s) => s.entryId)).toEqual(["c0", "c1", undefined]);
    expect(list.position).toBe(1);
    expect(events.map((e) => e.type)).toEqual(["checkpoint.captured"]);

    // The retry reaches the same snapshot, reusing the autosave (not listed twice); redo brings the work back.
    const retry = await snaps.undo();
    expect(retry.entryId).toBe("c1");
    expect(retry.autosaved).toBe(list.snapshots[2]!.snapshot);
    expect(snaps.list().snapshots).toHaveLength(3);
    expect(readTree(root)).toEqual({ "a.txt": "v2" });
    await snaps.redo();
    expect(readTree(root)).toEqual(mine);
  });

  test("that cannot be rolled back is recorded as interrupted: capture and undo say so, redo finishes it", async () => {
    await using place = await snapshotPlace();
    const { home, bin, root } = place;
    const flag = join(bin.path, "fail");
    const git = flakyGit(bin.path, flag, "after");
    const snaps = createSnapshots({ home: home.path, projectPath: root, sessionId: "s", git });
    writeFiles(root, { "a.txt": "v1" });
    await snaps.capture("c0");
    writeFiles(root, { "a.txt": "v2", "b.txt": "new" });
    await snaps.capture("c1");
    await snaps.undo();
    writeFileSync(flag, "");

    const error = await failure(snaps.redo());
    expect(error.message).toMatch(
      /^redo to snapshot \w{12} failed part-way, and could not be rolled back: the work tree is between snapshots/,
    );
    expect(error.message).toContain("run redo again to finish it");
    const interrupted = /was interrupted: .* run redo again to finish it$/;
    const capture = await snaps.capture();
    expect(capture).toMatchObject({ captured: false, reason: "restore_interrupted" });
    expect(!capture.captured && capture.error.message).toMatch(interrupted);
    const undo = await failure(snaps.undo());
    expect(undo.code).toBe("conflict");
    expect(undo.message).toMatch(interrupted);
    expect(snaps.list().snapshots.map((s) => s.entryId)).toEqual(["c0", "c1"]);

    rmSync(flag);
    const redo = await snaps.redo();
    expect(redo).toMatchObject({ entryId: "c1", position: 1, resumed: true });
    expect(readTree(root)).toEqual({ "a.txt": "v2", "b.txt": "new" });
    expect(await snaps.capture()).toMatchObject({ captured: true, isNew: false });
    await snaps.undo();
    expect(readTree(root)).toEqual({ "a.txt": "v1" });
  });

  test.skipIf(!chattrWorks)(
    "an immutable file (chattr +i): the CLI's redo exits 70, rolled back, retried",
    async () => {
      await using place = await snapshotPlace();
      const { home, root } = place;
      const cli = (args: string[]) => runCli(args, { home: home.path });
      expect(cli(["session", "create", "--id", "s", "--project", root, "--prompt", "go"]).code).toBe(0);
      const snaps = createSnapshots({ home: home.path, projectPath: root, sessionId: "s" });
      writeFiles(root, { "a.txt": "v0", "lock.txt": "L0" });
      await snaps.capture("c0");
      writeFiles(root, { "a.txt": "v1", "lock.txt": "L1", "feature.txt": "a day of work" });
      await snaps.capture("c1");
      await snaps.undo();
      const lock = join(root, "lock.txt");
      chattr("+i", lock);
      try {
        const redo = cli(["session", "redo", "s"]);
        expect(redo.code).toBe(70);
        expect(redo.stderr).toContain(
          "failed and was rolled back: the 3 files it was changing are as they were",
        );
        expect(readTree(root)).toEqual({ "a.txt": "v0", "lock.txt": "L0" });
        expect(snaps.list().position).toBe(0);
      } finally {
        chattr("-i", lock);
      }
      const retry = cli(["session", "redo", "s"]);
      expect(retry.code).toBe(0);
      expect(readTree(root)).toEqual({ "a.txt": "v1", "lock.txt": "L1", "feature.txt": "a day of work" });
    },
  );
});
