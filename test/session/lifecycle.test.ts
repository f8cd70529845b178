import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import type { FreecodeError } from "../../src/errors.ts";
import { compactSession } from "../../src/session/compaction.ts";
import {
  appendMessages,
  archiveSession,
  createSession,
  deleteSession,
  forkSession,
  getSession,
  listSessions,
  pinSession,
  purgeSession,
  renameSession,
  restoreSession,
  startSession,
  toStoredMessages,
  unarchiveSession,
} from "../../src/session/lifecycle.ts";
import filesFactory from "../../src/storage/adapters/files.ts";
import memoryFactory from "../../src/storage/adapters/memory.ts";
import type { StorageAdapter } from "../../src/storage/contract.ts";
import { tempHome } from "../_helpers.ts";

const conv = () =>
  toStoredMessages([
    {
      id: "u1",
      role: "user",
      parts: [
        { type: "text", content: "first prompt that is quite long, longer than fifty characters in all" },
      ],
    },
    {
      id: "a1",
      role: "assistant",
      parts: [{ type: "text", content: "ok" }],
      usage: { inputTokens: 5 },
      responseId: "r1",
    },
    { id: "u2", role: "user", parts: [{ type: "text", content: "second" }] },
    { id: "a2", role: "assistant", parts: [{ type: "text", content: "done" }] },
  ]);

for (const [name, make] of [
  ["memory", (home: string) => memoryFactory({ home })],
  ["files", (home: string) => filesFactory({ home, fsync: "never" })],
] as const) {
  describe(`session lifecycle (${name})`, () => {
    const withStore = async (fn: (s: StorageAdapter, home: string) => Promise<void>) => {
      await using home = await tempHome();
      const store = make(home.path);
      try {
        await fn(store, home.path);
      } finally {
        await store.close();
      }
    };

    test("lazy start: nothing exists until the first message, then meta and message together", () =>
      withStore(async (store, home) => {
        const lazy = startSession(store, { projectPath: "/p/x", model: "m1" });
        expect(lazy.created).toBe(false);
        expect(await store.getMeta(lazy.id)).toBeUndefined();
        expect((await listSessions(store)).total).toBe(0);
        if (name === "files") expect(existsSync(join(home, "sessions"))).toBe(false);
        await lazy.append(conv().slice(0, 1));
        await lazy.append(conv().slice(1));
        const meta = await getSession(store, lazy.id);
        expect(meta.messageCount).toBe(4);
        expect(meta.turnCount).toBe(2);
        expect(meta.title).toBe("first prompt that is quite long, longer than fift…");
        expect(meta.titleSource).toBe("prompt");
        expect(meta.model).toBe("m1");
        if (name === "files") expect(readdirSync(join(home, "sessions", "p__x"))).toEqual([lazy.id]);
      }));

    test("create refuses an empty session", () =>
      withStore(async (store) => {
        await expect(createSession(store, { projectPath: "/p" }, [])).rejects.toThrow("first message");
      }));

    test("rename, pin, archive/unarchive, delete/restore keep what they should", () =>
      withStore(async (store) => {
        const meta = await createSession(store, { projectPath: "/p", id: "s1" }, conv());
        expect((await renameSession(store, meta.id, "  new name ")).title).toBe("new name");
        expect((await getSession(store, "s1")).titleSource).toBe("user");
        await pinSession(store, "s1");
        expect((await getSession(store, "s1")).pinned).toBe(true);
        await archiveSession(store, "s1");
        expect((await listSessions(store, { status: "archived" })).items.map((m) => m.id)).toEqual(["s1"]);
        expect((await unarchiveSession(store, "s1")).status).toBe("idle");
        await expect(unarchiveSession(store, "s1")).rejects.toThrow("not archived");
        await store.updateMeta("s1", (m) => ({ ...m, status: "interrupted" }));
        await deleteSession(store, "s1");
        expect((await listSessions(store)).total).toBe(0);
        expect((await listSessions(store, { all: true })).items[0]?.status).toBe("deleted");
        expect((await restoreSession(store, "s1")).status).toBe("interrupted");
        expect((await store.readMessages("s1")).messages).toHaveLength(4);
      }));

    test("purge erases the session; a second purge is not_found", () =>
      withStore(async (store, home) => {
        await createSession(store, { projectPath: "/p", id: "gone" }, conv());
        await store.appendEvents("gone", [{ type: "turn.started", turnId: "t" }]);
        await purgeSession(store, "gone");
        expect(await store.getMeta("gone")).toBeUndefined();
        if (name === "files") {
          expect(existsSync(join(home, "sessions", "p", "gone"))).toBe(false);
          expect(existsSync(join(home, "rollout", "sessions", "gone"))).toBe(false);
        }
        await expect(purgeSession(store, "gone")).rejects.toThrow("no session");
      }));

    test("fork: full copy with parentId and turnCount; --at copies up to the message", () =>
      withStore(async (store) => {
        await createSession(store, { projectPath: "/p", id: "parent", model: "m", provider: "pv" }, conv());
        const full = await forkSession(store, "parent");
        expect(full.parentId).toBe("parent");
        expect(full.turnCount).toBe(2);
        expect(full.model).toBe("m");
        expect(full.title).toEndWith("(fork)");
        expect(full.tokens).toBeUndefined();
        const copied = (await store.readMessages(full.id)).messages;
        expect(copied.map((m) => m.id)).toEqual(["u1", "a1", "u2", "a2"]);
        // The parent's cost stays the parent's: no usage on the copies (a plain sum stays true).
        expect(copied.find((m) => m.id === "a1")).toMatchObject({ responseId: "r1" });
        expect(copied.filter((m) => m.usage !== undefined)).toEqual([]);
        expect((await store.readMessages("parent")).messages[1]!.usage).toEqual({ inputTokens: 5 });
        const at = await forkSession(store, "parent", { at: "a1" });
        expect(at.forkedAt).toBe("a1");
        expect(at.turnCount).toBe(1);
        expect((await store.readMessages(at.id)).messages.map((m) => m.id)).toEqual(["u1", "a1"]);
        // The two histories diverge: appending to the fork leaves the parent alone.
        await store.appendMessages(
          at.id,
          toStoredMessages([{ role: "user", parts: [{ type: "text", content: "x" }] }]),
        );
        expect((await store.readMessages("parent")).messages).toHaveLength(4);
        await expect(forkSession(store, "parent", { at: "nope" })).rejects.toThrow("no message nope");
        // Regression: a full fork of a fork said it was taken at the first fork's message, and a fork
        // of an imported copy claimed the parent's import as its own.
        const again = await forkSession(store, at.id);
        expect([again.parentId, again.forkedAt]).toEqual([at.id, undefined]);
        await store.updateMeta(at.id, (m) => ({ ...m, copiedFrom: { id: "elsewhere", exportedAt: 1 } }));
        expect((await forkSession(store, at.id)).copiedFrom).toBeUndefined();
      }));

    test("regression: a fork --at of a compacted session counts the turns its summary stands for (it counted 3 where the parent said 224)", () =>
      withStore(async (store) => {
        await createSession(store, { projectPath: "/p", id: "parent" }, conv());
        const turn = (n: number) =>
          toStoredMessages([
            { id: `u${n}`, role: "user", parts: [{ type: "text", content: `prompt ${n}` }] },
            { id: `a${n}`, role: "assistant", parts: [{ type: "text", content: `answer ${n}` }] },
          ]);
        await store.appendMessages("parent", [...turn(3), ...turn(4)]);
        await compactSession(store, "parent", { keepUserTurns: 1 });
        const parent = (await store.getMeta("parent"))!;
        expect([
          parent.turnCount,
          (await store.readMessages("parent")).messages.some((m) => m.id === "u3"),
        ]).toEqual([4, false]);
        const at = await forkSession(store, "parent", { at: "a4" });
        expect([at.turnCount, at.summary?.text]).toEqual([4, parent.summary?.text]);
        expect((await forkSession(store, "parent")).turnCount).toBe(4);
      }));

    test("fork: a compaction the parent left half done stays the parent's", () =>
      withStore(async (store) => {
        await createSession(store, { projectPath: "/p", id: "parent" }, conv());
        const plan = { id: "plan-1", summary: "s", messageCount: 4, keepFrom: 2 };
        await store.updateMeta("parent", (m) => ({ ...m, pendingCompaction: plan }));
        const fork = await forkSession(store, "parent");
        expect((await store.getMeta(fork.id)) as Record<string, unknown>).not.toHaveProperty(
          "pendingCompaction",
        );
        expect((await store.getMeta("parent")) as Record<string, unknown>).toHaveProperty(
          "pendingCompaction",
        );
      }));
  });
}

test("regression: appendGivenMessages, exported, refuses a message id the session holds (the README named an option the exported appendMessages does not take)", async () => {
  const lib = await import("../../src/index.ts");
  const store = memoryFactory({ home: "/nonexistent" });
  await lib.createSession(
    store,
    { projectPath: "/p", id: "s1" },
    toStoredMessages([{ id: "a1", role: "user", parts: [{ type: "text", content: "go" }] }]),
  );
  const again = toStoredMessages([
    { id: "a1", role: "assistant", parts: [{ type: "text", content: "full" }] },
  ]);
  await expect(lib.appendGivenMessages(store, "s1", again, [true])).rejects.toMatchObject({
    code: "bad_input",
  });
  expect((await store.readMessages("s1")).messages.map((m) => m.id)).toEqual(["a1"]);
  await store.close();
});

test("regression: the library's listSessions finds a session by the very projectPath it was created with (a trailing / or . found none)", async () => {
  const store = memoryFactory({ home: "/nonexistent" });
  const first = () => toStoredMessages([{ role: "user", parts: [{ type: "text", content: "hi" }] }]);
  await createSession(store, { projectPath: "/work/app/" }, first());
  await createSession(store, { projectPath: "." }, first());
  for (const projectPath of ["/work/app/", "/work/app", "/work/./app"])
    expect([projectPath, (await listSessions(store, { projectPath })).total]).toEqual([projectPath, 1]);
  expect((await listSessions(store, { projectPath: "." })).total).toBe(1);
  expect((await listSessions(store, { projectPath: process.cwd() })).total).toBe(1);
  await store.close();
});

test("regression: the library's createSession, appendMessages and a lazy session refuse token counts that are not whole numbers ≥ 0, storing nothing", async () => {
  await using home = await tempHome();
  const store = filesFactory({ home: home.path });
  const at = 1_700_000_000_000;
  const said = (inputTokens: number) => ({
    id: `a${inputTokens}`,
    role: "assistant" as const,
    parts: [{ type: "text" as const, content: "ok" }],
    timestamp: at,
    usage: { inputTokens, outputTokens: 3 },
  });
  const user = {
    id: "u1",
    role: "user" as const,
    parts: [{ type: "text" as const, content: "hi" }],
    timestamp: at,
  };
  const refusal = (p: Promise<unknown>) =>
    p.then(() => undefined).catch((e) => [e.code, e.message, e.source?.field]);
  expect(await refusal(createSession(store, { projectPath: home.path, id: "s1" }, [user, said(-5)]))).toEqual(
    [
      "bad_input",
      "invalid message: a token count must be a whole number ≥ 0 (got -5)",
      "[1].usage.inputTokens",
    ],
  );
  expect(await store.getMeta("s1")).toBeUndefined();
  await createSession(store, { projectPath: home.path, id: "s1" }, [user, said(5)]);
  expect(await refusal(appendMessages(store, "s1", [said(1.5)]))).toEqual([
    "bad_input",
    "invalid message: a token count must be a whole number ≥ 0 (got 1.5)",
    "[0].usage.inputTokens",
  ]);
  const lazy = startSession(store, { projectPath: home.path, id: "s2" });
  await lazy.append([user]);
  expect((await refusal(lazy.append([said(-1)])))?.[0]).toBe("bad_input");
  expect((await getSession(store, "s1")).tokens).toMatchObject({ input: 5, output: 3 });
  expect((await store.readMessages("s2")).messages.map((m) => m.id)).toEqual(["u1"]);
  await store.close();
});

test("regression: a text part given its words as `text`, not `content`, is refused naming the field (it was stored and shown blank)", () => {
  const refusal = (parts: unknown[]) => {
    try {
      toStoredMessages([{ role: "assistant", parts }]);
    } catch (e) {
      return (e as FreecodeError).oneLine;
    }
    return "accepted";
  };
  expect(refusal([{ type: "text", text: "hello" }])).toBe(
    'invalid message: a text part\'s words go in "content" (not "text") (field parts.0)',
  );
  expect(refusal([{ type: "code", language: "ts" }])).toBe(
    'invalid message: a code part\'s words go in "content" (field parts.0)',
  );
  expect(refusal([{ type: "text", content: "" }])).toBe("accepted");
  expect(refusal([{ type: "tool", tool: { name: "bash", args: {} } }])).toBe("accepted");
  // A tool's output and arguments under other APIs' names were stored and never read.
  expect(refusal([{ type: "tool", tool: { name: "bash", args: {} }, output: "quagga" }])).toBe(
    'invalid message: a tool part\'s output goes in "result" (not "output") (field parts.0)',
  );
  expect(refusal([{ type: "tool", tool: { name: "bash", input: { command: "ls" } } }])).toBe(
    'invalid message: a tool call\'s arguments go in "tool.args" (not "tool.input") (field parts.0)',
  );
  expect(refusal([{ type: "tool", tool: { name: "bash", args: {} }, result: "a.txt" }])).toBe("accepted");
});

test("regression: a token count under another name (the rollout's, Anthropic's) is refused naming the count meant (it was stored, counted nowhere, and barred the response's real usage)", () => {
  const refusal = (usage: Record<string, unknown>) => {
    try {
      toStoredMessages([
        { role: "assistant", parts: [{ type: "text", content: "a" }], usage, responseId: "r1" },
      ]);
    } catch (e) {
      return (e as FreecodeError).oneLine;
    }
    return "accepted";
  };
  const counts =
    "the counts are inputTokens, outputTokens, cacheReadInputTokens, cacheCreationInputTokens, reasoningTokens";
  expect(refusal({ input_tokens: 5 })).toBe(
    `invalid message: unknown token count "input_tokens" (did you mean inputTokens?): ${counts} (field usage.input_tokens)`,
  );
  expect(refusal({ inputTokens: 5, cacheReadTokens: 500 })).toBe(
    `invalid message: unknown token count "cacheReadTokens" (did you mean cacheReadInputTokens?): ${counts} (field usage.cacheReadTokens)`,
  );
  expect(refusal({ completion_tokens: 5 })).toContain("(did you mean outputTokens?)");
  // Other figures are kept as they are: a cost, a total.
  expect(refusal({ inputTokens: 5, costUsd: 0.25, totalTokens: 9, total_tokens: 9 })).toBe("accepted");
});

test("regression: a session put away while a live process runs it comes back running, still that process's (it came back interrupted and a second process took it over); one whose run ended meanwhile comes back idle; a deleted one is not archived", async () => {
  const { markIdle, markRunning } = await import("../../src/session/status.ts");
  const { processStartTime } = await import("../../src/util/lock.ts");
  const { hostname } = await import("node:os");
  const store = memoryFactory({ home: "/nonexistent" });
  const other = Bun.spawn(["sleep", "30"]);
  try {
    const meta = await createSession(store, { projectPath: "/w" }, conv());
    const owner = { pid: other.pid, start: processStartTime(other.pid), host: hostname() };
    await store.updateMeta(meta.id, (m) => ({ ...m, status: "running", owner }));
    for (const [away, back] of [
      [archiveSession, unarchiveSession],
      [deleteSession, restoreSession],
    ] as const) {
      await away(store, meta.id);
      const again = await back(store, meta.id);
      expect([again.status, again.owner]).toEqual(["running", owner]);
      await expect(markRunning(store, meta.id)).rejects.toMatchObject({ code: "conflict" });
    }
    // Put away twice (archived, then deleted and restored): still its owner's.
    await archiveSession(store, meta.id);
    await deleteSession(store, meta.id);
    await restoreSession(store, meta.id);
    const twice = await unarchiveSession(store, meta.id);
    expect([twice.status, twice.owner]).toEqual(["running", owner]);
    // Its process gone while it was put away: its run was cut off.
    await archiveSession(store, meta.id);
    other.kill();
    await other.exited;
    expect((await unarchiveSession(store, meta.id)).status).toBe("interrupted");
    // A run that ended normally while archived: idle.
    await markRunning(store, meta.id);
    await archiveSession(store, meta.id);
    await markIdle(store, meta.id);
    expect((await unarchiveSession(store, meta.id)).status).toBe("idle");
    // The trash is not archived (it left the trash, and restore was refused).
    await deleteSession(store, meta.id);
    await expect(archiveSession(store, meta.id)).rejects.toMatchObject({
      code: "conflict",
      message: expect.stringContaining("is deleted: restore it first"),
    });
    expect((await restoreSession(store, meta.id)).status).toBe("idle");
    // An interrupted session archived, deleted, restored and unarchived is interrupted again (it came
    // back idle: the status before the archive was lost to the delete's).
    await store.updateMeta(meta.id, (m) => ({ ...m, status: "interrupted" }));
    await archiveSession(store, meta.id);
    await deleteSession(store, meta.id);
    expect((await restoreSession(store, meta.id)).status).toBe("archived");
    expect((await unarchiveSession(store, meta.id)).status).toBe("interrupted");
  } finally {
    other.kill();
  }
});
