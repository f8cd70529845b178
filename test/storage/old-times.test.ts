/**
 * Times past what a `Date` holds are refused where records enter, not where they are read: data an
 * older version stored with such a time (it accepted `"timestamp": 1e16`) still reads, and one such
 * session made a whole json store unreadable when the read path refused it (final read review).
 */
import { expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { StorageAdapter } from "../../src/storage/contract.ts";
import { openStore } from "../../src/storage/select.ts";
import { tempHome } from "../_helpers.ts";
import { makeMeta, msg } from "./contract.ts";

/** Rewrite every number after `"key":` in `file` that equals `from` to `to`. */
function patch(file: string, key: string, from: number, to: string): void {
  const text = readFileSync(file, "utf8");
  const next = text.replaceAll(`"${key}":${from}`, `"${key}":${to}`);
  expect(next).not.toBe(text);
  writeFileSync(file, next);
}

for (const name of ["files", "json"] as const)
  test(`${name}: a session stored with a time past a date's range still reads, beside the others`, async () => {
    await using home = await tempHome();
    const open = async () =>
      (await openStore(name, { home: home.path, fsync: "never" })).adapter as StorageAdapter;
    let a = await open();
    await a.createSession(makeMeta({ id: "old", createdAt: 1_700_000_000_000 }), [
      msg("m1", "user", { timestamp: 1_700_000_000_001 }),
    ]);
    await a.createSession(makeMeta({ id: "good" }), [msg("m1")]);
    await a.close();
    const file =
      name === "json"
        ? join(home.path, "state", "store.json")
        : new Bun.Glob("sessions/*/old/messages.jsonl").scanSync({ cwd: home.path, absolute: true }).next()
            .value!;
    patch(file, "timestamp", 1_700_000_000_001, "1e16");
    if (name === "json") patch(file, "createdAt", 1_700_000_000_000, "1e16");
    a = await open();
    try {
      expect((await a.listSessions({})).items.map((m) => m.id).sort()).toEqual(["good", "old"]);
      expect((await a.readMessages("old")).messages[0]!.timestamp).toBe(1e16);
      expect((await a.readMessages("good")).messages).toHaveLength(1);
      // Changing it still works; only new records are held to the range.
      expect((await a.updateMeta("old", (m) => ({ ...m, title: "renamed" }))).title).toBe("renamed");
    } finally {
      await a.close();
    }
  });
