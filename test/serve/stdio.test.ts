/**
 * `freecode serve --stdio` as a real child process: one JSON-RPC message (or batch) per line on
 * stdin, one answer line per request on stdout, nothing for notifications, logs only on stderr,
 * exit 0 at the end of stdin. Answers are written as each line is handled, so a client can wait
 * for one before it sends the next.
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { BUN, ROOT, runCli, tempHome } from "../_helpers.ts";
import { userSays } from "./_serve.ts";

const line = (method: string, params?: unknown, id?: unknown) =>
  JSON.stringify({
    jsonrpc: "2.0",
    method,
    ...(params === undefined ? {} : { params }),
    ...(id === undefined ? {} : { id }),
  });

describe("serve --stdio", () => {
  test("answers each request line in order, skips notifications, exits 0 at end of stdin", async () => {
    await using home = await tempHome();
    const input = [
      line("session.create", { projectPath: "/p", messages: [userSays("hi")], id: "s1" }, 1),
      "",
      line("session.rename", { id: "s1", title: "quiet" }), // a notification: no answer
      "{not json",
      line("session.get", { id: "s1" }, "two"),
      JSON.stringify(
        [line("session.get", { id: "nope" }, 3), line("session.list")].map((l) => JSON.parse(l)),
      ),
      JSON.stringify([JSON.parse(line("session.list"))]), // a batch of notifications: nothing
      `${line("session.list", {}, null)}\r`,
      "[]",
    ].join("\n");
    const r = runCli(["serve", "--stdio"], { home: home.path, stdin: `${input}\n` });
    expect(r.code, r.stderr).toBe(0);
    const answers = r.stdout
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(answers).toHaveLength(6);
    expect(answers[0]).toMatchObject({ id: 1, result: { id: "s1", title: "hi" } });
    expect(answers[1]).toMatchObject({ id: null, error: { code: -32700 } });
    expect(answers[2]).toMatchObject({ id: "two", result: { id: "s1", title: "quiet" } });
    expect(answers[3]).toEqual([
      {
        jsonrpc: "2.0",
        id: 3,
        error: { code: -32000, message: "no session nope", data: { code: "not_found", exit: 3 } },
      },
    ]);
    expect(answers[4]).toMatchObject({ id: null, result: { total: 1 } });
    expect(answers[5]).toMatchObject({
      id: null,
      error: { code: -32600, message: "invalid request: empty batch" },
    });
    expect(r.stderr).toBe("");
  });

  test("a client can wait for each answer before sending the next line", async () => {
    await using home = await tempHome();
    const proc = Bun.spawn([BUN, join(ROOT, "src/cli/main.ts"), "serve", "--stdio"], {
      cwd: ROOT,
      env: { ...process.env, FREECODE_HOME: home.path, NO_COLOR: "1" },
      stdin: "pipe",
      stdout: "pipe",
      stderr: "pipe",
    });
    const reader = proc.stdout.getReader();
    let buffered = "";
    const nextLine = async (): Promise<Record<string, unknown>> => {
      while (!buffered.includes("\n")) {
        const { done, value } = await reader.read();
        if (done) throw new Error(`stdout ended; stderr: ${await new Response(proc.stderr).text()}`);
        buffered += new TextDecoder().decode(value);
      }
      const at = buffered.indexOf("\n");
      const text = buffered.slice(0, at);
      buffered = buffered.slice(at + 1);
      return JSON.parse(text);
    };
    proc.stdin.write(`${line("session.create", { projectPath: "/p", messages: [userSays("one")] }, 1)}\n`);
    proc.stdin.flush();
    const created = (await nextLine()) as { result: { id: string } };
    proc.stdin.write(
      `${line("session.append", { id: created.result.id, messages: [userSays("two")] }, 2)}\n`,
    );
    proc.stdin.flush();
    expect(await nextLine()).toMatchObject({ id: 2, result: { messageCount: 2 } });
    proc.stdin.write(`${line("session.messages", { id: created.result.id }, 3)}\n`);
    proc.stdin.end();
    expect(await nextLine()).toMatchObject({
      id: 3,
      result: { messages: [{ role: "user" }, { role: "user" }] },
    });
    expect(await proc.exited).toBe(0);
  });

  test("a line over --max-bytes is answered with an error and skipped; invalid UTF-8 is a parse error", async () => {
    await using home = await tempHome();
    const big = line("session.create", { projectPath: "/p", messages: [userSays("x".repeat(5000))] }, 1);
    const bytes = Buffer.concat([
      Buffer.from(`${big}\n`),
      Buffer.from([0x7b, 0xff, 0x7d, 0x0a]),
      Buffer.from(`${line("session.list", {}, 2)}\n`),
    ]);
    const r = runCli(["serve", "--stdio", "--max-bytes", "1000"], { home: home.path, stdin: bytes });
    expect(r.code, r.stderr).toBe(0);
    const answers = r.stdout
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(answers).toEqual([
      {
        jsonrpc: "2.0",
        id: null,
        error: { code: -32600, message: "invalid request: the line is over the limit of 1000 bytes" },
      },
      {
        jsonrpc: "2.0",
        id: null,
        error: { code: -32700, message: "parse error: the line is not valid UTF-8" },
      },
      { jsonrpc: "2.0", id: 2, result: { items: [], total: 0 } },
    ]);
  });

  test("HTTP flags do not apply to --stdio", async () => {
    await using home = await tempHome();
    const r = runCli(["serve", "--stdio", "--port", "1"], { home: home.path, stdin: "" });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--port does not apply to --stdio");
  });
});
