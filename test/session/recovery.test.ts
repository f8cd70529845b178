/** Crash recovery: a session left `running` by a process that is gone becomes `interrupted`. */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { createSession } from "../../src/session/lifecycle.ts";
import { markIdle, markRunning, recoverCrashed } from "../../src/session/status.ts";
import factory from "../../src/storage/adapters/files.ts";
import { BUN, tempHome } from "../_helpers.ts";

describe("recoverCrashed", () => {
  test("a SIGKILLed owner's session becomes interrupted; a live owner's stays running", async () => {
    await using home = await tempHome();
    const store = factory({ home: home.path, fsync: "never" });
    await createSession(store, { projectPath: "/p", id: "mine" }, [
      { id: "u", role: "user", parts: [], timestamp: 1 },
    ]);
    await markRunning(store, "mine");
    const child = Bun.spawn([BUN, join(import.meta.dir, "_running-child.ts"), home.path], { stdout: "pipe" });
    const reader = child.stdout.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toContain("RUNNING");
    expect((await store.getMeta("dead"))?.status).toBe("running");
    child.kill("SIGKILL");
    await child.exited;
    expect(await recoverCrashed(store)).toEqual(["dead"]);
    expect((await store.getMeta("dead"))?.status).toBe("interrupted");
    expect((await store.getMeta("dead"))?.owner).toBeUndefined();
    expect((await store.getMeta("mine"))?.status).toBe("running");
    expect((await markIdle(store, "mine")).status).toBe("idle");
    await store.close();
  });

  test("a session another live process runs is not taken over; a dead owner's is", async () => {
    await using home = await tempHome();
    const store = factory({ home: home.path, fsync: "never" });
    const child = Bun.spawn([BUN, join(import.meta.dir, "_running-child.ts"), home.path], { stdout: "pipe" });
    const reader = child.stdout.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toContain("RUNNING");
    const owner = (await store.getMeta("dead"))!.owner!;
    for (const mark of [markRunning, markIdle]) {
      const error = await mark(store, "dead").catch((e) => e);
      expect(error).toMatchObject({ code: "conflict" });
      expect(error.message).toContain(`running in process ${owner.pid}`);
      expect((await store.getMeta("dead"))?.owner).toEqual(owner);
    }
    child.kill("SIGKILL");
    await child.exited;
    const taken = await markRunning(store, "dead");
    expect(taken.status).toBe("running");
    expect(taken.owner?.pid).toBe(process.pid);
    // Marking again from the owner is a no-op, and the owner ends it.
    expect((await markRunning(store, "dead")).owner?.pid).toBe(process.pid);
    expect((await markIdle(store, "dead")).status).toBe("idle");
    await store.close();
  });
});
