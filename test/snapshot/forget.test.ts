/**
 * Erasing a session erases its git snapshots: `session delete --purge` forgets its set, `freecode gc`
 * forgets sets of sessions the store no longer holds (past the grace, so a session snapshotted
 * before its first message is stored keeps its set), and the store of a project goes with its last
 * set while another session's snapshots on the same project stay restorable.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, utimesSync } from "node:fs";
import { join } from "node:path";
import { forgetSnapshots, snapshotSets } from "../../src/snapshot/forget.ts";
import { createSnapshots } from "../../src/snapshot/snapshots.ts";
import { parseJson, runCli, tempDir, tempHome } from "../_helpers.ts";
import { readTree, writeFiles } from "./_project.ts";

async function twoSnapshots(home: string, project: string, sessionId: string, file: string) {
  const snaps = createSnapshots({ home, projectPath: project, sessionId });
  writeFiles(project, { [file]: "one\n" });
  await snaps.capture("a");
  writeFiles(project, { [file]: "two\n" });
  await snaps.capture("b");
  return snaps;
}

describe("forgetting snapshots", () => {
  test("a purge forgets the session's set; the other session's set on the project still undoes", async () => {
    await using home = await tempHome();
    await using project = await tempDir("freecode-project-");
    const cli = (args: string[]) => runCli(args, { home: home.path });
    for (const id of ["keep:1", "gone@2"])
      expect(cli(["session", "create", "--id", id, "--project", project.path, "--prompt", "go"]).code).toBe(
        0,
      );
    const keep = await twoSnapshots(home.path, project.path, "keep:1", "k.txt");
    await twoSnapshots(home.path, project.path, "gone@2", "g.txt");
    expect(
      snapshotSets(home.path)
        .map((s) => s.sessionId)
        .sort(),
    ).toEqual(["gone@2", "keep:1"]);

    const purged = cli(["session", "delete", "gone@2", "--purge"]);
    expect(purged.code).toBe(0);
    expect(purged.stderr).toContain("removed the git snapshots of gone@2");
    expect(snapshotSets(home.path).map((s) => s.sessionId)).toEqual(["keep:1"]);
    // The shared store is intact for the session that stays: its trees still restore (the first
    // undo saves the other session's changes it finds in the work tree, the second goes back).
    await keep.undo();
    expect((await keep.undo()).filesChanged).toBeGreaterThan(0);
    expect(readTree(project.path)["k.txt"]).toBe("one\n");

    // The last set takes the project's store with it.
    expect(await forgetSnapshots(home.path, "keep:1")).toBe(1);
    expect(readdirSync(join(home.path, "snapshots"))).toEqual([]);
    expect(await forgetSnapshots(home.path, "keep:1")).toBe(0);
  });

  test("gc forgets the sets of sessions no longer stored, past the grace; warn mode only says so", async () => {
    await using home = await tempHome();
    await using project = await tempDir("freecode-project-");
    const cli = (args: string[]) => runCli(args, { home: home.path });
    expect(
      cli(["session", "create", "--id", "stored", "--project", project.path, "--prompt", "go"]).code,
    ).toBe(0);
    await twoSnapshots(home.path, project.path, "stored", "s.txt");
    await twoSnapshots(home.path, project.path, "orphan", "o.txt");
    await twoSnapshots(home.path, project.path, "fresh", "f.txt");
    // `orphan` was last snapshotted two hours ago; `fresh` (not stored yet either) just now.
    const sets = snapshotSets(home.path);
    const orphan = sets.find((s) => s.sessionId === "orphan")!;
    const state = join(orphan.root, "sessions", `${Buffer.from("orphan").toString("hex")}.json`);
    const old = new Date(Date.now() - 2 * 3600_000);
    utimesSync(state, old, old);

    const warn = cli(["gc", "--json"]);
    expect(warn.code).toBe(0);
    expect(parseJson<{ orphanedSnapshots: unknown }>(warn).orphanedSnapshots).toEqual({
      sessions: ["orphan"],
      removed: 0,
    });
    expect(warn.stderr).toContain("would remove the git snapshots of 1 session no longer stored");
    expect(snapshotSets(home.path)).toHaveLength(3);

    const enforced = parseJson<{ orphanedSnapshots: unknown }>(cli(["gc", "--enforce", "--json"]));
    expect(enforced.orphanedSnapshots).toEqual({ sessions: ["orphan"], removed: 1 });
    expect(
      snapshotSets(home.path)
        .map((s) => s.sessionId)
        .sort(),
    ).toEqual(["fresh", "stored"]);
    expect(existsSync(state)).toBe(false);
  });
});
