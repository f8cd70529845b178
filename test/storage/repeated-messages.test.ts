/** A message log holding one id twice (a line copied outside freecode): verify, repair, copies. */
import { describe, expect, test } from "bun:test";
import { appendFileSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { exportSession } from "../../src/session/export.ts";
import { forkSession } from "../../src/session/lifecycle.ts";
import factory from "../../src/storage/adapters/files.ts";
import sqlite from "../../src/storage/adapters/sqlite.ts";
import { migrateStore } from "../../src/storage/migrate.ts";
import { verifyStore } from "../../src/storage/verify.ts";
import { tempHome } from "../_helpers.ts";
import { makeMeta, msg } from "./contract.ts";

const log = (home: string, id: string) =>
  join(home, "sessions", "home__a__my_h_project", id, "messages.jsonl");

async function withRepeat(home: string, change?: (line: string) => string) {
  const a = factory({ home, fsync: "never" });
  await a.createSession(makeMeta({ id: "r1" }), [msg("m1"), msg("m2"), msg("m3")]);
  const file = log(home, "r1");
  const second = readFileSync(file, "utf8").split("\n")[1]!;
  appendFileSync(file, `${change ? change(second) : second}\n`);
  return { a, file };
}

describe("a message held twice", () => {
  test("verify names it; --repair drops a repeat equal to its first copy, and the count follows", async () => {
    await using home = await tempHome();
    const { a, file } = await withRepeat(home.path);
    const found = await verifyStore(a, home.path);
    expect(found.ok).toBe(false);
    expect(found.problems).toMatchObject([
      {
        kind: "repeated_message",
        sessionId: "r1",
        detail: "message m2 is held twice (messages 2 and 4 of the log, the same)",
        repairable: true,
      },
    ]);
    const repaired = await verifyStore(a, home.path, true);
    expect(repaired.ok).toBe(true);
    expect(repaired.problems.map((p) => [p.kind, p.repaired])).toEqual([["repeated_message", true]]);
    expect((await a.readMessages("r1")).messages.map((m) => m.id)).toEqual(["m1", "m2", "m3"]);
    expect((await a.getMeta("r1"))?.messageCount).toBe(3);
    expect(readFileSync(file, "utf8").trim().split("\n")).toHaveLength(3);
    expect((await verifyStore(a, home.path)).problems).toEqual([]);
    await a.close();
  });

  test("a repeat that differs from its first copy is reported, never repaired", async () => {
    await using home = await tempHome();
    const { a, file } = await withRepeat(home.path, (l) => l.replace("text of", "changed text of"));
    const before = readFileSync(file, "utf8");
    const report = await verifyStore(a, home.path, true);
    expect(report.ok).toBe(false);
    expect(report.problems).toMatchObject([
      { kind: "repeated_message", repairable: false, detail: expect.stringContaining("and they differ") },
    ]);
    expect(report.problems[0]!.repaired).toBeUndefined();
    expect(readFileSync(file, "utf8")).toBe(before);
    await a.close();
  });

  test("not repaired while the log has a line it cannot read (the rewrite would drop it)", async () => {
    await using home = await tempHome();
    const { a, file } = await withRepeat(home.path);
    writeFileSync(file, `${readFileSync(file, "utf8")}not json\n${JSON.stringify(msg("m4"))}\n`);
    const before = readFileSync(file, "utf8");
    const report = await verifyStore(a, home.path, true);
    expect(report.problems.find((p) => p.kind === "repeated_message")).toMatchObject({ repairable: false });
    expect(readFileSync(file, "utf8")).toBe(before);
    await a.close();
  });

  test("export and fork refuse it, naming the message and the repair, and write nothing", async () => {
    await using home = await tempHome();
    const { a } = await withRepeat(home.path);
    const said =
      "cannot export session r1: message m2 is held twice (messages 2 and 4 of the log, the same); `freecode store verify --repair`";
    expect(exportSession(a, "r1")).rejects.toThrow(said);
    expect(forkSession(a, "r1")).rejects.toThrow("cannot fork session r1: message m2 is held twice");
    expect((await a.listSessions({ all: true })).total).toBe(1);
    await using target = await tempHome();
    const b = sqlite({ home: target.path, fsync: "never" });
    expect(migrateStore(a, b)).rejects.toThrow("cannot migrate session r1: message m2 is held twice");
    expect((await b.listSessions({ all: true })).total).toBe(0);
    await a.close();
    await b.close();
  });
});
