/** The export store's sweep: expired uploads and its own crashed writes go, nothing else in `remote/`. */
import { expect, test } from "bun:test";
import { mkdirSync, readdirSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { remoteExports } from "../../src/serve/remote-exports.ts";
import { tempDir } from "../_helpers.ts";

test("regression: the sweep removes its own stale temp files only (a user's notes.tmp went too)", async () => {
  await using home = await tempDir();
  const dir = join(home.path, "remote");
  mkdirSync(dir);
  const key = "a".repeat(43);
  const old = new Date(Date.now() - 2 * 3600_000);
  const names = [`${key}.json.1234.1.tmp`, "notes.tmp", "keep.txt", `${"b".repeat(43)}.json.9.tmp`];
  for (const name of names) {
    writeFileSync(join(dir, name), "x");
    utimesSync(join(dir, name), old, old);
  }
  const store = remoteExports({ dir, ttlMs: 60_000, fsync: false });
  store.sweep();
  expect(readdirSync(dir).sort()).toEqual(["keep.txt", "notes.tmp", `${"b".repeat(43)}.json.9.tmp`].sort());
});
