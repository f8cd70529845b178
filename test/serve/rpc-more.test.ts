/**
 * The state and label methods of the JSON-RPC interface — session.resume, archive / unarchive,
 * pin / unpin, markRunning / markIdle / markInterrupted, tag — against a real `freecode serve`
 * over HTTP on loopback, then over `--stdio`. Over HTTP the server is the owner `markRunning`
 * records: the session stays `running` while it lives and is recovered as `interrupted` by the next
 * server once it is gone.
 */
import { describe, expect, test } from "bun:test";
import { parseJson, runCli, tempHome } from "../_helpers.ts";
import {
  assistantSays,
  type RpcAnswer,
  rpcOk,
  type Served,
  serve,
  serveForFile,
  userSays,
} from "./_serve.ts";

type Meta = { id: string; status: string; pinned?: boolean; tags?: string[] } & Record<string, unknown>;
type Resumed = {
  meta: Meta;
  provider: string | null;
  model: string | null;
  continued: boolean;
  continueMessage: { id: string; timestamp: number; synthetic: string } | null;
  summarized: boolean;
  messages: { role: string; sourceId: string; content: unknown[] }[];
  issues: unknown[];
};

const served = serveForFile();

const ok = <T = Meta>(method: string, params?: unknown, on: Served = served.server) =>
  rpcOk<T>(on, method, params);
const fails = async (method: string, params: unknown): Promise<NonNullable<RpcAnswer["error"]>> => {
  const r = await served.server.rpc(method, params);
  expect(r.result).toBeUndefined();
  return r.error!;
};

/** The random id and time of the synthetic continue message, made comparable between two resumes. */
function stable(r: Resumed): Resumed {
  const id = r.continueMessage?.id;
  return {
    ...r,
    continueMessage: r.continueMessage && { ...r.continueMessage, id: "continue", timestamp: 0 },
    messages: r.messages.map((m) => (m.sourceId === id ? { ...m, sourceId: "continue" } : m)),
  };
}

describe("state and label methods over HTTP", () => {
  test("session.resume returns what `session resume --json` prints, with the continue message", async () => {
    await ok("session.create", {
      id: "res",
      projectPath: "/work/app",
      provider: "anthropic",
      model: "claude-sonnet-4",
      messages: [userSays("fix it"), assistantSays("working on", { interrupted: true })],
    });
    const resumed = await ok<Resumed>("session.resume", { id: "res" });
    expect(resumed).toMatchObject({
      meta: { id: "res" },
      provider: "anthropic",
      model: "claude-sonnet-4",
      continued: true,
      continueMessage: { role: "user", synthetic: "continue" },
      summarized: false,
      issues: [],
    });
    expect(resumed.messages.map((m) => m.role)).toEqual(["user", "assistant", "user"]);
    const cli = parseJson<Resumed>(runCli(["session", "resume", "res", "--json"], { home: served.home }));
    expect(stable(resumed)).toEqual(stable(cli));

    await ok("session.create", { id: "plain", projectPath: "/p", messages: [userSays("hi")] });
    expect(await ok<Resumed>("session.resume", { id: "plain" })).toMatchObject({
      provider: null,
      model: null,
      continued: false,
      continueMessage: null,
    });
    expect((await fails("session.resume", { id: "nope" })).data).toEqual({ code: "not_found", exit: 3 });
  });

  test("archive / unarchive and pin / unpin, with the library's conflicts", async () => {
    await ok("session.create", { id: "arc", projectPath: "/p", messages: [userSays("hi")] });
    expect(await ok("session.archive", { id: "arc" })).toMatchObject({
      status: "archived",
      previousStatus: "idle",
    });
    expect(await ok("session.list", { status: "idle" })).not.toMatchObject({ items: [{ id: "arc" }] });
    expect(await ok("session.unarchive", { id: "arc" })).toMatchObject({ status: "idle" });
    const again = await fails("session.unarchive", { id: "arc" });
    expect(again).toMatchObject({ code: -32000, data: { code: "conflict", exit: 4 } });
    expect(again.message).toContain("not archived");

    expect((await ok("session.pin", { id: "arc" })).pinned).toBe(true);
    const listed = await ok<{ items: Meta[] }>("session.list");
    expect(listed.items[0]!.id).toBe("arc");
    expect((await ok("session.pin", { id: "arc", pinned: false })).pinned).toBe(false);
    expect((await ok("session.pin", { id: "arc", pinned: true })).pinned).toBe(true);
    expect((await ok("session.unpin", { id: "arc" })).pinned).toBe(false);
    expect(await fails("session.pin", { id: "arc", pinned: "yes" })).toMatchObject({
      code: -32602,
      data: { field: "pinned" },
    });
    expect(await fails("session.unpin", { id: "arc", pinned: true })).toMatchObject({ code: -32602 });
    expect((await fails("session.archive", { id: "../x" })).code).toBe(-32602);
  });

  test("markRunning records the server as owner; markIdle clears it; list does not recover a live owner", async () => {
    await ok("session.create", { id: "run", projectPath: "/p", messages: [userSays("go")] });
    const running = await ok<Meta & { owner: { pid: number; host: string } }>("session.markRunning", {
      id: "run",
    });
    expect(running.status).toBe("running");
    expect(running.owner.pid).toBe(served.server.proc.pid);
    // session.list recovers crashed sessions first: the owner (this server) is alive, so it stays.
    expect(await ok("session.list", { status: "running" })).toMatchObject({
      total: 1,
      items: [{ id: "run" }],
    });
    const idle = await ok("session.markIdle", { id: "run" });
    expect(idle.status).toBe("idle");
    expect("owner" in idle).toBe(false);
    // Archived sessions are not marked running (the library's no-op).
    await ok("session.archive", { id: "run" });
    expect((await ok("session.markRunning", { id: "run" })).status).toBe("archived");
    expect((await fails("session.markRunning", { id: "ghost" })).data).toEqual({
      code: "not_found",
      exit: 3,
    });
    expect((await fails("session.markIdle", { id: "ghost" })).data).toEqual({ code: "not_found", exit: 3 });
  });

  test("markInterrupted marks the named message (or stores the partial one) and the session", async () => {
    const created = await ok("session.create", {
      id: "int",
      projectPath: "/p",
      messages: [userSays("long task"), assistantSays("step 1", { id: "a1" })],
    });
    expect(created.status).toBe("idle");
    await ok("session.markRunning", { id: "int" });
    const marked = await ok("session.markInterrupted", { id: "int", messageId: "a1" });
    expect(marked.status).toBe("interrupted");
    expect("owner" in marked).toBe(false);
    const read = await ok<{ messages: { id: string; interrupted?: boolean }[] }>("session.messages", {
      id: "int",
    });
    expect(read.messages.at(-1)).toMatchObject({ id: "a1", interrupted: true });
    expect((await ok<Resumed>("session.resume", { id: "int" })).continued).toBe(true);

    // A message not stored yet: the partial is stored under the given id, marked interrupted.
    await ok("session.append", { id: "int", messages: [userSays("continue")] });
    await ok("session.markInterrupted", {
      id: "int",
      messageId: "a2",
      partial: assistantSays("half an ans"),
    });
    const after = await ok<{ messages: { id: string; interrupted?: boolean; parts: unknown[] }[] }>(
      "session.messages",
      { id: "int" },
    );
    expect(after.messages.at(-1)).toMatchObject({
      id: "a2",
      interrupted: true,
      parts: [{ type: "text", content: "half an ans" }],
    });
    // Without a message id, only the session is marked.
    await ok("session.markIdle", { id: "int" });
    expect((await ok("session.markInterrupted", { id: "int" })).status).toBe("interrupted");

    expect(await fails("session.markInterrupted", { id: "int", partial: assistantSays("x") })).toMatchObject({
      code: -32000,
      data: { code: "bad_input" },
    });
    expect(await fails("session.markInterrupted", { id: "int", messageId: "a/b" })).toMatchObject({
      code: -32602,
      data: { field: "messageId" },
    });
    expect((await fails("session.markInterrupted", { id: "ghost" })).data).toEqual({
      code: "not_found",
      exit: 3,
    });
    // Regression: a partial the store refuses leaves the session as it was (it was marked interrupted
    // and the refusal came back).
    expect((await ok("session.markRunning", { id: "int" })).status).toBe("running");
    const deep = JSON.parse(`${"[".repeat(1500)}${"]".repeat(1500)}`);
    const refused = await fails("session.markInterrupted", {
      id: "int",
      messageId: "a3",
      partial: { role: "assistant", parts: [{ type: "text", content: "x", meta: deep }] },
    });
    expect(refused).toMatchObject({ code: -32000, data: { code: "bad_input" } });
    expect((await ok("session.get", { id: "int" })).status).toBe("running");
  });

  test("session.tag adds and removes in order, checks tags, and agrees with the CLI", async () => {
    const created = await ok("session.create", {
      id: "tg",
      projectPath: "/p",
      messages: [userSays("hi")],
      tags: [" seed", "seed", "eval"],
    });
    expect(created.tags).toEqual(["seed", "eval"]);
    type Tagged = { id: string; tags: string[] };
    expect(await ok<Tagged>("session.tag", { id: "tg", add: ["bug", "ui"], remove: ["seed"] })).toEqual({
      id: "tg",
      tags: ["eval", "bug", "ui"],
    });
    expect(await ok<Tagged>("session.tag", { id: "tg" })).toEqual({ id: "tg", tags: ["eval", "bug", "ui"] });
    // What the server wrote is what the CLI reads.
    const shown = parseJson<{ meta: Meta }>(
      runCli(["session", "show", "tg", "--json"], { home: served.home }),
    );
    expect(shown.meta.tags).toEqual(["eval", "bug", "ui"]);
    const bad = await fails("session.tag", { id: "tg", add: ["ok", "a\nb"] });
    expect(bad).toMatchObject({ code: -32000, data: { code: "bad_input", exit: 2 } });
    expect(bad.message).toContain("(field add[1])");
    expect(await fails("session.tag", { id: "tg", add: "bug" })).toMatchObject({
      code: -32602,
      data: { field: "add" },
    });
    expect(await fails("session.tag", { id: "tg", tags: ["x"] })).toMatchObject({ code: -32602 });
    expect(
      await fails("session.create", { projectPath: "/p", messages: [userSays("x")], tags: [""] }),
    ).toMatchObject({
      code: -32000,
      data: { code: "bad_input" },
    });
    expect(
      (await ok<{ tags: string[] }>("session.tag", { id: "tg", remove: ["eval", "bug", "ui"] })).tags,
    ).toEqual([]);
  });
});

describe("what a client gives is checked as the CLI checks it", () => {
  test("a relative projectPath is refused; a list filter resolves a trailing /; titles are a user's", async () => {
    for (const projectPath of [".", "rel/x"]) {
      const e = await fails("session.create", { projectPath, messages: [userSays("hi")] });
      expect(e.code).toBe(-32602);
      expect(e.message).toContain("projectPath must be an absolute path");
    }
    await ok("session.create", { id: "abs", projectPath: "/work/abs", messages: [userSays("hi")] });
    // A Windows client's path is kept as it gave it, not put under the server's directory.
    const win = await ok("session.create", { projectPath: "C:\\Users\\me\\app", messages: [userSays("hi")] });
    expect(win.projectPath).toBe("C:\\Users\\me\\app");
    expect(
      (await ok<{ items: Meta[] }>("session.list", { projectPath: "C:\\Users\\me\\app" })).items,
    ).toHaveLength(1);
    const listed = await ok<{ items: Meta[] }>("session.list", { projectPath: "/work/abs/" });
    expect(listed.items.map((m) => m.id)).toEqual(["abs"]);
    expect((await fails("session.list", { projectPath: "work/abs" })).code).toBe(-32602);
    const badTitles: [string, string][] = [
      ["   ", "title must not be empty"],
      ["T".repeat(501), "title must be at most 500 characters"],
    ];
    for (const [title, message] of badTitles)
      expect(
        (await fails("session.create", { projectPath: "/p", title, messages: [userSays("hi")] })).message,
      ).toContain(message);
    const made = await ok("session.create", {
      projectPath: "/p",
      title: "  two\nlines ",
      messages: [userSays("hi")],
    });
    expect(made.title).toBe("two lines");
  });
});

describe("the owner is the serving process", () => {
  test("a session a stopped server left running is recovered as interrupted by the next one", async () => {
    await using own = await tempHome();
    const first = await serve(own.path);
    await ok("session.create", { id: "left", projectPath: "/p", messages: [userSays("go")] }, first);
    expect((await ok("session.markRunning", { id: "left" }, first)).status).toBe("running");
    expect(await first.stop()).toBe(0);
    await using second = await serve(own.path);
    expect(await ok("session.list", { status: "interrupted" }, second)).toMatchObject({
      total: 1,
      items: [{ id: "left", status: "interrupted" }],
    });
  });
});

describe("state and label methods over --stdio", () => {
  test("every new method answers on its line; a session left running is recovered by the next process", async () => {
    await using own = await tempHome();
    const line = (id: number, method: string, params: unknown) =>
      JSON.stringify({ jsonrpc: "2.0", id, method, params });
    const input = [
      line(1, "session.create", {
        id: "s",
        projectPath: "/p",
        model: "m1",
        messages: [userSays("hi"), assistantSays("par", { id: "a1" })],
      }),
      line(2, "session.markRunning", { id: "s" }),
      line(3, "session.markInterrupted", { id: "s", messageId: "a1" }),
      line(4, "session.resume", { id: "s" }),
      line(5, "session.markIdle", { id: "s" }),
      line(6, "session.tag", { id: "s", add: ["x", "y"] }),
      line(7, "session.pin", { id: "s" }),
      line(8, "session.unpin", { id: "s" }),
      line(9, "session.archive", { id: "s" }),
      line(10, "session.unarchive", { id: "s" }),
      line(11, "session.markRunning", { id: "s" }),
    ].join("\n");
    const r = runCli(["serve", "--stdio"], { home: own.path, stdin: `${input}\n` });
    expect(r.code, r.stderr).toBe(0);
    const answers = r.stdout
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l) as RpcAnswer);
    expect(answers.map((a) => a.id)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    for (const a of answers) expect(a.error).toBeUndefined();
    const result = (i: number) => answers[i - 1]!.result as Record<string, unknown>;
    const owner = (result(2) as { owner: { pid: number } }).owner;
    expect(result(2).status).toBe("running");
    expect(owner.pid).not.toBe(process.pid);
    expect(result(3).status).toBe("interrupted");
    expect(result(4)).toMatchObject({ model: "m1", continued: true, meta: { id: "s" } });
    // markIdle ends a running session only: an interrupted one stays interrupted (the library's rule).
    expect(result(5).status).toBe("interrupted");
    expect(result(6)).toEqual({ id: "s", tags: ["x", "y"] });
    expect(result(7).pinned).toBe(true);
    expect(result(8).pinned).toBe(false);
    expect(result(9).status).toBe("archived");
    expect(result(10).status).toBe("interrupted");
    expect(result(11)).toMatchObject({ status: "running", owner: { pid: owner.pid } });

    // That process has exited: the next one's session.list recovers the session it left running.
    const next = runCli(["serve", "--stdio"], {
      home: own.path,
      stdin: `${line(1, "session.list", { status: "interrupted" })}\n`,
    });
    expect(JSON.parse(next.stdout)).toMatchObject({ result: { total: 1, items: [{ id: "s" }] } });
  });
});
