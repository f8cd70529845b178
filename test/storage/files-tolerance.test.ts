/** The files adapter on damaged files: torn tails, bad middle lines, stale counters, a lost index. */
import { describe, expect, test } from "bun:test";
import { appendFileSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import factory from "../../src/storage/adapters/files.ts";
import { tempHome } from "../_helpers.ts";
import { makeMeta, msg } from "./contract.ts";

const sessionDir = (home: string, id: string) => join(home, "sessions", "home__a__my_h_project", id);

describe("files adapter: tolerant reading", () => {
  test("a torn last line is skipped as torn; the next writer cuts it off before appending", async () => {
    await using home = await tempHome();
    const a = factory({ home: home.path, fsync: "never" });
    await a.createSession(makeMeta({ id: "t1" }), [msg("m1"), msg("m2")]);
    await a.close();
    const file = join(sessionDir(home.path, "t1"), "messages.jsonl");
    appendFileSync(file, '{"id":"m3","role":"user","par'); // a crash mid-append
    const b = factory({ home: home.path, fsync: "never" });
    const read = await b.readMessages("t1");
    expect(read.messages.map((m) => m.id)).toEqual(["m1", "m2"]);
    expect(read.issues).toMatchObject([{ line: 3, torn: true }]);
    await b.appendMessages("t1", [msg("m4")]);
    const after = await b.readMessages("t1");
    expect(after.messages.map((m) => m.id)).toEqual(["m1", "m2", "m4"]);
    // The fragment was never acknowledged: cut off, not left behind as a bad middle line.
    expect(after.issues).toEqual([]);
    expect(readFileSync(file, "utf8").split("\n")[2]).toStartWith('{"id":"m4"');
    await b.close();
  });

  test("a bad middle line is reported with file and line; the rest loads", async () => {
    await using home = await tempHome();
    const a = factory({ home: home.path, fsync: "never" });
    await a.createSession(makeMeta({ id: "t2" }), [msg("m1")]);
    const file = join(sessionDir(home.path, "t2"), "messages.jsonl");
    appendFileSync(file, 'not json at all\n{"id":"bad","role":"robot","parts":[],"timestamp":1}\n');
    await a.appendMessages("t2", [msg("m2")]);
    const read = await a.readMessages("t2");
    expect(read.messages.map((m) => m.id)).toEqual(["m1", "m2"]);
    expect(read.issues.map((i) => [i.line, i.torn])).toEqual([
      [2, false],
      [3, false],
    ]);
    expect(read.issues[1]?.message).toContain("role");
    await a.close();
  });

  test("events: a torn tail is skipped and seq continues from the last good line", async () => {
    await using home = await tempHome();
    const a = factory({ home: home.path, fsync: "never" });
    await a.appendEvents("e1", [
      { type: "turn.started", turnId: "t" },
      { type: "turn.started", turnId: "u" },
    ]);
    await a.close();
    appendFileSync(join(home.path, "rollout", "sessions", "e1", "events.jsonl"), '{"type":"turn.st');
    const b = factory({ home: home.path, fsync: "never" });
    const [next] = await b.appendEvents("e1", [{ type: "turn.started", turnId: "v" }]);
    expect(next?.seq).toBe(3);
    const seen: (number | string)[] = [];
    for await (const r of b.readEvents("e1")) seen.push(r.event ? r.event.seq : `issue@${r.issue.line}`);
    expect(seen).toEqual([1, 2, 3]);
    await b.close();
  });

  test("counters behind the log (writer died before writing the meta back) are healed on read", async () => {
    await using home = await tempHome();
    const a = factory({ home: home.path, fsync: "never" });
    await a.createSession(makeMeta({ id: "h1" }), [msg("m1")]);
    await a.close();
    // Simulate the crash: lines in the log that the meta does not count yet.
    const file = join(sessionDir(home.path, "h1"), "messages.jsonl");
    appendFileSync(file, `${JSON.stringify(msg("m2", "user", { timestamp: 42 }))}\n`);
    const b = factory({ home: home.path, fsync: "never" });
    expect((await b.getMeta("h1"))?.messageCount).toBe(2);
    await b.appendMessages("h1", [msg("m3", "assistant")]);
    await b.close();
    const onDisk = JSON.parse(readFileSync(join(sessionDir(home.path, "h1"), "meta.json"), "utf8"));
    expect(onDisk.messageCount).toBe(3);
    expect(onDisk.messagesBytes).toBe(statSync(file).size);
  });

  test("a corrupt meta.json is a bad_input naming the file, and does not break listing", async () => {
    await using home = await tempHome();
    const a = factory({ home: home.path, fsync: "never" });
    await a.createSession(makeMeta({ id: "ok" }), [msg("m1")]);
    await a.createSession(makeMeta({ id: "broken" }), [msg("m1")]);
    await a.close();
    writeFileSync(join(sessionDir(home.path, "broken"), "meta.json"), "{nope");
    const b = factory({ home: home.path, fsync: "never" });
    await expect(b.getMeta("broken")).rejects.toThrow("meta.json is not JSON");
    expect((await b.reindex!()).sessions).toBe(1);
    expect((await b.listSessions({})).items.map((m) => m.id)).toEqual(["ok"]);
    await b.close();
  });
});

describe("files adapter: listing index", () => {
  test("rebuilt when missing or corrupt; sessions added by hand or by another process show up", async () => {
    await using home = await tempHome();
    const a = factory({ home: home.path, fsync: "never" });
    for (let i = 0; i < 5; i++)
      await a.createSession(makeMeta({ id: `x${i}`, updatedAt: i }), [msg("m", "user", { timestamp: 0 })]);
    expect((await a.listSessions({})).total).toBe(5);
    await a.close();
    rmSync(join(home.path, "state", "sessions-index.db"), { force: true });
    rmSync(join(home.path, "state", "sessions-index.db-wal"), { force: true });
    rmSync(join(home.path, "state", "sessions-index.db-shm"), { force: true });
    const b = factory({ home: home.path, fsync: "never" });
    expect((await b.listSessions({})).total).toBe(5);
    // Another process (a second adapter, with its own index handle) writes: visible at once.
    const c = factory({ home: home.path, fsync: "never" });
    await c.createSession(makeMeta({ id: "late", updatedAt: 100 }), [msg("m", "user", { timestamp: 0 })]);
    await c.updateMeta("x0", (m) => ({ ...m, title: "renamed elsewhere" }));
    await c.close();
    const page = await b.listSessions({});
    expect(page.items[0]?.id).toBe("late");
    expect(page.items.find((m) => m.id === "x0")?.title).toBe("renamed elsewhere");
    // A session directory removed by hand disappears from the listing.
    rmSync(sessionDir(home.path, "x1"), { recursive: true });
    expect((await b.listSessions({})).items.map((m) => m.id)).not.toContain("x1");
    await b.close();
    writeFileSync(join(home.path, "state", "sessions-index.db"), "garbage, not sqlite");
    const d = factory({ home: home.path, fsync: "never" });
    expect((await d.listSessions({})).total).toBe(5);
    expect(
      readFileSync(join(home.path, "state", "sessions-index.db"))
        .subarray(0, 15)
        .toString(),
    ).toBe("SQLite format 3");
    await d.close();
  });
});
