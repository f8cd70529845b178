/**
 * Regression tests for the session audit: compaction that destroyed messages (a crash between the
 * rewrite and the summary; sessions with no or too few user turns), an interrupt lost to a racing
 * append, and the 8 MiB message limit enforced by one adapter path only.
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { FreecodeError } from "../../src/errors.ts";
import { compactSession, keepLastUserTurns } from "../../src/session/compaction.ts";
import { markInterrupted } from "../../src/session/interrupt.ts";
import { createSession } from "../../src/session/lifecycle.ts";
import { markRunning } from "../../src/session/status.ts";
import { MAX_MESSAGE_BYTES } from "../../src/storage/_validate.ts";
import factory from "../../src/storage/adapters/files.ts";
import type { StorageAdapter } from "../../src/storage/contract.ts";
import type { StoredMessage } from "../../src/storage/records.ts";
import { openStore } from "../../src/storage/select.ts";
import { BUN, runCli, tempHome } from "../_helpers.ts";
import { conversation, say } from "./_conversation.ts";

const ids = (messages: StoredMessage[]) => messages.map((m) => m.id);

async function compactEvents(store: StorageAdapter, id: string) {
  const out = [];
  for await (const r of store.readEvents(id)) if (r.event?.type === "compact.occurred") out.push(r.event);
  return out;
}

async function rejection(p: Promise<unknown>): Promise<FreecodeError> {
  try {
    await p;
  } catch (error) {
    expect(error).toBeInstanceOf(FreecodeError);
    return error as FreecodeError;
  }
  throw new Error("expected a rejection");
}

describe("compaction survives a crash between its writes (audit 1a)", () => {
  const ALL = ids(conversation(5));
  const KEPT = ["u4", "a4", "b4", "u5", "a5", "b5"];

  for (const dieAfter of ["updateMeta", "replaceMessages", "appendEvents"]) {
    test(`killed right after ${dieAfter}: nothing lost, a retry finishes with one compact.occurred`, async () => {
      await using home = await tempHome();
      const setup = factory({ home: home.path, fsync: "never" });
      await createSession(setup, { projectPath: "/p", id: "k" }, conversation(5));
      await setup.close();

      const child = Bun.spawn(
        [BUN, join(import.meta.dir, "_audit-child.ts"), home.path, "k", "2", dieAfter],
        {
          stdout: "pipe",
          stderr: "pipe",
        },
      );
      expect(await child.exited).not.toBe(0);
      expect(child.signalCode).toBe("SIGKILL");

      const store = factory({ home: home.path, fsync: "never" });
      // Right after the kill: the old log, or the new one, and either way the summary is stored.
      const after = ids((await store.readMessages("k")).messages);
      expect([ALL, KEPT]).toContainEqual(after);
      expect(JSON.stringify(await store.getMeta("k"))).toContain("edit f3.ts"); // a completed step

      // The retry finishes the job, once.
      const r = await compactSession(store, "k", { keepUserTurns: 2, rollout: true });
      expect(ids((await store.readMessages("k")).messages)).toEqual(KEPT);
      const meta = await store.getMeta("k");
      expect(meta?.messageCount).toBe(6);
      expect(meta?.summary?.text).toContain("## Task goal\nrequest 1");
      expect(meta?.summary?.text).toContain("- edit f3.ts");
      expect(await compactEvents(store, "k")).toMatchObject([{ beforeTokens: r.tokensBefore }]);
      expect(r).toMatchObject({ compacted: true, messagesBefore: 15, messagesAfter: 6 });
      expect((await compactSession(store, "k", { keepUserTurns: 2, rollout: true })).compacted).toBe(false);
      expect(await compactEvents(store, "k")).toHaveLength(1);
      await store.close();
    }, 30_000);
  }
});

describe("compaction never drops what it should keep (audit 1b, 1c)", () => {
  test("a session without user messages is left alone (was 2 → 0 messages)", async () => {
    await using home = await tempHome();
    const store = factory({ home: home.path, fsync: "never" });
    await createSession(store, { projectPath: "/p", id: "c2" }, [
      say("s", "system", "be brief"),
      say("a", "assistant", "hello"),
    ]);
    const r = await compactSession(store, "c2", { keepUserTurns: 1, rollout: true });
    expect(r).toMatchObject({ compacted: false, messagesBefore: 2, messagesAfter: 2 });
    expect(ids((await store.readMessages("c2")).messages)).toEqual(["s", "a"]);
    expect(await compactEvents(store, "c2")).toHaveLength(0);
    await store.close();
  });

  test("fewer user turns than --keep is a no-op that keeps the system prompt (was 3 → 2)", async () => {
    await using home = await tempHome();
    const store = factory({ home: home.path, fsync: "never" });
    const log = [say("s", "system", "be brief"), say("u", "user", "hi"), say("a", "assistant", "hello")];
    await createSession(store, { projectPath: "/p", id: "c3" }, log);
    const r = await compactSession(store, "c3", { keepUserTurns: 5 });
    expect(r).toMatchObject({ compacted: false, messagesBefore: 3, messagesAfter: 3 });
    // Regression: it said "only 5 user turn(s) or fewer", the --keep given, as if the log's count.
    expect(r.reason).toBe("the log holds 1 user turn, and the last 5 are kept: nothing to drop");
    expect(ids((await store.readMessages("c3")).messages)).toEqual(["s", "u", "a"]);
    await store.close();
  });

  test("leading system messages survive a real compaction", async () => {
    await using home = await tempHome();
    const store = factory({ home: home.path, fsync: "never" });
    const log = [say("s1", "system", "rules"), say("s2", "system", "more rules"), ...conversation(3)];
    await createSession(store, { projectPath: "/p", id: "c4" }, log);
    const r = await compactSession(store, "c4", { keepUserTurns: 1, rollout: false });
    expect(r).toMatchObject({ compacted: true, messagesBefore: 11, messagesAfter: 5 });
    expect(ids((await store.readMessages("c4")).messages)).toEqual(["s1", "s2", "u3", "a3", "b3"]);
    expect((await store.getMeta("c4"))?.summary?.text).toContain("request 1");
    await store.close();
  });

  test("keepLastUserTurns: nothing to drop at N user turns or fewer; system prefix kept", () => {
    const sys = say("s", "system", "rules");
    const orphan = say("x", "assistant", "orphan");
    expect(ids(keepLastUserTurns([sys, orphan], 1))).toEqual(["s", "x"]);
    expect(ids(keepLastUserTurns([orphan, ...conversation(1)], 5))).toEqual(["x", "u1", "a1", "b1"]);
    expect(ids(keepLastUserTurns([sys, ...conversation(2)], 1))).toEqual(["s", "u2", "a2", "b2"]);
  });

  test("the CLI reports the no-op (`session compact c2 --keep 1` on system + assistant)", async () => {
    await using home = await tempHome();
    const store = factory({ home: home.path, fsync: "never" });
    await createSession(store, { projectPath: "/p", id: "c2" }, [
      say("s", "system", "be brief"),
      say("a", "assistant", "hello"),
    ]);
    await store.close();
    const out = runCli(["session", "compact", "c2", "--keep", "1"], { home: home.path });
    expect(out.code).toBe(0);
    expect(out.stdout).toStartWith("not compacted:");
    const again = factory({ home: home.path, fsync: "never" });
    expect(ids((await again.readMessages("c2")).messages)).toEqual(["s", "a"]);
    await again.close();
  });
});

describe("an interrupt racing an append is not lost (audit 2)", () => {
  /** The store, with `appendsBeforeReplace` appends landing between each read and rewrite. */
  function racing(store: StorageAdapter, sessionId: string, appendsBeforeReplace: number): StorageAdapter {
    let n = 0;
    return new Proxy(store, {
      get(target, key, receiver) {
        if (key !== "replaceMessages") return Reflect.get(target, key, receiver);
        return async (...args: Parameters<StorageAdapter["replaceMessages"]>) => {
          if (n < appendsBeforeReplace) {
            n++;
            await target.appendMessages(sessionId, [say(`late${n}`, "user", "tool output")]);
          }
          return target.replaceMessages(...args);
        };
      },
    });
  }

  async function runningSession(home: string) {
    const store = factory({ home, fsync: "never" });
    await createSession(store, { projectPath: "/p", id: "i" }, [
      say("u1", "user", "go"),
      say("a1", "assistant", "streaming…"),
    ]);
    await markRunning(store, "i");
    return store;
  }

  test("the mark is retried on conflict: message and session both interrupted", async () => {
    await using home = await tempHome();
    const store = await runningSession(home.path);
    await markInterrupted(racing(store, "i", 2), "i", "a1");
    const { messages } = await store.readMessages("i");
    expect(ids(messages)).toEqual(["u1", "a1", "late1", "late2"]);
    expect(messages.map((m) => Boolean(m.interrupted))).toEqual([false, true, false, false]);
    expect((await store.getMeta("i"))?.status).toBe("interrupted");
    await store.close();
  });

  test("when the mark keeps losing, the session is still marked interrupted and the error surfaces", async () => {
    await using home = await tempHome();
    const store = await runningSession(home.path);
    const error = await rejection(markInterrupted(racing(store, "i", 1_000), "i", "a1"));
    expect(error.code).toBe("conflict");
    const meta = await store.getMeta("i");
    expect(meta?.status).toBe("interrupted");
    expect(meta?.owner).toBeUndefined();
    await store.close();
  });
});

describe("messages over 8 MiB are refused by every adapter (audit 3)", () => {
  const big = (id: string, content: string): StoredMessage => say(id, "assistant", content);
  const meta = (id: string) => ({
    id,
    title: "t",
    projectPath: "/p",
    status: "idle" as const,
    createdAt: 1,
    updatedAt: 1,
    turnCount: 0,
    messageCount: 0,
  });
  // Bytes, not characters: 4.5 M two-byte characters are a 9 MB line.
  const OVERSIZED = [
    () => big("m-big", "x".repeat(9 * 1024 * 1024)),
    () => big("m-big", "é".repeat(4_500_000)),
  ];

  for (const name of ["files", "sqlite", "json", "memory", "sqljs"]) {
    test(`${name}: create, append and replace refuse it with a one-line error naming id and limit`, async () => {
      await using home = await tempHome();
      const { adapter } = await openStore(name, { home: home.path, fsync: "never" });
      try {
        await adapter.createSession(meta("ok"), [say("m1", "user", "hi")]);
        for (const make of OVERSIZED) {
          const m = make();
          for (const write of [
            () => adapter.createSession(meta("new"), [m]),
            () => adapter.appendMessages("ok", [say("m2", "user", "fine"), m]),
            () => adapter.replaceMessages("ok", [m]),
          ]) {
            const e = await rejection(write());
            expect(e.code).toBe("bad_input");
            expect(e.oneLine).toMatch(
              /^message m-big is \d+(\.\d+)? MiB, over the 8 MiB limit \(field \[\d\]\)$/,
            );
          }
          expect(await adapter.getMeta("new")).toBeUndefined();
          expect(ids((await adapter.readMessages("ok")).messages)).toEqual(["m1"]);
        }
      } finally {
        await adapter.close();
      }
    }, 60_000);
  }

  test("the limit is exact: a line of 8 MiB is stored, one byte more is refused", async () => {
    await using home = await tempHome();
    const { adapter } = await openStore("memory", { home: home.path });
    const overhead = JSON.stringify(big("m-big", "")).length;
    const fits = big("m-big", "x".repeat(MAX_MESSAGE_BYTES - overhead));
    expect(Buffer.byteLength(JSON.stringify(fits))).toBe(MAX_MESSAGE_BYTES);
    await adapter.createSession(meta("s"), [fits]);
    const over = big("m-over", "x".repeat(MAX_MESSAGE_BYTES - overhead + 1));
    expect((await rejection(adapter.appendMessages("s", [over]))).code).toBe("bad_input");
    await adapter.close();
  });
});
