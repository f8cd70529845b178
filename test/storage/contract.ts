/**
 * The storage conformance suite: runs unmodified against every adapter. It talks only to the raw
 * adapter (never to adapter internals); a case an adapter cannot support is skipped with a reason.
 * Usage: `runContractSuite("files", (home) => factory({ home }))`.
 */
import { describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { FreecodeError } from "../../src/errors.ts";
import { MAX_EVENT_BYTES } from "../../src/storage/_events.ts";
import type { EventRead, StorageAdapter } from "../../src/storage/contract.ts";
import type { SessionMeta, StoredMessage } from "../../src/storage/records.ts";
import { tempHome } from "../_helpers.ts";

export interface ContractOptions {
  /** Case name → why this adapter skips it. */
  skip?: Record<string, string>;
  /** The adapter keeps data across a close and a new instance on the same home. */
  persistent?: boolean;
}

let counter = 0;
/** A valid meta with sensible defaults. */
export function makeMeta(over: Partial<SessionMeta> = {}): SessionMeta {
  const now = 1_700_000_000_000 + ++counter;
  return {
    id: `s-${counter}`,
    title: "a session",
    projectPath: "/home/a/my-project",
    status: "idle",
    createdAt: now,
    updatedAt: now,
    turnCount: 0,
    messageCount: 0,
    ...over,
  };
}

/** A text message. */
export function msg(
  id: string,
  role: StoredMessage["role"] = "user",
  over: Partial<StoredMessage> = {},
): StoredMessage {
  return {
    id,
    role,
    parts: [{ type: "text", content: `text of ${id}` }],
    timestamp: 1_700_000_000_000,
    ...over,
  };
}

async function collect(it: AsyncIterable<EventRead>) {
  const out: EventRead[] = [];
  for await (const x of it) out.push(x);
  return out;
}

async function rejects(p: Promise<unknown>, code: string) {
  try {
    await p;
  } catch (error) {
    expect(error).toBeInstanceOf(FreecodeError);
    expect((error as FreecodeError).code).toBe(code as FreecodeError["code"]);
    return;
  }
  throw new Error(`expected a ${code} error`);
}

/** Run the conformance suite against the adapter `make` opens on a fresh home. */
export function runContractSuite(
  name: string,
  make: (home: string) => StorageAdapter | Promise<StorageAdapter>,
  opts: ContractOptions = {},
) {
  const it = (title: string, fn: (a: StorageAdapter, home: string) => Promise<void>) => {
    const reason = opts.skip?.[title];
    if (reason) {
      test.skip(`${title} (skipped: ${reason})`, () => {});
      return;
    }
    test(title, async () => {
      await using home = await tempHome();
      const adapter = await make(home.path);
      try {
        await fn(adapter, home.path);
      } finally {
        await adapter.close();
      }
    });
  };

  describe(`storage contract: ${name}`, () => {
    it("create then get returns the meta with messageCount from the messages", async (a) => {
      const meta = makeMeta({ title: "hello" });
      await a.createSession(meta, [msg("m1"), msg("m2", "assistant")]);
      const got = await a.getMeta(meta.id);
      expect(got?.title).toBe("hello");
      expect(got?.messageCount).toBe(2);
      expect((await a.readMessages(meta.id)).messages.map((m) => m.id)).toEqual(["m1", "m2"]);
    });

    it("create with an existing id is a conflict and changes nothing", async (a) => {
      const meta = makeMeta();
      await a.createSession(meta, [msg("m1")]);
      await rejects(a.createSession({ ...meta, title: "other" }, [msg("x")]), "conflict");
      expect((await a.getMeta(meta.id))?.title).toBe("a session");
      expect((await a.readMessages(meta.id)).messages).toHaveLength(1);
    });

    it("unknown sessions: getMeta undefined, others not_found", async (a) => {
      expect(await a.getMeta("nope")).toBeUndefined();
      await rejects(a.appendMessages("nope", [msg("m")]), "not_found");
      await rejects(a.readMessages("nope"), "not_found");
      await rejects(
        a.updateMeta("nope", (m) => m),
        "not_found",
      );
      expect(await a.purgeSession("nope")).toBe(false);
      // One message for one condition, whatever the adapter.
      expect(await a.readMessages("nope").catch((e) => e.message)).toBe("no session nope");
      expect(await a.updateMeta("nope", (m) => m).catch((e) => e.message)).toBe("no session nope");
    });

    it("a listing's limit and offset are whole numbers ≥ 0", async (a) => {
      await a.createSession(makeMeta(), [msg("m1")]);
      for (const q of [{ limit: 1.5 }, { limit: -1 }, { offset: 0.5 }, { offset: -2 }, { limit: Number.NaN }])
        await rejects(a.listSessions(q), "bad_input");
      expect((await a.listSessions({ limit: 0 })).total).toBe(1);
    });

    it("bad ids are rejected before anything is written", async (a) => {
      for (const id of ["a/b", "..", "a..b", "a\0b", "x".repeat(129), ""]) {
        await rejects(a.createSession(makeMeta({ id }), [msg("m1")]), "bad_input");
        await rejects(a.appendEvents(id, [{ type: "turn.started", turnId: "t" }]), "bad_input");
      }
      expect((await a.listSessions({ all: true })).total).toBe(0);
      expect(await a.listEventLogs()).toEqual([]);
    });

    it("bad messages are rejected whole: nothing of the batch is written", async (a) => {
      const meta = makeMeta();
      await a.createSession(meta, [msg("m1")]);
      const bad = { ...msg("m3"), role: "robot" } as unknown as StoredMessage;
      await rejects(a.appendMessages(meta.id, [msg("m2"), bad]), "bad_input");
      await rejects(a.appendMessages(meta.id, [msg("m2"), msg("m2")]), "bad_input");
      expect((await a.readMessages(meta.id)).messages.map((m) => m.id)).toEqual(["m1"]);
      expect((await a.getMeta(meta.id))?.messageCount).toBe(1);
    });

    it("an id a caller gave that the session holds is refused under the append's own lock", async (a) => {
      const meta = makeMeta();
      await a.createSession(meta, [msg("m1")]);
      const refused = a.appendMessages(meta.id, [msg("m2"), msg("m1")], { given: [false, true] });
      await rejects(refused, "bad_input");
      await refused.catch((e: { source?: { field?: string } }) => expect(e.source?.field).toBe("[1].id"));
      // Not given: not looked for (a library append with its own fresh ids).
      await a.appendMessages(meta.id, [msg("m2")], { given: [false] });
      await rejects(a.appendMessages(meta.id, [msg("m2")], { given: [true] }), "bad_input");
      expect((await a.readMessages(meta.id)).messages.map((m) => m.id)).toEqual(["m1", "m2"]);
    });

    it("append folds counters: messages, turns, tokens, updatedAt", async (a) => {
      const meta = makeMeta({ updatedAt: 10 });
      await a.createSession(meta, [msg("m1")]);
      await a.appendMessages(meta.id, [
        msg("m2", "assistant", {
          usage: { inputTokens: 10, outputTokens: 5 },
          responseId: "r1",
          timestamp: 50,
        }),
        msg("m3", "assistant", { responseId: "r1", timestamp: 60 }),
        msg("m4", "user", { timestamp: 70 }),
        msg("m5", "assistant", {
          usage: { inputTokens: 1, outputTokens: 2 },
          responseId: "r2",
          timestamp: 80,
        }),
      ]);
      const got = await a.getMeta(meta.id);
      expect(got?.messageCount).toBe(5);
      expect(got?.turnCount).toBe(1);
      expect(got?.lastTurnAt).toBe(70);
      expect(got?.updatedAt).toBe(80);
      expect(got?.tokens).toMatchObject({ input: 11, output: 7 });
    });

    it("a second usage on one provider response is rejected (regression: double-counted cost)", async (a) => {
      const meta = makeMeta();
      await a.createSession(meta, [msg("m1")]);
      await a.appendMessages(meta.id, [
        msg("m2", "assistant", { usage: { inputTokens: 1 }, responseId: "r1" }),
      ]);
      await rejects(
        a.appendMessages(meta.id, [msg("m3", "assistant", { usage: { inputTokens: 1 }, responseId: "r1" })]),
        "bad_input",
      );
      await rejects(
        a.appendMessages(meta.id, [
          msg("m4", "assistant", { usage: { inputTokens: 1 }, responseId: "r9" }),
          msg("m5", "assistant", { usage: { inputTokens: 1 }, responseId: "r9" }),
        ]),
        "bad_input",
      );
      expect((await a.getMeta(meta.id))?.tokens?.input).toBe(1);
      expect((await a.readMessages(meta.id)).messages).toHaveLength(2);
    });

    it("updateMeta is a read-modify-write that keeps the id", async (a) => {
      const meta = makeMeta();
      await a.createSession(meta, [msg("m1")]);
      const out = await a.updateMeta(meta.id, (m) => ({
        ...m,
        title: "renamed",
        id: "hijack",
        pinned: true,
      }));
      expect(out.id).toBe(meta.id);
      expect((await a.getMeta(meta.id))?.title).toBe("renamed");
      expect((await a.getMeta(meta.id))?.pinned).toBe(true);
      await rejects(
        a.updateMeta(meta.id, (m) => ({ ...m, status: "bogus" as never })),
        "bad_input",
      );
    });

    it("list: filters, hides deleted unless all, sorts by updatedAt desc, paginates, pinned first", async (a) => {
      const metas = [
        makeMeta({ updatedAt: 100, projectPath: "/p/one" }),
        makeMeta({ updatedAt: 300, projectPath: "/p/one" }),
        makeMeta({ updatedAt: 200, projectPath: "/p/two", status: "archived" }),
        makeMeta({ updatedAt: 400, projectPath: "/p/two", status: "deleted" }),
        makeMeta({ updatedAt: 50, projectPath: "/p/two", pinned: true }),
      ];
      for (const m of metas) await a.createSession(m, [msg("m1", "user", { timestamp: 1 })]);
      const ids = (p: { items: SessionMeta[] }) => p.items.map((m) => m.id);
      const [m0, m1, m2, m3, m4] = metas.map((m) => m.id) as [string, string, string, string, string];
      const all = await a.listSessions({});
      expect(ids(all)).toEqual([m1, m2, m0, m4]);
      expect(all.total).toBe(4);
      expect(ids(await a.listSessions({ all: true }))).toEqual([m3, m1, m2, m0, m4]);
      expect(ids(await a.listSessions({ projectPath: "/p/one" }))).toEqual([m1, m0]);
      expect(ids(await a.listSessions({ status: "archived" }))).toEqual([m2]);
      expect(ids(await a.listSessions({ status: ["deleted", "archived"] }))).toEqual([m3, m2]);
      const page = await a.listSessions({ limit: 2, offset: 1 });
      expect(ids(page)).toEqual([m2, m0]);
      expect(page.total).toBe(4);
      expect(ids(await a.listSessions({ pinnedFirst: true, limit: 2 }))).toEqual([m4, m1]);
    });

    it("list sees updates and purges", async (a) => {
      const meta = makeMeta({ updatedAt: 1 });
      await a.createSession(meta, [msg("m1", "user", { timestamp: 1 })]);
      expect((await a.listSessions({})).total).toBe(1);
      await a.updateMeta(meta.id, (m) => ({ ...m, title: "new title" }));
      expect((await a.listSessions({})).items[0]?.title).toBe("new title");
      await a.appendMessages(meta.id, [msg("m2", "user", { timestamp: 99 })]);
      expect((await a.listSessions({})).items[0]?.updatedAt).toBe(99);
      // Totals follow status changes under every filter (the files index keeps them by trigger).
      await a.updateMeta(meta.id, (m) => ({ ...m, status: "archived" }));
      expect((await a.listSessions({})).total).toBe(1);
      expect((await a.listSessions({ status: "archived" })).total).toBe(1);
      expect((await a.listSessions({ status: "idle" })).total).toBe(0);
      expect((await a.listSessions({ projectPath: meta.projectPath })).total).toBe(1);
      await a.updateMeta(meta.id, (m) => ({ ...m, status: "deleted" }));
      expect((await a.listSessions({})).total).toBe(0);
      expect((await a.listSessions({ all: true })).total).toBe(1);
      expect(await a.purgeSession(meta.id)).toBe(true);
      expect((await a.listSessions({ all: true })).total).toBe(0);
    });

    it("replaceMessages swaps the whole log and keeps history counters", async (a) => {
      const meta = makeMeta();
      await a.createSession(meta, [msg("m1")]);
      await a.appendMessages(meta.id, [msg("m2", "assistant"), msg("m3", "user"), msg("m4", "assistant")]);
      await a.replaceMessages(meta.id, [msg("m3", "user"), msg("m4", "assistant")]);
      expect((await a.readMessages(meta.id)).messages.map((m) => m.id)).toEqual(["m3", "m4"]);
      const got = await a.getMeta(meta.id);
      expect(got?.messageCount).toBe(2);
      expect(got?.turnCount).toBe(1);
      await a.appendMessages(meta.id, [msg("m5", "user")]);
      expect((await a.readMessages(meta.id)).messages.map((m) => m.id)).toEqual(["m3", "m4", "m5"]);
    });

    it("replaceMessages with ifMessageCount refuses when the log moved on", async (a) => {
      const meta = makeMeta();
      await a.createSession(meta, [msg("m1"), msg("m2", "assistant")]);
      await rejects(a.replaceMessages(meta.id, [msg("m2", "assistant")], { ifMessageCount: 1 }), "conflict");
      expect((await a.readMessages(meta.id)).messages).toHaveLength(2);
      await a.replaceMessages(meta.id, [msg("m2", "assistant")], { ifMessageCount: 2 });
      expect((await a.readMessages(meta.id)).messages).toHaveLength(1);
    });

    it("purge erases meta, messages and events", async (a) => {
      const meta = makeMeta();
      await a.createSession(meta, [msg("m1")]);
      await a.appendEvents(meta.id, [{ type: "turn.started", turnId: "t1" }]);
      expect(await a.purgeSession(meta.id)).toBe(true);
      expect(await a.getMeta(meta.id)).toBeUndefined();
      expect(await collect(a.readEvents(meta.id))).toEqual([]);
      expect(await a.listEventLogs()).toEqual([]);
      await a.createSession(meta, [msg("again")]);
      expect((await a.readMessages(meta.id)).messages.map((m) => m.id)).toEqual(["again"]);
    });

    it("purge `unless`: a reason given on the meta under the purge's lock refuses it (conflict), nothing erased", async (a) => {
      const meta = makeMeta();
      await a.createSession(meta, [msg("m1")]);
      await a.appendEvents(meta.id, [{ type: "turn.started", turnId: "t1" }]);
      const seen: number[] = [];
      await rejects(
        a.purgeSession(meta.id, {
          unless: (m) => {
            seen.push(m.messageCount);
            return "it changed";
          },
        }),
        "conflict",
      );
      expect(seen).toEqual([1]);
      expect((await a.readMessages(meta.id)).messages).toHaveLength(1);
      expect(await a.listEventLogs()).toEqual([meta.id]);
      expect(await a.purgeSession(meta.id, { unless: () => undefined })).toBe(true);
      expect(await a.getMeta(meta.id)).toBeUndefined();
      expect(await a.listEventLogs()).toEqual([]);
    });

    it("eventLogStamp moves with every change of a log, a log purged and recorded again with as few events included", async (a) => {
      expect(await a.eventLogStamp?.("st-1")).toBeUndefined();
      await a.appendEvents("st-1", [{ type: "turn.started", turnId: "t1" }]);
      const one = await a.eventLogStamp?.("st-1");
      expect(one).toBeString();
      await a.appendEvents("st-1", [{ type: "turn.started", turnId: "t2" }]);
      const two = await a.eventLogStamp?.("st-1");
      expect(two).not.toBe(one);
      expect(await a.eventLogStamp?.("st-1")).toBe(two);
      await a.purgeSession("st-1");
      await a.appendEvents("st-1", [
        { type: "turn.started", turnId: "x1" },
        { type: "turn.started", turnId: "x2" },
      ]);
      expect(await a.eventLogStamp?.("st-1")).not.toBe(two);
    });

    it("lastEventAt (where the store has it) is the time of the log's last event", async (a) => {
      if (!a.lastEventAt) return;
      expect(await a.lastEventAt("la-1")).toBeUndefined();
      await a.appendEvents("la-1", [
        { type: "turn.started", turnId: "t1", timestamp: 5_000 },
        { type: "turn.started", turnId: "t2", timestamp: 7_000 },
      ]);
      await a.appendEvents("la-1", [{ type: "turn.started", turnId: "t3", timestamp: 6_000 }]);
      expect(await a.lastEventAt("la-1")).toBe(6_000);
    });

    it("events: seq strictly increasing from 1, envelope filled, fromSeq filter", async (a) => {
      const first = await a.appendEvents("ev-1", [
        { type: "turn.started", turnId: "t1" },
        { type: "function.call", tool: "read", callId: "c1" },
      ]);
      expect(first.map((e) => e.seq)).toEqual([1, 2]);
      expect(first[0]?.aggregateID).toBe("ev-1");
      expect(typeof first[0]?.id).toBe("string");
      const second = await a.appendEvents("ev-1", [
        { type: "turn.aborted", turnId: "t1", id: "mine", timestamp: 5 },
      ]);
      expect(second[0]).toMatchObject({ seq: 3, id: "mine", timestamp: 5 });
      expect(await a.appendEvents("ev-1", [])).toEqual([]);
      const read = await collect(a.readEvents("ev-1"));
      expect(read.map((r) => r.event?.seq)).toEqual([1, 2, 3]);
      expect(read[1]?.event).toMatchObject({ type: "function.call", tool: "read", callId: "c1" });
      expect((await collect(a.readEvents("ev-1", { fromSeq: 3 }))).map((r) => r.event?.seq)).toEqual([3]);
      await a.appendEvents("ev-2", [{ type: "turn.started", turnId: "x" }]);
      expect((await a.listEventLogs()).sort()).toEqual(["ev-1", "ev-2"]);
      await rejects(a.appendEvents("ev-1", [{ type: "" } as never]), "bad_input");
    });

    it("regression: a refused or empty batch leaves no log behind (files kept an empty one, which store migrate could not copy)", async (a) => {
      await rejects(
        a.appendEvents("ev-bad", [{ type: "turn.started", timestamp: 1e300 } as never]),
        "bad_input",
      );
      expect(await a.appendEvents("ev-none", [])).toEqual([]);
      expect(await a.listEventLogs()).toEqual([]);
      expect(await collect(a.readEvents("ev-bad"))).toEqual([]);
      // And the log, once written to, counts from 1.
      const [first] = await a.appendEvents("ev-bad", [{ type: "turn.started", turnId: "t" }]);
      expect(first?.seq).toBe(1);
      expect(await a.listEventLogs()).toEqual(["ev-bad"]);
    });

    it("regression: fromSeq means the same in every adapter (2.5 reads from 3: sqlite and sqljs read from 2), and one that is not a number is refused", async (a) => {
      await a.appendEvents(
        "ev-from",
        [1, 2, 3, 4, 5].map((i) => ({ type: "turn.started", turnId: `t${i}` })),
      );
      const seqs = async (fromSeq: number) =>
        (await collect(a.readEvents("ev-from", { fromSeq }))).map((r) => r.event?.seq);
      expect(await seqs(2.5)).toEqual([3, 4, 5]);
      expect(await seqs(-3)).toEqual([1, 2, 3, 4, 5]);
      expect(await seqs(Number.POSITIVE_INFINITY)).toEqual([]);
      await rejects(collect(a.readEvents("ev-from", { fromSeq: Number.NaN })), "bad_input");
      await rejects(collect(a.readEvents("ev-from", { fromSeq: "3" as never })), "bad_input");
    });

    it("regression: a log's session id may not start with '.', as a session's may not", async (a) => {
      const e = await a
        .appendEvents(".hidden", [{ type: "turn.started", turnId: "t" }])
        .catch((error) => error);
      expect([e.code, e.message]).toEqual([
        "bad_input",
        `invalid session id ".hidden": session id must not start with '.' (dot-names are reserved)`,
      ]);
      expect(await a.listEventLogs()).toEqual([]);
    });

    it("regression: an event whose line would be longer than readers read is refused, nothing of its batch stored", async (a) => {
      const big = "x".repeat(MAX_EVENT_BYTES);
      const batch = [
        { type: "turn.started", turnId: "t" },
        { type: "function.output", tool: "cat", callId: "c1", output: big },
      ];
      const e = await a.appendEvents("ev-big", batch as never).catch((error) => error);
      expect(e.code).toBe("bad_input");
      expect(e.message).toMatch(
        /^invalid event: function\.output is 3355\d{4} bytes as a line: a log line must be shorter than 32 MiB \(33554432 bytes\), as readers skip longer ones$/,
      );
      expect(e.source?.field).toBe("[1]");
      expect(await collect(a.readEvents("ev-big"))).toEqual([]);
      // A line of the limit exactly is refused too (a reader skips it); one byte less is taken.
      const exact = await a
        .appendEvents("ev-big", [{ type: "function.output", tool: "cat", callId: "c1", output: "" }] as never)
        .then((r) => JSON.stringify(r[0]).length);
      const pad = (len: number) => "y".repeat(len);
      const atLimit = {
        type: "function.output",
        tool: "cat",
        callId: "c1",
        output: pad(MAX_EVENT_BYTES - exact),
      };
      expect((await a.appendEvents("ev-big", [atLimit] as never).catch((e) => e)).code).toBe("bad_input");
      // Just under the line limit is taken.
      const fits = big.slice(0, MAX_EVENT_BYTES - 1000);
      await a.appendEvents("ev-big", [{ type: "function.output", tool: "cat", callId: "c1", output: fits }]);
      expect((await collect(a.readEvents("ev-big"))).map((r) => r.event?.seq)).toEqual([1, 2]);
    });

    it("events: seq continues after reopening the store", async (a, home) => {
      if (!opts.persistent) return;
      await a.appendEvents("ev-p", [{ type: "turn.started", turnId: "t1" }]);
      await a.close();
      const b = await make(home);
      try {
        const more = await b.appendEvents("ev-p", [{ type: "turn.started", turnId: "t2" }]);
        expect(more[0]?.seq).toBe(2);
      } finally {
        await b.close();
      }
    });

    it("reading a home that does not exist makes nothing there", async (_a, home) => {
      if (!opts.persistent) return;
      // A mistyped --home given to `session list` or `trace` must not be made.
      const absent = join(home, "absent");
      const b = await make(absent);
      try {
        expect(await b.getMeta("s-none")).toBeUndefined();
        expect((await b.listSessions({})).items).toEqual([]);
        expect(await collect(b.readEvents("s-none"))).toEqual([]);
        expect(await b.listEventLogs()).toEqual([]);
        await rejects(b.readMessages("s-none"), "not_found");
        expect(existsSync(absent)).toBe(false);
        // The first write makes it, and what it wrote is read back.
        const meta = makeMeta();
        await b.createSession(meta, [msg("m1")]);
        expect((await b.getMeta(meta.id))?.messageCount).toBe(1);
        expect((await b.listSessions({})).items.map((m) => m.id)).toEqual([meta.id]);
      } finally {
        await b.close();
      }
      expect(existsSync(absent)).toBe(true);
    });

    it("a closed adapter refuses every call, alike on every adapter (files went on, memory emptied itself and took new writes)", async (a) => {
      const meta = makeMeta();
      await a.createSession(meta, [msg("m1")]);
      await a.close();
      await rejects(a.getMeta(meta.id), "internal");
      await rejects(a.appendEvents(meta.id, [{ type: "turn.started", turnId: "t" }]), "internal");
      await rejects(a.appendMessages(meta.id, [msg("m2")]), "internal");
      await rejects(a.listSessions({}), "internal");
      await rejects(
        (async () => {
          for await (const _ of a.readEvents(meta.id)) break;
        })(),
        "internal",
      );
      await a.close(); // a second close is no error
    });

    it("data survives close and reopen", async (a, home) => {
      if (!opts.persistent) return;
      const meta = makeMeta();
      await a.createSession(meta, [msg("m1")]);
      await a.appendMessages(meta.id, [
        msg("m2", "assistant", { usage: { inputTokens: 3 }, responseId: "r" }),
      ]);
      await a.putContextCache(meta.id, { requestedFiles: ["a.ts"] });
      await a.close();
      const b = await make(home);
      try {
        expect((await b.getMeta(meta.id))?.messageCount).toBe(2);
        expect((await b.getMeta(meta.id))?.tokens?.input).toBe(3);
        expect((await b.readMessages(meta.id)).messages).toHaveLength(2);
        expect(await b.getContextCache(meta.id)).toEqual({ requestedFiles: ["a.ts"] });
        expect((await b.listSessions({})).items.map((m) => m.id)).toEqual([meta.id]);
      } finally {
        await b.close();
      }
    });

    it("context cache round-trips and starts empty", async (a) => {
      const meta = makeMeta();
      await a.createSession(meta, [msg("m1")]);
      expect(await a.getContextCache(meta.id)).toBeUndefined();
      await a.putContextCache(meta.id, { files: { "a.ts": "x" }, n: 1 });
      expect(await a.getContextCache(meta.id)).toEqual({ files: { "a.ts": "x" }, n: 1 });
      await rejects(a.getContextCache("nope"), "not_found");
      // What JSON cannot hold is refused alike, and the stored cache stays.
      const cyclic: Record<string, unknown> = {};
      cyclic.self = cyclic;
      for (const bad of [undefined, () => 1, { n: 1n }, cyclic])
        await rejects(a.putContextCache(meta.id, bad), "bad_input");
      expect(await a.getContextCache(meta.id)).toEqual({ files: { "a.ts": "x" }, n: 1 });
    });

    it("returned values are copies: mutating them does not change the store", async (a) => {
      const meta = makeMeta();
      await a.createSession(meta, [msg("m1")]);
      const got = (await a.getMeta(meta.id))!;
      got.title = "mutated";
      const read = await a.readMessages(meta.id);
      read.messages[0]!.id = "mutated";
      expect((await a.getMeta(meta.id))?.title).toBe("a session");
      expect((await a.readMessages(meta.id)).messages[0]?.id).toBe("m1");
    });

    it("numbers JSON cannot hold, and times past a date's range, are refused whole", async (a) => {
      const meta = makeMeta();
      for (const bad of [Number.POSITIVE_INFINITY, Number.NaN, 9e15])
        await rejects(a.createSession({ ...meta, createdAt: bad }, [msg("m0")]), "bad_input");
      expect(await a.getMeta(meta.id)).toBeUndefined();
      await a.createSession(meta, [msg("m1")]);
      const bad: StoredMessage[] = [
        msg("inf", "user", { timestamp: Number.POSITIVE_INFINITY }),
        msg("far", "user", { timestamp: 9e15 }),
        msg("usage", "assistant", { usage: { inputTokens: Number.POSITIVE_INFINITY } }),
      ];
      for (const m of bad) await rejects(a.appendMessages(meta.id, [msg("ok"), m]), "bad_input");
      for (const e of [{ timestamp: 9e15 }, { timestamp: "x" }, { timestamp: Number.NaN }, { id: "" }])
        await rejects(
          a.appendEvents(meta.id, [{ type: "turn.started", turnId: "t", ...e } as never]),
          "bad_input",
        );
      expect((await a.readMessages(meta.id)).messages.map((m) => m.id)).toEqual(["m1"]);
      expect((await a.getMeta(meta.id))?.messageCount).toBe(1);
      expect(await collect(a.readEvents(meta.id))).toEqual([]);
      // The range's edge is a time like any other.
      await a.appendMessages(meta.id, [msg("edge", "user", { timestamp: 8.64e15 })]);
      expect((await a.readMessages(meta.id)).messages.at(-1)?.timestamp).toBe(8.64e15);
    });

    it("ids named like Object.prototype's members are sessions like any other", async (a, home) => {
      const ids = ["__proto__", "constructor", "toString", "hasOwnProperty", "prototype"];
      for (const id of ids) {
        await a.createSession(makeMeta({ id, title: `t ${id}` }), [msg("m1")]);
        await a.appendEvents(id, [{ type: "turn.started", turnId: "t" }]);
      }
      expect(({} as Record<string, unknown>).meta).toBeUndefined(); // nothing leaked into prototypes
      expect(await a.getMeta("valueOf")).toBeUndefined();
      const check = async (store: StorageAdapter) => {
        expect((await store.listSessions({ all: true })).items.map((m) => m.id).sort()).toEqual(
          [...ids].sort(),
        );
        for (const id of ids) {
          expect((await store.getMeta(id))?.title).toBe(`t ${id}`);
          expect((await collect(store.readEvents(id))).map((r) => r.event?.type)).toEqual(["turn.started"]);
        }
      };
      await check(a);
      if (opts.persistent) {
        await a.close();
        const again = await make(home);
        try {
          await check(again);
        } finally {
          await again.close();
        }
      }
    });

    it("unknown fields survive a round-trip (loose records)", async (a) => {
      const meta = { ...makeMeta(), futureField: { x: 1 } } as SessionMeta;
      await a.createSession(meta, [{ ...msg("m1"), extra: "kept" } as StoredMessage]);
      expect((await a.getMeta(meta.id)) as Record<string, unknown>).toMatchObject({ futureField: { x: 1 } });
      expect((await a.readMessages(meta.id)).messages[0] as Record<string, unknown>).toMatchObject({
        extra: "kept",
      });
    });
  });
}
