/**
 * What an agent loop meets through the library (a review wrote such loops against the README):
 * two first appends at once, compaction after a resume's synthetic "Continue", a fork taken early.
 */
import { expect, test } from "bun:test";
import { compactSession } from "../../src/session/compaction.ts";
import { createSession, forkSession, startSession } from "../../src/session/lifecycle.ts";
import factory from "../../src/storage/adapters/files.ts";
import type { StoredMessage } from "../../src/storage/records.ts";
import { tempHome } from "../_helpers.ts";

const say = (id: string, role: StoredMessage["role"], content: string, timestamp: number, extra = {}) =>
  ({ id, role, parts: [{ type: "text", content }], timestamp, ...extra }) as StoredMessage;

test("two first appends of a lazy session at once: both stored, in order", async () => {
  await using home = await tempHome();
  const store = factory({ home: home.path, fsync: "never" });
  const lazy = startSession(store, { projectPath: "/p" });
  await Promise.all([
    lazy.append([say("u1", "user", "hi", 1)]),
    lazy.append([say("a1", "assistant", "hello", 2)]),
  ]);
  expect((await store.readMessages(lazy.id)).messages.map((m) => m.id)).toEqual(["u1", "a1"]);
  await store.close();
});

test("compaction counts turns as the meta does: a synthetic Continue opens none", async () => {
  await using home = await tempHome();
  const store = factory({ home: home.path, fsync: "never" });
  await createSession(store, { projectPath: "/p", id: "c" }, [
    say("u1", "user", "first task", 1),
    say("a1", "assistant", "done", 2),
    say("u2", "user", "second task", 3),
    say("a2", "assistant", "working", 4, { interrupted: true }),
    say("k1", "user", "Continue", 5, { synthetic: "continue" }),
    say("a3", "assistant", "finished", 6),
  ]);
  await compactSession(store, "c", { keepUserTurns: 1, rollout: false });
  // The current turn is kept whole, from its real prompt on.
  expect((await store.readMessages("c")).messages.map((m) => m.id)).toEqual(["u2", "a2", "k1", "a3"]);
  await store.close();
});

test("a fork taken at an earlier message has the last turn time of what it copied", async () => {
  await using home = await tempHome();
  const store = factory({ home: home.path, fsync: "never" });
  await createSession(store, { projectPath: "/p", id: "p" }, [
    say("u1", "user", "one", 1000),
    say("a1", "assistant", "ok", 2000),
    say("u2", "user", "two", 3000),
  ]);
  const fork = await forkSession(store, "p", { at: "a1" });
  expect(fork.lastTurnAt).toBe(1000);
  expect(fork.turnCount).toBe(1);
  await store.close();
});

test("createSession checks its tags as session tag does", async () => {
  await using home = await tempHome();
  const store = factory({ home: home.path, fsync: "never" });
  for (const tags of [[""], ["a,b"], ["x\ny"]])
    await expect(
      createSession(store, { projectPath: "/p", tags }, [say("u1", "user", "hi", 1)]),
    ).rejects.toMatchObject({
      code: "bad_input",
    });
  const made = await createSession(store, { projectPath: "/p", tags: [" ci ", "ci", "nightly"] }, [
    say("u1", "user", "hi", 1),
  ]);
  expect(made.tags).toEqual(["ci", "nightly"]);
  await store.close();
});
