/**
 * Lock files left by writers that died (kill -9) make a listing reread those sessions, healed. A
 * lock of a session the index does not hold (purged since) was looked for in every project
 * directory on every listing: 2,000 over 600 projects made one `session list` take 9 s.
 */
import { expect, test } from "bun:test";
import { appendFileSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import factory from "../../src/storage/adapters/files.ts";
import { formatSessionDirName } from "../../src/storage/project-key.ts";
import { tempHome } from "../_helpers.ts";
import { makeMeta, msg } from "./contract.ts";

test("regression: lock files of sessions no longer stored cost a listing about nothing; a held one is still healed", async () => {
  await using home = await tempHome();
  const a = factory({ home: home.path, fsync: "never" });
  for (let i = 0; i < 600; i++)
    await a.createSession(makeMeta({ id: `s${i}`, projectPath: `/p/${i}` }), [msg("m1")]);
  await a.close();
  const locks = join(home.path, "state", "locks");
  mkdirSync(locks, { recursive: true });
  const dead = '{"pid":999999,"start":1,"host":"elsewhere"}';
  for (let i = 0; i < 2000; i++) writeFileSync(join(locks, `s-gone-${i}.lock`), dead);
  // A session whose writer died holding its lock, one message past what its meta counts.
  const log = join(home.path, "sessions", formatSessionDirName("/p/7"), "s7", "messages.jsonl");
  appendFileSync(log, `${JSON.stringify(msg("m2"))}\n`);
  writeFileSync(join(locks, "s-s7.lock"), dead);
  const b = factory({ home: home.path, fsync: "never" });
  await b.listSessions({ limit: 1 }); // the index is built once
  const started = performance.now();
  for (let i = 0; i < 3; i++) expect((await b.listSessions({ limit: 20 })).total).toBe(600);
  // Generous: three listings took 27 s before; about 60 ms now.
  expect(performance.now() - started).toBeLessThan(3_000);
  expect((await b.listSessions({ all: true })).items.find((m) => m.id === "s7")?.messageCount).toBe(2);
  await b.close();
}, 60_000);
