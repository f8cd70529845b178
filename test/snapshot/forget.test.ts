/**
 * Erasing a session erases its git snapshots: `session delete --purge` forgets its set, `freecode gc`
 * the sets of the sessions it removes (and, asked to, those of sessions the store does not hold,
 * past the grace: another store in the home, or an agent that snapshots before it stores anything,
 * may own them), and the store of a project goes with its last set while another session's
 * snapshots on the same project stay restorable.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, statSync, utimesSync } from "node:fs";
import { join } from "node:path";
import { forgetSnapshots, snapshotSets } from "../../src/snapshot/forget.ts";
import { createSnapshots } from "../../src/snapshot/snapshots.ts";
import { acquireLock } from "../../src/util/lock.ts";
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

  test("regression: session.delete {purge} over serve --stdio left the snapshots behind (HTTP did not)", async () => {
    await using home = await tempHome();
    await using project = await tempDir("freecode-project-");
    const cli = (args: string[], stdin?: string) => runCli(args, { home: home.path, stdin });
    expect(cli(["session", "create", "--id", "rpc1", "--project", project.path, "--prompt", "go"]).code).toBe(
      0,
    );
    await twoSnapshots(home.path, project.path, "rpc1", "r.txt");
    const call = { jsonrpc: "2.0", id: 1, method: "session.delete", params: { id: "rpc1", purge: true } };
    const r = cli(["serve", "--stdio"], `${JSON.stringify(call)}\n`);
    expect(JSON.parse(r.stdout).result).toEqual({ id: "rpc1", purged: true });
    expect(snapshotSets(home.path)).toEqual([]);
  });

  test("gc removes the sets of the sessions it removes; sets of unstored sessions only with --prune-snapshots, past the grace", async () => {
    await using home = await tempHome();
    await using project = await tempDir("freecode-project-");
    const cli = (args: string[]) => runCli(args, { home: home.path });
    for (const id of ["stored", "gone"])
      expect(cli(["session", "create", "--id", id, "--project", project.path, "--prompt", "go"]).code).toBe(
        0,
      );
    expect(cli(["session", "archive", "gone"]).code).toBe(0);
    for (const id of ["stored", "gone", "orphan", "fresh"])
      await twoSnapshots(home.path, project.path, id, `${id}.txt`);
    // `orphan` (never stored here: another store, or a library agent) was last snapshotted two hours
    // ago; `fresh` just now.
    const orphan = snapshotSets(home.path).find((s) => s.sessionId === "orphan")!;
    const state = join(orphan.root, "sessions", `${Buffer.from("orphan").toString("hex")}.json`);
    const old = new Date(Date.now() - 2 * 3600_000);
    utimesSync(state, old, old);
    const sets = () =>
      snapshotSets(home.path)
        .map((s) => s.sessionId)
        .sort();
    type Report = { snapshots: unknown; sessions: { id: string; result: string }[] };
    const gc = (...args: string[]) =>
      parseJson<Report>(cli(["gc", "--archived-max-age-days", "0", "--json", ...args]));

    const warn = gc();
    expect(warn.snapshots).toEqual({ removed: ["gone"], unstored: ["orphan"], failed: [] });
    expect(sets()).toEqual(["fresh", "gone", "orphan", "stored"]);

    const enforced = gc("--enforce");
    expect(enforced.sessions.map((s) => [s.id, s.result])).toEqual([["gone", "removed"]]);
    expect(enforced.snapshots).toEqual({ removed: ["gone"], unstored: ["orphan"], failed: [] });
    expect(sets()).toEqual(["fresh", "orphan", "stored"]);
    expect(cli(["gc", "--enforce"]).stderr).toContain(
      "git snapshots of 1 session this store does not hold: kept (--prune-snapshots removes them): orphan",
    );

    // The dry run (and warn mode) with --prune-snapshots shows what enforce then does.
    const preview = gc("--dry-run", "--prune-snapshots");
    expect(preview.snapshots).toEqual({ removed: ["orphan"], unstored: [], failed: [] });
    expect(gc("--prune-snapshots").snapshots).toEqual({ removed: ["orphan"], unstored: [], failed: [] });
    expect(sets()).toEqual(["fresh", "orphan", "stored"]);
    const said = cli(["gc", "--dry-run", "--prune-snapshots"]).stderr;
    expect(said).toContain(
      "would remove the git snapshots of 1 session this store does not hold (--prune-snapshots): orphan",
    );
    expect(said).not.toContain("kept");
    const pruned = gc("--enforce", "--prune-snapshots");
    expect(pruned.snapshots).toEqual({ removed: ["orphan"], unstored: [], failed: [] });
    expect(sets()).toEqual(["fresh", "stored"]);
    expect(existsSync(state)).toBe(false);
  });

  test("regression: forgetting a session prunes nothing another session staged but has not committed", async () => {
    await using home = await tempHome();
    await using project = await tempDir("freecode-project-");
    await twoSnapshots(home.path, project.path, "A", "a.txt");
    const b = await twoSnapshots(home.path, project.path, "B", "b.txt");
    // B's dry-run undo stages an uncaptured edit into B's index: its blob is in no commit yet.
    writeFiles(project.path, { "b.txt": "uncaptured\n" });
    // Older than the index: git trusts the stat data it stages and would not hash the file again.
    const older = new Date(Date.now() - 3 * 3600_000);
    utimesSync(join(project.path, "b.txt"), older, older);
    expect((await b.undo({ dryRun: true })).autosaved).toBeString();
    // Two hours pass: every object is older than any prune grace.
    const objects = join(b.list().location, "git", "objects");
    const old = new Date(Date.now() - 2 * 3600_000);
    const age = (dir: string): void => {
      for (const name of readdirSync(dir)) {
        const p = join(dir, name);
        if (statSync(p).isDirectory()) age(p);
        else utimesSync(p, old, old);
      }
    };
    age(objects);
    expect(await forgetSnapshots(home.path, "A")).toBe(1);
    expect(await b.capture("b2")).toMatchObject({ captured: true, isNew: true });
    await b.undo();
    expect(readTree(project.path)["b.txt"]).toBe("two\n");
  });
});

describe("regression: forgetting the last set while another session's first capture runs", () => {
  test("the store stays while a session holds its snapshot lock; concurrent first captures all succeed", async () => {
    await using home = await tempHome();
    await using project = await tempDir("freecode-project-");
    await twoSnapshots(home.path, project.path, "gone", "g.txt");
    const [set] = snapshotSets(home.path);
    // Another session's first capture is under way: it holds its lock, has no state file yet.
    const lock = acquireLock(join(set!.root, "sessions", `${Buffer.from("next").toString("hex")}.lock`));
    try {
      expect(await forgetSnapshots(home.path, "gone")).toBe(1);
      expect(existsSync(join(set!.root, "git", "HEAD"))).toBe(true);
    } finally {
      lock.release();
    }
    expect(await forgetSnapshots(home.path, "next")).toBe(0);

    // Fresh store: first captures race to create it (git init failed: "could not lock config file").
    await using fresh = await tempHome();
    const results = await Promise.all(
      ["a", "b", "c", "d"].map((id) =>
        createSnapshots({ home: fresh.path, projectPath: project.path, sessionId: id }).capture(),
      ),
    );
    expect(results.map((r) => r.captured)).toEqual([true, true, true, true]);
  });
});
