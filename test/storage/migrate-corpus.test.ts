/**
 * The real corpus through every adapter: every transcript in shared/corpus is imported into a files
 * store, then migrated files → sqlite → sqljs → json → memory → files; each hop must verify and carry
 * the same content hash as the original, sessions, messages and rollout events included.
 */
import { expect, test } from "bun:test";
import { importSources } from "../../src/import/import.ts";
import files from "../../src/storage/adapters/files.ts";
import json from "../../src/storage/adapters/json.ts";
import memory from "../../src/storage/adapters/memory.ts";
import sqlite from "../../src/storage/adapters/sqlite.ts";
import sqljs from "../../src/storage/adapters/sqljs.ts";
import type { AdapterFactory } from "../../src/storage/contract.ts";
import { digestStore, migrateStore } from "../../src/storage/migrate.ts";
import { CORPUS, tempHome } from "../_helpers.ts";

const chain: [string, AdapterFactory][] = [
  ["sqlite", sqlite],
  ["sqljs", sqljs],
  ["json", json],
  ["memory", memory],
  ["files", files],
];

test("the imported corpus round-trips through every adapter with identical hashes", async () => {
  const homes = await Promise.all([0, ...chain].map(() => tempHome()));
  try {
    let source = files({ home: homes[0]!.path, fsync: "never" });
    const report = await importSources({
      agent: "auto",
      paths: [CORPUS],
      adapter: source,
      home: homes[0]!.path,
    });
    const created = report.sources.reduce((n, s) => n + s.sessions.created, 0);
    expect(created).toBeGreaterThan(10);
    const original = await digestStore(source);
    expect(original.sessions).toBe(created);
    expect(original.events).toBeGreaterThan(1000);
    for (let hop = 0; hop < chain.length; hop++) {
      const [name, factory] = chain[hop]!;
      const target = factory({ home: homes[hop + 1]!.path, fsync: "never" });
      const result = await migrateStore(source, target);
      expect({ name, verified: result.verified, hash: result.copied.hash }).toEqual({
        name,
        verified: true,
        hash: original.hash,
      });
      await source.close();
      source = target;
    }
    expect((await digestStore(source)).hash).toBe(original.hash);
    await source.close();
  } finally {
    for (const h of homes) await h[Symbol.asyncDispose]();
  }
}, 120_000);
