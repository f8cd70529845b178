/**
 * Every JSON-RPC method against a real `freecode serve` process over HTTP, on a real files store:
 * what an agent in another language would do, from `session.create` to `session.delete {purge}`,
 * with the same results the `--json` commands print (checked against the CLI where it matters).
 * Then the protocol over HTTP (parse errors, 204 for notifications, batches), and a SIGTERM that
 * arrives while a compaction waits on its summarizer: the call still finishes, then exit 0.
 */
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseJson, runCli, tempHome } from "../_helpers.ts";
import { assistantSays, rpcOk, serve, serveForFile, userSays } from "./_serve.ts";

const served = serveForFile();

type Meta = { id: string; title: string; status: string; messageCount: number; parentId?: string } & Record<
  string,
  unknown
>;

/** The result of a call that must succeed. */
const ok = <T = Meta>(method: string, params?: unknown) => rpcOk<T>(served.server, method, params);

const turns = (n: number) =>
  Array.from({ length: n }, (_, i) => [
    userSays(`request ${i + 1}`),
    assistantSays(`finished ${i + 1}`),
  ]).flat();

describe("JSON-RPC methods over HTTP", () => {
  test("session.create, get, messages, list, append, rename, delete, restore, fork, compact", async () => {
    const created = await ok("session.create", {
      projectPath: "/work/app",
      messages: turns(3),
      title: "parser fix",
      model: "claude-sonnet-4",
      provider: "anthropic",
      id: "rpc-session",
    });
    expect(created).toMatchObject({
      id: "rpc-session",
      title: "parser fix",
      titleSource: "user",
      projectPath: "/work/app",
      status: "idle",
      model: "claude-sonnet-4",
      provider: "anthropic",
      messageCount: 6,
      turnCount: 3,
    });
    // What the server wrote is what the CLI reads.
    const shown = parseJson<{ meta: Meta }>(
      runCli(["session", "show", "rpc-session", "--json"], { home: served.home }),
    );
    expect(shown.meta).toEqual(await ok("session.get", { id: "rpc-session" }));

    const read = await ok<{ messages: { id: string; role: string }[]; issues: unknown[] }>(
      "session.messages",
      {
        id: "rpc-session",
      },
    );
    expect(read.issues).toEqual([]);
    expect(read.messages.map((m) => m.role)).toEqual([
      "user",
      "assistant",
      "user",
      "assistant",
      "user",
      "assistant",
    ]);

    const other = await ok("session.create", {
      projectPath: "/work/other",
      messages: [userSays("hello there")],
    });
    expect(other.title).toBe("hello there");
    const all = await ok<{ items: Meta[]; total: number }>("session.list");
    expect(all.total).toBe(2);
    expect(new Set(all.items.map((m) => m.id))).toEqual(new Set(["rpc-session", other.id]));
    expect(await ok("session.list", { projectPath: "/work/other" })).toMatchObject({
      total: 1,
      items: [{ id: other.id }],
    });
    expect(await ok("session.list", { project: "/work/app", status: ["idle"] })).toMatchObject({ total: 1 });
    expect(await ok("session.list", { limit: 1, offset: 1 })).toMatchObject({
      total: 2,
      items: [expect.any(Object)],
    });

    const appended = await ok("session.append", { id: "rpc-session", messages: turns(1) });
    expect(appended).toMatchObject({ id: "rpc-session", messageCount: 8, turnCount: 4 });

    expect(await ok("session.rename", { id: other.id, title: "  renamed  " })).toMatchObject({
      title: "renamed",
      titleSource: "user",
    });
    expect(await ok("session.delete", { id: other.id })).toMatchObject({
      status: "deleted",
      previousStatus: "idle",
    });
    expect(await ok("session.list", { status: "idle" })).toMatchObject({ total: 1 });
    expect(await ok("session.list", { all: true })).toMatchObject({ total: 2 });
    expect(await ok("session.restore", { id: other.id })).toMatchObject({ status: "idle" });

    const fork = await ok("session.fork", { id: "rpc-session" });
    expect(fork).toMatchObject({ parentId: "rpc-session", title: "parser fix (fork)", messageCount: 8 });
    const at = read.messages[1]!.id;
    expect(await ok("session.fork", { id: "rpc-session", at, title: "first turn" })).toMatchObject({
      parentId: "rpc-session",
      title: "first turn",
      messageCount: 2,
      forkedAt: at,
    });

    const compacted = await ok<Record<string, unknown>>("session.compact", { id: "rpc-session", keep: 1 });
    expect(compacted).toMatchObject({
      id: "rpc-session",
      compacted: true,
      messagesBefore: 8,
      messagesAfter: 2,
    });
    expect(await ok("session.get", { id: "rpc-session" })).toMatchObject({
      messageCount: 2,
      summary: expect.objectContaining({ summarizer: "builtin" }),
    });
    expect(await ok("session.compact", { id: fork.id, keep: 10 })).toMatchObject({ compacted: false });
  });

  test("rollout.append and rollout.events; session.export {rollout} and session.import", async () => {
    await ok("session.create", { projectPath: "/p", messages: [userSays("go")], id: "rolled" });
    const appended = await ok<Record<string, unknown>>("rollout.append", {
      id: "rolled",
      events: [
        { type: "turn.started", turnId: "t0" },
        { type: "model.request", turnId: "t0", provider: "anthropic", model: "claude-sonnet-4" },
        { type: "turn.started", turnId: "t1", id: "my-event-id", timestamp: 1_700_000_000_000 },
      ],
    });
    expect(appended).toEqual({ id: "rolled", appended: 3, firstSeq: 1, lastSeq: 3 });
    const { events, issues } = await ok<{ events: Record<string, unknown>[]; issues: unknown[] }>(
      "rollout.events",
      {
        id: "rolled",
      },
    );
    expect(issues).toEqual([]);
    expect(events.map((e) => [e.seq, e.type, e.aggregateID])).toEqual([
      [1, "turn.started", "rolled"],
      [2, "model.request", "rolled"],
      [3, "turn.started", "rolled"],
    ]);
    expect(events[2]).toMatchObject({ id: "my-event-id", timestamp: 1_700_000_000_000 });
    // The same events the CLI prints.
    const cat = runCli(["rollout", "cat", "rolled"], { home: served.home });
    expect(
      cat.stdout
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l)),
    ).toEqual(events);
    const tail = await ok<{ events: { seq: number }[] }>("rollout.events", {
      id: "rolled",
      fromSeq: 2,
      limit: 1,
    });
    expect(tail.events.map((e) => e.seq)).toEqual([2]);
    // A session with no log yet has no events; an id nothing knows is not found.
    expect(await ok<unknown>("rollout.events", { id: "rpc-session" })).toEqual({ events: [], issues: [] });
    expect((await served.server.rpc("rollout.events", { id: "nobody" })).error?.data).toEqual({
      code: "not_found",
      exit: 3,
    });

    const doc = await ok<{ format: string; meta: Meta; rollout: unknown[]; messages: unknown[] }>(
      "session.export",
      {
        id: "rolled",
        rollout: true,
      },
    );
    expect(doc).toMatchObject({ format: "freecode.session", version: 1, meta: { id: "rolled" } });
    expect(doc.rollout).toEqual(events);
    expect((await ok<Record<string, unknown>>("session.export", { id: "rolled" })).rollout).toBeUndefined();

    const copy = await ok("session.import", { document: doc, id: "rolled-copy" });
    expect(copy).toMatchObject({
      id: "rolled-copy",
      copiedFrom: { id: "rolled", exportedAt: expect.any(Number) },
    });
    expect((await ok<{ events: unknown[] }>("rollout.events", { id: "rolled-copy" })).events).toHaveLength(3);
    const taken = await served.server.rpc("session.import", { document: doc, id: "rolled-copy" });
    expect(taken.error).toMatchObject({ code: -32000, data: { code: "conflict", exit: 4 } });
    const bad = await served.server.rpc("session.import", { document: { ...doc, format: "zip" } });
    expect(bad.error).toMatchObject({ code: -32000, data: { code: "bad_input", exit: 2 } });
    expect(bad.error?.message).toMatch(/^params\.document: not a freecode session export.*\(field format\)$/);
  });

  test("session.delete {purge} erases the session for good", async () => {
    await ok("session.create", { projectPath: "/p", messages: [userSays("bye")], id: "doomed" });
    await ok("rollout.append", { id: "doomed", events: [{ type: "turn.started", turnId: "t" }] });
    expect(await ok<unknown>("session.delete", { id: "doomed", purge: true })).toEqual({
      id: "doomed",
      purged: true,
    });
    const gone = await served.server.rpc("session.get", { id: "doomed" });
    expect(gone.error).toEqual({
      code: -32000,
      message: "no session doomed",
      data: { code: "not_found", exit: 3 },
    });
    expect((await served.server.rpc("rollout.events", { id: "doomed" })).error?.data).toMatchObject({
      code: "not_found",
    });
    expect((await served.server.rpc("session.restore", { id: "doomed" })).error?.data).toMatchObject({
      code: "not_found",
    });
    expect(
      (await served.server.rpc("session.delete", { id: "doomed", purge: true })).error?.data,
    ).toMatchObject({
      code: "not_found",
    });
  });

  test("regression: session.delete {purge} takes the purged text out of search at once, on a sqlite store (it stayed found, and a log recorded again under the id was not)", async () => {
    await using home = await tempHome();
    const env = { FREECODE_STORE: "sqlite" };
    await using server = await serve(home.path, [], { env });
    const h = { home: home.path, env };
    const log = (secret: string) => [
      {
        type: "function.call",
        id: "E1",
        tool: "bash",
        callId: "k1",
        args: { command: `export TOKEN=${secret}` },
      },
    ];
    await rpcOk(server, "rollout.append", { id: "rr", events: log("hunter2secret") });
    expect(runCli(["search", "hunter2secret"], h).stdout).toContain("hunter2secret");
    expect(await rpcOk(server, "session.delete", { id: "rr", purge: true })).toEqual({
      id: "rr",
      purged: true,
    });
    await rpcOk(server, "rollout.append", { id: "rr", events: log("redacted") });
    expect(runCli(["search", "hunter2secret"], h).stdout.trim()).toBe("no matches");
    expect(runCli(["search", "redacted"], h).stdout).toContain("redacted");
  });

  test("bad params name the field: ids, messages, events", async () => {
    const cases: [string, unknown, RegExp, string][] = [
      ["session.get", { id: "a..b" }, /id must not contain '\.\.'/, "id"],
      ["session.get", { id: "../etc" }, /id may contain only letters/, "id"],
      ["session.get", {}, /missing field "id"/, "id"],
      ["session.create", { projectPath: "/p", messages: [] }, /give at least one message/, "messages"],
      [
        "session.create",
        { projectPath: "/p", messages: [userSays("a"), { role: "robot", parts: [] }] },
        /role must be one of user, assistant, system/,
        "messages.1.role",
      ],
      ["session.list", { status: "sleeping" }, /Invalid type/, "status"],
      ["session.list", { limit: -1 }, /Invalid value/, "limit"],
      ["session.compact", { id: "x", keep: 0 }, /Invalid value/, "keep"],
      ["session.delete", { id: "x", purge: "yes" }, /Expected boolean/, "purge"],
      ["rollout.append", { id: "x", events: [] }, /give at least one event/, "events"],
    ];
    for (const [method, params, message, field] of cases) {
      const r = await served.server.rpc(method, params);
      expect(r.error?.code, method).toBe(-32602);
      expect(r.error?.message).toMatch(message);
      expect(r.error?.message).toEndWith(`(field ${field})`);
      expect(r.error?.data).toEqual({ field });
    }
    // An event the catalogue refuses is bad input, naming the event and its field; nothing is written.
    const r = await served.server.rpc("rollout.append", {
      id: "rpc-session",
      events: [{ type: "turn.started", turnId: "t" }, { type: "no.such.type" }],
    });
    expect(r.error).toMatchObject({ code: -32000, data: { code: "bad_input", exit: 2 } });
    expect(r.error?.message).toBe('unknown event type "no.such.type" (field events[1].type)');
    const seq = await served.server.rpc("rollout.append", {
      id: "rpc-session",
      events: [{ type: "turn.started", turnId: "t", seq: 4 }],
    });
    expect(seq.error?.message).toBe("seq is assigned by the store: leave it out (field events[0].seq)");
    expect(await ok<unknown>("rollout.events", { id: "rpc-session" })).toEqual({ events: [], issues: [] });
  });
});

describe("JSON-RPC over HTTP: the protocol", () => {
  const post = (body: NonNullable<RequestInit["body"]>) =>
    served.server.fetch("/rpc", { method: "POST", body });

  test("a parse error is HTTP 200 with -32700; invalid UTF-8 too", async () => {
    for (const body of ["{oops", new Uint8Array([0x7b, 0xc3, 0x28, 0x7d])]) {
      const r = await post(body);
      expect(r.status).toBe(200);
      expect(r.headers.get("content-type")).toBe("application/json");
      expect(await r.json()).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32700 } });
    }
  });

  test("notifications get 204 and no body; a batch mixes answers and notifications", async () => {
    const note = await post(JSON.stringify({ jsonrpc: "2.0", method: "session.list" }));
    expect(note.status).toBe(204);
    expect(await note.text()).toBe("");
    const onlyNotes = await post(
      JSON.stringify([
        { jsonrpc: "2.0", method: "session.list" },
        { jsonrpc: "2.0", method: "nope" },
      ]),
    );
    expect(onlyNotes.status).toBe(204);
    const batch = await post(
      JSON.stringify([
        { jsonrpc: "2.0", method: "session.get", params: { id: "rpc-session" }, id: "a" },
        { jsonrpc: "2.0", method: "session.rename", params: { id: "rpc-session", title: "by batch" } },
        { jsonrpc: "2.0", method: "session.get", params: { id: "rpc-session" }, id: 2 },
        { jsonrpc: "2.0", method: "nope", id: null },
      ]),
    );
    expect(batch.status).toBe(200);
    const answers = (await batch.json()) as { id: unknown; result?: Meta; error?: { code: number } }[];
    expect(answers.map((a) => a.id)).toEqual(["a", 2, null]);
    expect(answers[1]!.result!.title).toBe("by batch"); // the notification ran, in order
    expect(answers[2]!.error!.code).toBe(-32601);
    const empty = await post("[]");
    expect(await empty.json()).toMatchObject({ id: null, error: { code: -32600 } });
  });
});

describe("serve: shutdown", () => {
  test("SIGTERM while a compaction waits on its summarizer: the call finishes, then exit 0", async () => {
    const asked = Promise.withResolvers<void>();
    const release = Promise.withResolvers<void>();
    const summary = { taskGoal: "g", completedSteps: ["s"], keyDecisions: [], currentState: "c" };
    const provider = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      async fetch(req) {
        await req.json();
        asked.resolve();
        await release.promise;
        return Response.json({
          choices: [{ message: { role: "assistant", content: JSON.stringify(summary) } }],
        });
      },
    });
    await using h = await tempHome();
    writeFileSync(
      join(h.path, "config.json"),
      JSON.stringify({
        summarizer: { type: "http", url: `http://127.0.0.1:${provider.port}/v1`, model: "m" },
      }),
    );
    try {
      await using s = await serve(h.path);
      const created = await s.rpc("session.create", { projectPath: "/p", messages: turns(3), id: "long" });
      expect(created.error).toBeUndefined();
      const compaction = s.rpc("session.compact", { id: "long", keep: 1 });
      await asked.promise; // the compaction is in flight, inside the server
      s.proc.kill("SIGTERM");
      // The server stops accepting new connections while it waits.
      const deadline = Date.now() + 10_000;
      let refused = false;
      while (!refused && Date.now() < deadline) {
        refused = await fetch(`${s.url}/health`).then(
          () => false,
          () => true,
        );
        if (!refused) await Bun.sleep(20);
      }
      expect(refused).toBe(true);
      expect(s.proc.exitCode).toBeNull();
      release.resolve();
      const answer = await compaction;
      expect(answer.result).toMatchObject({ id: "long", compacted: true, messagesAfter: 2 });
      expect(await s.exited()).toBe(0);
      expect(s.stderr()).toContain("shutting down");
      // The store was closed cleanly: the compaction is whole in the files.
      const shown = parseJson<{ meta: Meta }>(
        runCli(["session", "show", "long", "--json"], { home: h.path }),
      );
      expect(shown.meta).toMatchObject({
        messageCount: 2,
        summary: expect.objectContaining({ summarizer: "http:m" }),
      });
    } finally {
      release.resolve();
      await provider.stop(true);
    }
  });
});
