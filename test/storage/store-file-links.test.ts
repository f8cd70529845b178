/**
 * A store file replaced by a symbolic link or a FIFO: never written through, never written into.
 * The link's target (outside the home) had its tail cut and lines appended; a FIFO took the lines
 * (counted in the meta, gone) and failed at the fsync with a stack trace.
 */
import { expect, test } from "bun:test";
import { closeSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import factory from "../../src/storage/adapters/files.ts";
import { verifyStore } from "../../src/storage/verify.ts";
import { openStoreFile } from "../../src/util/store-file-open.ts";
import { tempDir, tempHome } from "../_helpers.ts";
import { makeMeta, msg } from "./contract.ts";

const log = (home: string, id: string) =>
  join(home, "sessions", "home__a__my_h_project", id, "messages.jsonl");

test("regression: a message log that is a link to a file outside the home is neither cut nor appended to", async () => {
  await using home = await tempHome();
  await using outside = await tempDir();
  const notes = join(outside.path, "notes.txt");
  const text = "line one of an unrelated file\nunterminated tail";
  writeFileSync(notes, text);
  const a = factory({ home: home.path, fsync: "never" });
  await a.createSession(makeMeta({ id: "l1" }), [msg("m1")]);
  rmSync(log(home.path, "l1"));
  symlinkSync(notes, log(home.path, "l1"));
  await expect(a.appendMessages("l1", [msg("m2")])).rejects.toMatchObject({ code: "ESYMLINK" });
  const report = await verifyStore(a, home.path, true);
  expect(report.problems.find((p) => p.kind === "torn_line")).toMatchObject({ repaired: false });
  expect(readFileSync(notes, "utf8")).toBe(text);
  await a.close();
});

test("regression: a message log that is a FIFO is refused, and the meta counts nothing more", async () => {
  await using home = await tempHome();
  const a = factory({ home: home.path, fsync: "batch" });
  await a.createSession(makeMeta({ id: "f1" }), [msg("m1")]);
  rmSync(log(home.path, "f1"));
  expect(Bun.spawnSync(["mkfifo", log(home.path, "f1")]).exitCode).toBe(0);
  await expect(a.appendMessages("f1", [msg("m2")])).rejects.toMatchObject({ code: "EFTYPE" });
  expect((await a.getMeta("f1"))?.messageCount).toBe(1);
  // Read: refused at once (it waited for a writer to the pipe, for ever).
  await expect(a.readMessages("f1")).rejects.toMatchObject({ code: "EFTYPE" });
  await a.close();
});

test("openStoreFile opens regular files only, never through a link", async () => {
  await using dir = await tempDir();
  const file = join(dir.path, "f");
  writeFileSync(file, "x");
  symlinkSync(file, join(dir.path, "link"));
  expect(() => openStoreFile(join(dir.path, "link"), "append")).toThrow("ESYMLINK");
  expect(() => openStoreFile(dir.path, "update")).toThrow();
  closeSync(openStoreFile(join(dir.path, "new"), "append"));
});
