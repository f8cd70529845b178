/**
 * Regression tests for the lock audit, with real processes: (1) a process appending in a loop
 * starved the others (it gave its lease back and took it again within microseconds); (2) a breaker
 * could delete a live lock (one taken after it judged the old one stale, or one still empty between
 * its create and its write); (3) a lock of another host was reported without its host or a remedy.
 */
import { describe, expect, test } from "bun:test";
import { closeSync, existsSync, openSync, readFileSync, rmSync, writeFileSync, writeSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { FreecodeError } from "../../src/errors.ts";
import { openStore } from "../../src/storage/select.ts";
import { acquireLock, processStartTime } from "../../src/util/lock.ts";
import { BUN, ROOT, tempDir, tempHome } from "../_helpers.ts";
import { makeMeta, msg } from "../storage/contract.ts";

const lockModule = JSON.stringify(join(ROOT, "src/util/lock.ts"));
const storeModule = JSON.stringify(join(ROOT, "src/storage/select.ts"));
const selfOwner = () =>
  JSON.stringify({ pid: process.pid, start: processStartTime(process.pid), host: hostname() });

/** Spawn `bun -e script`; `line()` resolves with each line it prints, in order. */
function child(script: string, args: string[] = []) {
  const proc = Bun.spawn([BUN, "-e", script, ...args], { stdout: "pipe", stderr: "pipe" });
  const reader = proc.stdout.getReader();
  const decoder = new TextDecoder();
  let buffered = "";
  return {
    proc,
    async line(): Promise<string> {
      for (;;) {
        const nl = buffered.indexOf("\n");
        if (nl >= 0) {
          const out = buffered.slice(0, nl);
          buffered = buffered.slice(nl + 1);
          return out;
        }
        const { value, done } = await reader.read();
        if (done) throw new Error(`child exited: ${await new Response(proc.stderr).text()}`);
        buffered += decoder.decode(value);
      }
    },
  };
}

/** A pid that is certainly dead: a process that already exited. */
async function deadPid(): Promise<number> {
  const p = Bun.spawn([BUN, "-e", "0"]);
  await p.exited;
  return p.pid;
}

describe("audit: a looping appender does not starve the others", () => {
  // Appends without ever yielding to the event loop, until told to stop (or 8 s passed).
  const hogScript = `
    const { openStore } = await import(${storeModule});
    const [home, stop] = process.argv.slice(1);
    const { adapter } = await openStore("files", { home, fsync: "never" });
    const until = Date.now() + 8_000;
    let i = 0;
    while (Date.now() < until && !(i % 50 === 0 && require("node:fs").existsSync(stop))) {
      await adapter.appendMessages("s", [{ id: "hog-" + i, role: "user", parts: [{ type: "text", content: "x" }], timestamp: 1 }]);
      if (++i === 50) console.log("looping");
    }
    await adapter.close();`;
  const someAppends = `
    const { openStore } = await import(${storeModule});
    const { adapter } = await openStore("files", { home: process.argv[1], fsync: "never" });
    const t0 = performance.now();
    for (let i = 0; i < 4; i++) {
      await adapter.appendMessages("s", [{ id: "one-" + i, role: "user", parts: [{ type: "text", content: "y" }], timestamp: 1 }]);
      await new Promise((r) => setImmediate(r)); // each append a lease of its own: each must get a turn
    }
    console.log(Math.round(performance.now() - t0));
    await adapter.close();`;

  // Before the fix the appends waited until the loop ended (8 s here; 2 s of a 3 s loop in the
  // audit); now each waits for the looping process's turn to end (200 ms), plus a busy machine's noise.
  test("another process's appends get their turns while one appends in a loop", async () => {
    await using home = await tempHome();
    const { adapter } = await openStore("files", { home: home.path, fsync: "never" });
    await adapter.createSession(makeMeta({ id: "s" }), [msg("first")]);
    await adapter.close();
    const stop = join(home.path, "stop");
    const hog = child(hogScript, [home.path, stop]);
    try {
      expect(await hog.line()).toBe("looping");
      const other = child(someAppends, [home.path]);
      const waited = Number(await other.line());
      expect(await other.proc.exited).toBe(0);
      expect(waited).toBeLessThan(3_000);
    } finally {
      writeFileSync(stop, "");
      expect(await hog.proc.exited).toBe(0);
    }
    const { adapter: check } = await openStore("files", { home: home.path });
    const { messages } = await check.readMessages("s");
    await check.close();
    expect(messages.filter((m) => m.id.startsWith("one-"))).toHaveLength(4);
  }, 30_000);

  test("a held lock tells its holder whether another process waited for it", async () => {
    await using dir = await tempDir();
    const path = join(dir.path, "x.lock");
    const lock = acquireLock(path);
    expect(lock.contended()).toBe(false); // nobody waits: the fast path stays as it was
    const waiter = child(
      `const { acquireLock } = await import(${lockModule});
       try { acquireLock(process.argv[1], 150); } catch (e) { console.log(e.code); }`,
      [path],
    );
    expect(await waiter.line()).toBe("locked");
    expect(lock.contended()).toBe(true);
    lock.release();
  });
});

describe("audit: breaking a stale lock never removes a live one", () => {
  // A breaker that has read the dead owner of the lock at argv[1]. On its first call to one of
  // `steps` on that file, another breaker is made to have removed the stale lock and a live process
  // (argv[2]: this test) to have taken a fresh one.
  const interleavedBreaker = (steps: string[]) => `
    const fs = require("node:fs");
    const [path, live] = process.argv.slice(1);
    let interleaved = false;
    for (const name of ${JSON.stringify(steps)}) {
      const original = fs[name];
      fs[name] = (from, to) => {
        if (from === path && !interleaved) {
          interleaved = true;
          fs.rmSync(path);
          fs.writeFileSync(path, live, { flag: "wx" });
        }
        return original(from, to);
      };
    }
    const { acquireLock } = await import(${lockModule});
    try { acquireLock(path, 300).release(); console.log("acquired"); } catch (e) { console.log(e.code); }
    console.log(interleaved);`;

  // Just before the breaker's first step on the file; or, for a breaker frozen past its turn, just
  // before it moves the file aside.
  test.each([
    ["first step", ["renameSync", "linkSync"]],
    ["move aside", ["renameSync"]],
  ])("a breaker leaves a lock taken after it judged the old one stale (before its %s)", async (_, steps) => {
    await using dir = await tempDir();
    const path = join(dir.path, "x.lock");
    writeFileSync(path, JSON.stringify({ pid: await deadPid(), start: null, host: hostname() }));
    const breaker = child(interleavedBreaker(steps), [path, selfOwner()]);
    expect(await breaker.line()).toBe("locked");
    expect(await breaker.line()).toBe("true");
    expect(existsSync(path) && readFileSync(path, "utf8")).toBe(selfOwner());
  });

  test("a lock still empty between its create and its write is not taken for an old garbage file", async () => {
    await using dir = await tempDir();
    const path = join(dir.path, "x.lock");
    writeFileSync(path, ""); // a writer died mid-write: garbage, broken once it stays so for 1 s
    const waiter = child(
      `const { acquireLock } = await import(${lockModule});
       console.log("waiting");
       const t0 = Date.now();
       const lock = acquireLock(process.argv[1], 5_000);
       console.log(Date.now() - t0);
       lock.release();`,
      [path],
    );
    expect(await waiter.line()).toBe("waiting");
    const t0 = Date.now();
    await Bun.sleep(550);
    // The garbage goes and a new lock is created; its writer is slow to fill it in. The waiter's
    // clock, started on the garbage, runs out meanwhile: it used to remove the new lock.
    expect(Date.now() - t0).toBeLessThan(900); // (this test's own timing: the garbage is not yet due)
    rmSync(path);
    const fd = openSync(path, "wx");
    await Bun.sleep(600);
    writeSync(fd, selfOwner());
    closeSync(fd);
    await Bun.sleep(300);
    expect(existsSync(path) && readFileSync(path, "utf8")).toBe(selfOwner());
    const released = Date.now();
    rmSync(path);
    // The waiter took the lock only once it was released.
    expect(Number(await waiter.line())).toBeGreaterThanOrEqual(released - t0 - 50);
    expect(await waiter.proc.exited).toBe(0);
    expect(existsSync(path)).toBe(false);
  }, 15_000);
});

describe("audit: a lock of another host", () => {
  test("is not broken, and the error names its host and how to clear it", async () => {
    await using dir = await tempDir();
    const path = join(dir.path, "x.lock");
    writeFileSync(path, JSON.stringify({ pid: 1, start: null, host: "gone-container" }));
    let error: unknown;
    try {
      acquireLock(path, 100);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(FreecodeError);
    expect((error as FreecodeError).code).toBe("locked");
    expect((error as FreecodeError).message).toBe(
      `could not lock ${path} within 100 ms (held by pid 1 on gone-container); if that process is gone, run: freecode store unlock --host gone-container (or delete ${path})`,
    );
    expect(existsSync(path)).toBe(true);
  });
});
