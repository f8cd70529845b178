import { describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { pendingCompaction } from "../../src/session/_compaction-plan.ts";
import { compactSession, keepLastUserTurns } from "../../src/session/compaction.ts";
import { markInterrupted } from "../../src/session/interrupt.ts";
import { createSession, forkSession, toStoredMessages } from "../../src/session/lifecycle.ts";
import { CONTINUE_TEXT, resumeSession, SUMMARY_INTRO } from "../../src/session/resume.ts";
import { builtinSummarizer } from "../../src/session/summarizer.ts";
import filesFactory from "../../src/storage/adapters/files.ts";
import type { StorageAdapter } from "../../src/storage/contract.ts";
import type { SessionMeta, StoredMessage } from "../../src/storage/records.ts";
import { tempHome } from "../_helpers.ts";
import { conversation, say } from "./_conversation.ts";

describe("keepLastUserTurns", () => {
  test("starts at a user message, never mid-turn", () => {
    const msgs = conversation(4, { decision: true });
    expect(keepLastUserTurns(msgs, 2).map((m) => m.id)).toEqual(["u3", "a3", "b3", "u4", "a4", "b4"]);
    expect(keepLastUserTurns(msgs, 9)).toHaveLength(12);
    expect(keepLastUserTurns(msgs, 0)).toEqual([]);
    // Fewer user turns than asked: nothing is dropped, not even what precedes the first user message.
    expect(keepLastUserTurns([say("x", "assistant", "orphan"), ...msgs.slice(0, 3)], 5)[0]?.id).toBe("x");
    expect(keepLastUserTurns([say("x", "assistant", "orphan"), ...msgs.slice(0, 6)], 1)[0]?.id).toBe("u2");
  });
});

/** `store`, but a process that dies as a compaction folds its summary into the meta (the log is
 * already rewritten, the plan still pending). */
const diesAtSummary = (store: StorageAdapter) =>
  new Proxy(store, {
    get(target, key) {
      if (key === "updateMeta")
        return async (id: string, change: (m: SessionMeta) => SessionMeta) => {
          const before = (await target.getMeta(id))!;
          if (change(before).summary && !before.summary) throw new Error("killed");
          return target.updateMeta(id, change);
        };
      const value = Reflect.get(target, key);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });

describe("resume", () => {
  test("regression: after a crash between the log's rewrite and the summary's move into the meta, resume gives the model the pending summary (it gave the kept messages alone)", async () => {
    await using home = await tempHome();
    const store = filesFactory({ home: home.path, fsync: "never" });
    await createSession(store, { projectPath: "/p", id: "c1" }, conversation(4));
    // The process dies as the summary is folded into the meta: the log is already rewritten.
    const dying = diesAtSummary(store);
    await expect(compactSession(dying, "c1", { keepUserTurns: 1 })).rejects.toThrow("killed");
    const meta = (await store.getMeta("c1"))!;
    expect([meta.summary, meta.pendingCompaction !== undefined]).toEqual([undefined, true]);
    const ctx = await resumeSession(store, "c1");
    expect(ctx.stored.map((m) => m.id)).toEqual(["c1-compaction-summary", "u4", "a4", "b4"]);
    expect(ctx.summaryMessage?.parts[0]?.content).toStartWith(SUMMARY_INTRO);
    // The next compaction finishes the job; resume reads the same then.
    await compactSession(store, "c1", { keepUserTurns: 1 });
    expect((await resumeSession(store, "c1")).summaryMessage).toEqual(ctx.summaryMessage);
    await store.close();
  });

  test("regression: a fork of a session whose compaction a crash left half done takes the pending summary along (it kept the rewritten log alone)", async () => {
    await using home = await tempHome();
    const store = filesFactory({ home: home.path, fsync: "never" });
    await createSession(store, { projectPath: "/p", id: "c2" }, conversation(4));
    const dying = diesAtSummary(store);
    await expect(compactSession(dying, "c2", { keepUserTurns: 1 })).rejects.toThrow("killed");
    const parent = (await store.getMeta("c2"))!;
    const fork = await forkSession(store, "c2");
    expect(fork.summary?.text).toBe(pendingCompaction(parent)!.summary.text);
    expect(fork.pendingCompaction).toBeUndefined();
    expect(fork.turnCount).toBe(4);
    const ctx = await resumeSession(store, fork.id);
    expect(ctx.summaryMessage?.parts[0]?.content).toStartWith(SUMMARY_INTRO);
    // Forked at a kept message, the turns the summary stands for are counted as the parent's.
    expect((await forkSession(store, "c2", { at: "a4" })).turnCount).toBe(4);
    await store.close();
  });

  test("restores provider and model, adds the synthetic continue message after an interrupt", async () => {
    await using home = await tempHome();
    const store = filesFactory({ home: home.path, fsync: "never" });
    const msgs = [say("u1", "user", "go"), say("a1", "assistant", "half", { interrupted: true })];
    await createSession(
      store,
      { projectPath: "/p", id: "r1", provider: "anthropic", model: "claude-x" },
      msgs,
    );
    const ctx = await resumeSession(store, "r1");
    expect(ctx.provider).toBe("anthropic");
    expect(ctx.model).toBe("claude-x");
    expect(ctx.continueMessage?.parts[0]?.content).toBe(CONTINUE_TEXT);
    expect(ctx.messages.at(-1)).toMatchObject({
      role: "user",
      content: [{ type: "text", text: CONTINUE_TEXT }],
    });
    // Not persisted: the log is unchanged; a second resume gives the same message (id and time).
    expect((await store.readMessages("r1")).messages).toHaveLength(2);
    const again = await resumeSession(store, "r1");
    expect(again.continueMessage).toEqual(ctx.continueMessage!);
    expect(ctx.continueMessage!.timestamp).toBe(msgs[1]!.timestamp + 1);
    // Appended by the agent, it is the record: the next resume adds nothing.
    await store.appendMessages("r1", [ctx.continueMessage!]);
    expect((await resumeSession(store, "r1")).continueMessage).toBeUndefined();
    await store.appendMessages("r1", [say("a2", "assistant", "done")]);
    expect((await resumeSession(store, "r1")).continueMessage).toBeUndefined();
    await store.close();
  });
});

describe("compaction", () => {
  test("keeps the last N user turns, stores the summary, rewrites atomically, records compact.occurred", async () => {
    await using home = await tempHome();
    const store = filesFactory({ home: home.path, fsync: "always" });
    await createSession(store, { projectPath: "/p", id: "c1" }, conversation(5, { decision: true }));
    const r = await compactSession(store, "c1", { keepUserTurns: 2, rollout: true });
    expect(r.compacted).toBe(true);
    expect(r.messagesBefore).toBe(15);
    expect(r.messagesAfter).toBe(6);
    expect(r.tokensAfter).toBeLessThan(r.tokensBefore);
    const { messages } = await store.readMessages("c1");
    expect(messages[0]?.id).toBe("u4");
    const meta = await store.getMeta("c1");
    expect(meta?.messageCount).toBe(6);
    expect(meta?.turnCount).toBe(5);
    expect(meta?.summary?.text).toContain("## Task goal\nrequest 1");
    expect(meta?.summary?.text).toContain("- edit f3.ts");
    expect(meta?.summary?.text).toContain("## Key decisions");
    const events = [];
    for await (const e of store.readEvents("c1")) events.push(e.event);
    expect(events).toMatchObject([
      { type: "compact.occurred", beforeTokens: r.tokensBefore, afterTokens: r.tokensAfter, seq: 1 },
    ]);
    const file = `${home.path}/sessions/p/c1/messages.jsonl`;
    expect(readFileSync(file, "utf8").trim().split("\n")).toHaveLength(6);
    // Nothing more to drop the second time round.
    expect((await compactSession(store, "c1", { keepUserTurns: 2 })).compacted).toBe(false);
    await store.close();
  });

  test("a log with an unreadable line is not rewritten: compaction and an interrupt mark refuse", async () => {
    await using home = await tempHome();
    const store = filesFactory({ home: home.path, fsync: "never" });
    await createSession(store, { projectPath: "/p", id: "cx" }, conversation(4));
    await store.close();
    const file = new Bun.Glob("sessions/*/cx/messages.jsonl")
      .scanSync({ cwd: home.path, absolute: true })
      .next().value as string;
    const lines = readFileSync(file, "utf8").split("\n");
    lines[8] = `${lines[8]!.slice(0, 30)}XXXX`; // a damaged line in the middle, its newline intact
    const damaged = lines.join("\n");
    writeFileSync(file, damaged);
    const again = filesFactory({ home: home.path, fsync: "never" });
    const refused = await compactSession(again, "cx", { keepUserTurns: 1, rollout: false }).catch((e) => e);
    expect(refused).toMatchObject({ code: "check_failed", source: { file, line: 9 } });
    expect(refused.message).toContain("cannot compact session cx: 1 message line(s) cannot be read");
    const mark = await markInterrupted(again, "cx", "a2").catch((e) => e);
    expect(mark).toMatchObject({ code: "check_failed" });
    expect(readFileSync(file, "utf8")).toBe(damaged);
    await again.close();
  });

  test("resuming a compacted session leads with its summary, after the system prompt (not stored)", async () => {
    await using home = await tempHome();
    const store = filesFactory({ home: home.path });
    const system = {
      id: "sys",
      role: "system",
      parts: [{ type: "text", content: "You are terse." }],
      timestamp: 1,
    };
    await createSession(store, { projectPath: "/p", id: "c9" }, [
      system as StoredMessage,
      ...conversation(4, { decision: true }),
    ]);
    expect((await resumeSession(store, "c9")).summaryMessage).toBeUndefined();
    await compactSession(store, "c9", { keepUserTurns: 1, rollout: false });
    const ctx = await resumeSession(store, "c9");
    expect(ctx.messages.map((m) => m.role).slice(0, 3)).toEqual(["system", "system", "user"]);
    const text = (ctx.messages[1]!.content[0] as { text: string }).text;
    expect(text).toStartWith(SUMMARY_INTRO);
    expect(text).toContain("## Task goal\nrequest 1");
    expect(ctx.summaryMessage?.synthetic).toBe("compaction-summary");
    expect((await store.readMessages("c9")).messages.map((m) => m.id)).toEqual(["sys", "u4", "a4", "b4"]);
    await store.close();
  });

  test("FREECODE_ROLLOUT=off records nothing", async () => {
    await using home = await tempHome();
    const store = filesFactory({ home: home.path, fsync: "never" });
    await createSession(store, { projectPath: "/p", id: "c2" }, conversation(3, { decision: true }));
    process.env.FREECODE_ROLLOUT = "off";
    try {
      expect((await compactSession(store, "c2", { keepUserTurns: 1 })).compacted).toBe(true);
    } finally {
      delete process.env.FREECODE_ROLLOUT;
    }
    expect(await store.listEventLogs()).toEqual([]);
    await store.close();
  });

  test("recording follows the recorder's rule: off in tests and for 0/false, on when asked", async () => {
    await using home = await tempHome();
    const store = filesFactory({ home: home.path, fsync: "never" });
    expect(process.env.NODE_ENV).toBe("test");
    const logged = async (id: string, flag?: string) => {
      await createSession(store, { projectPath: "/p", id }, conversation(3, { decision: true }));
      if (flag === undefined) delete process.env.FREECODE_ROLLOUT;
      else process.env.FREECODE_ROLLOUT = flag;
      try {
        await compactSession(store, id, { keepUserTurns: 1 });
      } finally {
        delete process.env.FREECODE_ROLLOUT;
      }
      return (await store.listEventLogs()).includes(id);
    };
    expect(await logged("t-default")).toBe(false);
    expect(await logged("t-zero", "0")).toBe(false);
    expect(await logged("t-on", "1")).toBe(true);
    await store.close();
  });

  test("the built-in summarizer is deterministic", async () => {
    const dropped = conversation(3, { decision: true });
    const a = await builtinSummarizer.summarize({ dropped, kept: [] });
    const b = await builtinSummarizer.summarize({ dropped: structuredClone(dropped), kept: [] });
    expect(a).toEqual(b);
    expect(a.taskGoal).toBe("request 1");
    expect(a.completedSteps).toEqual(["edit f1.ts", "edit f2.ts", "edit f3.ts"]);
    expect(a.keyDecisions[0]).toContain("decided");
  });

  test("a message appended while summarizing is not lost", async () => {
    await using home = await tempHome();
    const store = filesFactory({ home: home.path, fsync: "never" });
    await createSession(store, { projectPath: "/p", id: "c3" }, conversation(3, { decision: true }));
    let raced = false;
    const racing = {
      name: "racing",
      async summarize(input: Parameters<typeof builtinSummarizer.summarize>[0]) {
        if (!raced) {
          raced = true;
          await store.appendMessages(
            "c3",
            toStoredMessages([{ id: "late", role: "user", parts: [{ type: "text", content: "late" }] }]),
          );
        }
        return builtinSummarizer.summarize(input);
      },
    };
    await compactSession(store, "c3", { keepUserTurns: 1, summarizer: racing, rollout: false });
    expect((await store.readMessages("c3")).messages.map((m) => m.id)).toEqual(["late"]);
    await store.close();
  });
});
