/** `store verify --repair` where the machine refuses a repair: said on that problem, the rest go on. */
import { expect, test } from "bun:test";
import { appendFileSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import factory from "../../src/storage/adapters/files.ts";
import { verifyStore } from "../../src/storage/verify.ts";
import { tempHome } from "../_helpers.ts";
import { makeMeta, msg } from "./contract.ts";

const log = (home: string, id: string) =>
  join(home, "sessions", "home__a__my_h_project", id, "messages.jsonl");

test("a torn tail whose lock cannot be made is reported not repaired; verify goes on to the others", async () => {
  await using home = await tempHome();
  const a = factory({ home: home.path, fsync: "never" });
  for (const id of ["v1", "v2"]) {
    await a.createSession(makeMeta({ id }), [msg("m1")]);
    appendFileSync(log(home.path, id), '{"id":"m2","ro');
  }
  // A temp file of a rewrite whose process died: a repair that needs no lock.
  const stale = join(home.path, "state", "store.json.999999.1.tmp");
  writeFileSync(stale, "{}");
  // Where the locks go is a plain file: no lock can be taken (a repair cut without one raced writers).
  const locks = join(home.path, "state", "locks");
  rmSync(locks, { recursive: true, force: true });
  writeFileSync(locks, "not a directory");
  const report = await verifyStore(a, home.path, true);
  expect(report.ok).toBe(false);
  const torn = report.problems.filter((p) => p.kind === "torn_line");
  expect(torn).toHaveLength(2);
  for (const p of torn) {
    expect(p.repaired).toBe(false);
    expect(p.detail).toContain("(not repaired: EEXIST");
  }
  expect(report.problems.find((p) => p.kind === "stale_temp")).toMatchObject({ repaired: true });
  for (const id of ["v1", "v2"]) expect(readFileSync(log(home.path, id), "utf8")).toEndWith('"ro');
  rmSync(locks);
  const again = await verifyStore(a, home.path, true);
  expect(again.problems.filter((p) => p.kind === "torn_line").map((p) => p.repaired)).toEqual([true, true]);
  expect((await verifyStore(a, home.path)).ok).toBe(true);
  await a.close();
});
