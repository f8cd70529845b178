/**
 * Finding sessions by id in the files adapter once a process has looked up many (it then keeps a map
 * of every session, kept current from the sessions journal and new project directories): what
 * another process writes, moves or deletes is seen; a session copied in by hand under a new project
 * directory is found; the journal rotated away means a fresh look at the directories.
 */
import { expect, test } from "bun:test";
import { cpSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import factory from "../../src/storage/adapters/files.ts";
import type { StorageAdapter } from "../../src/storage/contract.ts";
import { tempHome } from "../_helpers.ts";
import { makeMeta, msg } from "./contract.ts";

/** Enough lookups of ids that do not exist for `a` to keep its map. */
async function warm(a: StorageAdapter): Promise<void> {
  for (let i = 0; i < 3; i++) expect(await a.getMeta(`missing-${i}`)).toBeUndefined();
}

const project = (p: number) => `/work/project-${p}`;

test("another process's new, moved and deleted sessions are seen by a locator that keeps a map", async () => {
  await using home = await tempHome();
  const a = factory({ home: home.path, fsync: "never" });
  const b = factory({ home: home.path, fsync: "never" }); // its own locator, as another process has
  for (let p = 0; p < 20; p++)
    await a.createSession(makeMeta({ id: `old-${p}`, projectPath: project(p) }), []);
  await warm(a);
  expect((await a.getMeta("old-7"))?.projectPath).toBe(project(7));

  await b.createSession(makeMeta({ id: "from-b", projectPath: project(3) }), [msg("m1")]);
  await b.createSession(makeMeta({ id: "new-project", projectPath: "/work/elsewhere" }), []);
  expect((await a.getMeta("from-b"))?.projectPath).toBe(project(3));
  expect(await a.getMeta("new-project")).toBeDefined();
  await a.appendMessages("from-b", [msg("m2")]);
  expect((await b.readMessages("from-b")).messages.map((m) => m.id)).toEqual(["m1", "m2"]);

  // The same id in another project: refused, whichever process asks.
  await expect(a.createSession(makeMeta({ id: "from-b", projectPath: project(9) }), [])).rejects.toThrow(
    /already exists/,
  );
  expect(await b.purgeSession("old-5")).toBe(true);
  expect(await a.getMeta("old-5")).toBeUndefined();
  await a.close();
  await b.close();
});

test("a session copied in by hand under a new project directory is found; the journal rotated away is survived", async () => {
  await using home = await tempHome();
  await using other = await tempHome();
  const a = factory({ home: home.path, fsync: "never" });
  await a.createSession(makeMeta({ id: "first", projectPath: project(1) }), []);
  for (let i = 0; i < 5; i++)
    await a.createSession(makeMeta({ id: `more-${i}`, projectPath: project(2) }), []);
  await warm(a);

  const c = factory({ home: other.path, fsync: "never" });
  await c.createSession(makeMeta({ id: "copied", projectPath: "/work/copied-project" }), [msg("m1")]);
  await c.close();
  const [key] = readdirSync(join(other.path, "sessions"));
  cpSync(join(other.path, "sessions", key!), join(home.path, "sessions", key!), { recursive: true });
  expect((await a.getMeta("copied"))?.projectPath).toBe("/work/copied-project");

  // The journal goes (rotated by the listing index, past 8 MiB); another process starts a new one,
  // shorter than what was read of the old.
  rmSync(join(home.path, "state", "sessions-journal.jsonl"));
  const b = factory({ home: home.path, fsync: "never" });
  await b.createSession(makeMeta({ id: "after-rotation", projectPath: project(1) }), []);
  expect(await a.getMeta("after-rotation")).toBeDefined();
  expect(await a.getMeta("first")).toBeDefined();
  await a.close();
  await b.close();
});

test("many projects: a hundred sessions looked up, then created, one after another: all stored and listed", async () => {
  await using home = await tempHome();
  const a = factory({ home: home.path, fsync: "never" });
  for (let p = 0; p < 150; p++)
    await a.createSession(makeMeta({ id: `p-${p}`, projectPath: project(p) }), []);
  for (let i = 0; i < 100; i++) {
    expect(await a.getMeta(`n-${i}`)).toBeUndefined();
    await a.createSession(makeMeta({ id: `n-${i}`, projectPath: project(1000) }), []);
  }
  const b = factory({ home: home.path, fsync: "never" });
  const listed = await b.listSessions({ limit: 1000 });
  expect(listed.total).toBe(250);
  await a.close();
  await b.close();
});
