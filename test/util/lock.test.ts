import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { FreecodeError } from "../../src/errors.ts";
import {
  acquireLock,
  clearLock,
  inspectLock,
  isProcessAlive,
  processStartTime,
  withLock,
  withLockSync,
} from "../../src/util/lock.ts";
import { BUN, ROOT, tempDir } from "../_helpers.ts";

const lockModule = join(ROOT, "src/util/lock.ts");

describe("cross-process lock", () => {
  test("a held lock makes a second taker wait, then fail with code locked", async () => {
    await using dir = await tempDir();
    const path = join(dir.path, "x.lock");
    const held = acquireLock(path);
    const owner = JSON.parse(readFileSync(path, "utf8"));
    expect(owner.pid).toBe(process.pid);
    const t0 = Date.now();
    expect(() => acquireLock(path, 150)).toThrow(FreecodeError);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(140);
    try {
      acquireLock(path, 10);
    } catch (error) {
      expect((error as FreecodeError).code).toBe("locked");
    }
    held.release();
    expect(existsSync(path)).toBe(false);
    withLockSync(path, () => expect(existsSync(path)).toBe(true));
    expect(existsSync(path)).toBe(false);
  });

  test("a lock left by a SIGKILLed process is stale and is broken", async () => {
    await using dir = await tempDir();
    const path = join(dir.path, "x.lock");
    const child = Bun.spawn(
      [
        BUN,
        "-e",
        `const {acquireLock}=await import(${JSON.stringify(lockModule)}); acquireLock(${JSON.stringify(path)}); console.log("held"); setInterval(()=>{}, 1000);`,
      ],
      { stdout: "pipe" },
    );
    const reader = child.stdout.getReader();
    const { value } = await reader.read();
    expect(new TextDecoder().decode(value)).toContain("held");
    expect(existsSync(path)).toBe(true);
    child.kill("SIGKILL");
    await child.exited;
    const t0 = Date.now();
    const lock = acquireLock(path, 2_000);
    expect(Date.now() - t0).toBeLessThan(1_000);
    lock.release();
  });

  test("a reused pid with a different start time counts as dead", async () => {
    await using dir = await tempDir();
    const path = join(dir.path, "x.lock");
    const start = processStartTime(process.pid);
    expect(isProcessAlive(process.pid, start)).toBe(true);
    if (start !== null) expect(isProcessAlive(process.pid, start + 1)).toBe(false);
    writeFileSync(
      path,
      JSON.stringify({ pid: process.pid, start: (start ?? 0) + 1, host: require("node:os").hostname() }),
    );
    acquireLock(path, 500).release();
  });

  test("only one of several processes holds the lock at a time", async () => {
    await using dir = await tempDir();
    const path = join(dir.path, "x.lock");
    const counter = join(dir.path, "counter");
    writeFileSync(counter, "0");
    const script = `const {withLockSync}=await import(${JSON.stringify(lockModule)}); const fs=require("node:fs");
      for (let i=0;i<100;i++) withLockSync(${JSON.stringify(path)}, () => { const n=Number(fs.readFileSync(${JSON.stringify(counter)},"utf8")); fs.writeFileSync(${JSON.stringify(counter)}, String(n+1)); });`;
    const procs = [0, 1, 2].map(() => Bun.spawn([BUN, "-e", script], { stderr: "inherit" }));
    const codes = await Promise.all(procs.map((p) => p.exited));
    expect(codes).toEqual([0, 0, 0]);
    expect(readFileSync(counter, "utf8")).toBe("300");
  });
});

describe("garbage lock files", () => {
  test("an empty lock left long ago is broken at the first look, by a quick poller too", async () => {
    await using dir = await tempDir();
    const path = join(dir.path, "x.lock");
    writeFileSync(path, ""); // what a writer that died between create and write leaves
    const old = new Date(Date.now() - 60_000);
    utimesSync(path, old, old);
    const t0 = Date.now();
    const lock = acquireLock(path, 5_000, 1);
    expect(Date.now() - t0).toBeLessThan(1_000);
    expect(JSON.parse(readFileSync(path, "utf8")).pid).toBe(process.pid);
    lock.release();
    // A fresh empty file is someone creating the lock right now: waited for, then judged.
    writeFileSync(path, "");
    expect(() => acquireLock(path, 200, 1)).toThrow(/within 200 ms/);
  });
});

describe("async callers of one process", () => {
  const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

  test("take turns per path instead of blocking the thread the holder needs", async () => {
    await using dir = await tempDir();
    const path = join(dir.path, "x.lock");
    const seen: string[] = [];
    const holder = (name: string) => async () => {
      seen.push(`${name} in`);
      await pause(60); // the holder needs the event loop: a blocked thread never gets here
      expect(JSON.parse(readFileSync(path, "utf8")).pid).toBe(process.pid);
      seen.push(`${name} out`);
      return name;
    };
    const t0 = Date.now();
    const results = await Promise.all([
      withLock(path, holder("a"), 2_000),
      withLock(path, holder("b"), 2_000),
      withLock(path, holder("c"), 2_000),
    ]);
    expect(results).toEqual(["a", "b", "c"]);
    expect(seen).toEqual(["a in", "a out", "b in", "b out", "c in", "c out"]);
    expect(Date.now() - t0).toBeLessThan(1_500);
    expect(existsSync(path)).toBe(false);
  });

  test("a failing holder hands over; a caller nested in a holder of its path fails with locked", async () => {
    await using dir = await tempDir();
    const path = join(dir.path, "x.lock");
    const failing = withLock(path, async () => {
      await pause(20);
      throw new Error("boom");
    });
    const next = withLock(path, async () => "next");
    await expect(failing).rejects.toThrow("boom");
    expect(await next).toBe("next");
    const t0 = Date.now();
    const nested = withLock(path, () => withLock(path, async () => "never"));
    await expect(nested).rejects.toMatchObject({ code: "locked" });
    expect(Date.now() - t0).toBeLessThan(500); // at once: it would wait for itself
    // Another path inside is fine, and the queue is clear again: a later caller takes it at once.
    expect(await withLock(path, () => withLock(`${path}.other`, async () => "inner"))).toBe("inner");
    expect(await withLock(path, async () => "later", 100)).toBe("later");
  });

  test("a caller's timeout is for another process's lock, not for its turn behind this process's callers", async () => {
    await using dir = await tempDir();
    const path = join(dir.path, "x.lock");
    // Eight callers holding it 150 ms each: 1.2 s in all, past each one's 500 ms timeout.
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        withLock(
          path,
          async () => {
            await pause(150);
            return i;
          },
          500,
        ),
      ),
    );
    expect(results).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
  });
});

describe("clearing locks by hand (store unlock)", () => {
  const host = hostname();
  const deadPid = () => {
    const p = Bun.spawnSync(["true"]);
    return p.pid;
  };

  test("a live lock is never removed; a stale one is; another host's only when named", async () => {
    await using dir = await tempDir();
    const live = join(dir.path, "live.lock");
    const stale = join(dir.path, "stale.lock");
    const remote = join(dir.path, "remote.lock");
    const held = acquireLock(live);
    writeFileSync(stale, JSON.stringify({ pid: deadPid(), start: null, host }));
    writeFileSync(remote, JSON.stringify({ pid: process.pid, start: null, host: "gone-box" }));

    expect(inspectLock(live)).toMatchObject({ state: "live", pid: process.pid, host });
    expect(clearLock(live, host)).toMatchObject({ removed: false, info: { state: "live" } });
    expect(existsSync(live)).toBe(true);
    expect(clearLock(stale)).toMatchObject({ removed: true, info: { state: "stale" } });
    expect(existsSync(stale)).toBe(false);
    expect(clearLock(remote)).toMatchObject({
      removed: false,
      info: { state: "other-host", host: "gone-box" },
    });
    expect(clearLock(remote, "other-box").removed).toBe(false);
    expect(existsSync(remote)).toBe(true);
    expect(clearLock(remote, "gone-box").removed).toBe(true);
    expect(existsSync(remote)).toBe(false);
    expect(clearLock(remote, "gone-box")).toEqual({ info: null, removed: false });
    held.release();
  });

  test("a garbled lock goes only once it has stayed so for a second", async () => {
    await using dir = await tempDir();
    const path = join(dir.path, "x.lock");
    writeFileSync(path, "");
    expect(clearLock(path)).toMatchObject({ removed: false, info: { state: "unreadable" } });
    const old = new Date(Date.now() - 5_000);
    utimesSync(path, old, old);
    expect(clearLock(path).removed).toBe(true);
    expect(existsSync(path)).toBe(false);
  });
});
