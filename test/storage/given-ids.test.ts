/**
 * Appends of ids a caller chose look for those ids without reading the whole log each time: the
 * files store keeps the ids it read and reads on from there, the SQL stores look them up in an
 * index (schema 3). Building a session of 8,000 messages one given id at a time took 58 s.
 */
import { expect, test } from "bun:test";
import files from "../../src/storage/adapters/files.ts";
import sqlite from "../../src/storage/adapters/sqlite.ts";
import type { AdapterFactory } from "../../src/storage/contract.ts";
import { tempHome } from "../_helpers.ts";
import { makeMeta, msg } from "./contract.ts";

test("files: ids another writer appended, or a compaction dropped, are seen by the next check", async () => {
  await using home = await tempHome();
  const a = files({ home: home.path, fsync: "never" });
  const b = files({ home: home.path, fsync: "never" });
  await a.createSession(makeMeta({ id: "g" }), [msg("m0")]);
  await a.appendMessages("g", [msg("m1")], { given: [true] });
  await b.appendMessages("g", [msg("m2")], { given: [true] });
  await expect(a.appendMessages("g", [msg("m2")], { given: [true] })).rejects.toThrow(
    "message id m2 is already in session g",
  );
  // A compaction renames a new log in: what it dropped may be given again, what it kept may not.
  await b.replaceMessages("g", [msg("m2")]);
  await a.appendMessages("g", [msg("m1")], { given: [true] });
  await expect(a.appendMessages("g", [msg("m2")], { given: [true] })).rejects.toThrow("already in session g");
  expect((await a.readMessages("g")).messages.map((m) => m.id)).toEqual(["m2", "m1"]);
  await a.close();
  await b.close();
});

test.each([
  ["files", files],
  ["sqlite", sqlite],
] as [string, AdapterFactory][])(
  "regression: %s: 6,000 appends of given ids take about as long as plain ones (quadratic before)",
  async (_name, factory) => {
    await using home = await tempHome();
    const store = factory({ home: home.path, fsync: "never" });
    await store.createSession(makeMeta({ id: "g" }), [msg("m0")]);
    const started = performance.now();
    for (let i = 1; i <= 6000; i++) await store.appendMessages("g", [msg(`m${i}`)], { given: [true] });
    // Generous: about 0.1 s (files) and 0.8 s (sqlite) here; 20 s and more before.
    expect(performance.now() - started).toBeLessThan(8_000);
    await expect(store.appendMessages("g", [msg("m3000")], { given: [true] })).rejects.toThrow("already in");
    await store.close();
  },
  60_000,
);
