/**
 * Regression tests for the audit of export, sync and serve: hostile nesting is a one-line
 * `bad_input` on every way in (was a stack overflow: 500, -32603, exit 70); a document the store
 * would refuse is refused on upload, naming the field; empty or negative documents; huge list
 * limits; unusable hosts, tokens, public URLs and TTLs are usage errors; a sync endpoint's control
 * characters never reach the terminal; the upload quota; a directory given to `session import`.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runCli, runCliAsync, tempDir, tempHome } from "../_helpers.ts";
import { type Served, serve, userSays } from "./_serve.ts";

/** An array `depth` deep, built as text (a JS value that deep could not be stringified to send it). */
const nested = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`;

let home: { path: string } & AsyncDisposable;
let server: Served;
let doc: Record<string, unknown>;

beforeAll(async () => {
  home = await tempHome();
  server = await serve(home.path, ["--max-stored-bytes", "20000"]);
  const created = await server.rpc("session.create", {
    projectPath: "/work/app",
    messages: [userSays("fix the parser"), { role: "assistant", parts: [{ type: "text", content: "done" }] }],
  });
  doc = (await server.rpc("session.export", { id: (created.result as { id: string }).id })).result as Record<
    string,
    unknown
  >;
});

afterAll(async () => {
  expect(await server.stop()).toBe(0);
  await home[Symbol.asyncDispose]();
});

const upload = (body: string) => server.fetch("/v1/exports", { method: "POST", body });

describe("audit: export, sync and serve", () => {
  test("nesting 100,000 deep: 400 on upload, -32000 bad_input over JSON-RPC, exit 2 from the CLI", async () => {
    const docText = JSON.stringify(doc);
    const deepDoc = docText.replace('"messages":[', `"deep":${nested(100_000)},"messages":[`);
    const up = await upload(deepDoc);
    expect(up.status).toBe(400);
    expect(((await up.json()) as { error: string }).error).toContain("nested more than 1000 levels deep");

    const rpc = await server.fetch("/rpc", {
      method: "POST",
      body: `{"jsonrpc":"2.0","id":1,"method":"session.create","params":{"projectPath":"/w","messages":[{"role":"user","parts":[{"type":"tool","tool":{"name":"x"},"result":${nested(100_000)}}]}]}}`,
    });
    const answer = (await rpc.json()) as { error: { code: number; message: string; data: { code: string } } };
    expect(answer.error.code).toBe(-32000);
    expect(answer.error.data.code).toBe("bad_input");
    expect(answer.error.message).toContain("nests more than 1000 levels deep");

    await using dir = await tempDir();
    const file = join(dir.path, "deep.json");
    writeFileSync(file, deepDoc);
    await using h = await tempHome();
    const imp = runCli(["session", "import", file], { home: h.path });
    expect(imp.code).toBe(2);
    expect(imp.stderr.trim().split("\n")).toHaveLength(1);
    const events = runCli(["rollout", "append", "deep"], {
      home: h.path,
      stdin: `{"type":"function.call","tool":"x","args":${nested(100_000)}}\n`,
    });
    expect(events.code).toBe(2);
    expect(events.stderr).toContain("event nests more than 1000 levels deep");
  });

  test("documents the store would refuse are refused on upload and import, naming the field", async () => {
    const messages = doc.messages as Record<string, unknown>[];
    const twice = {
      ...doc,
      messages: [
        messages[0],
        { ...messages[1], responseId: "R", usage: { inputTokens: 1 } },
        { ...messages[1], id: "second", responseId: "R", usage: { inputTokens: 1 } },
      ],
    };
    const cases: [unknown, string][] = [
      [twice, "provider response R already has usage on an earlier message (field messages[2].usage)"],
      [{ ...doc, messages: [] }, "at least one message (there are no empty sessions) (field messages)"],
      [
        { ...doc, meta: { ...(doc.meta as object), turnCount: -5 } },
        "turnCount must be a whole number ≥ 0 (got -5) (field meta.turnCount)",
      ],
      [
        {
          ...doc,
          meta: { ...(doc.meta as object), tokens: { input: -1, output: 0, cacheRead: 0, cacheWrite: 0 } },
        },
        "(field meta.tokens.input)",
      ],
    ];
    await using dir = await tempDir();
    await using h = await tempHome();
    for (const [body, message] of cases) {
      const r = await upload(JSON.stringify(body));
      expect(r.status).toBe(400);
      expect(((await r.json()) as { error: string }).error).toContain(message);
      const file = join(dir.path, "bad.json");
      writeFileSync(file, JSON.stringify(body));
      const imp = runCli(["session", "import", file], { home: h.path });
      expect(imp.code).toBe(2);
      expect(imp.stderr).toContain(`${file}: `);
      expect(imp.stderr).toContain(message);
    }
  });

  test("session.list with a limit or offset past 2^31 is invalid params, not an internal error", async () => {
    for (const params of [{ limit: 1e19 }, { offset: 1e19 }]) {
      const r = await server.rpc("session.list", params);
      expect(r.error?.code).toBe(-32602);
    }
  });

  test("regression: session.list given project and projectPath naming different paths is invalid params (one was dropped unsaid); the same path twice is taken", async () => {
    const r = await server.rpc("session.list", { project: "/tmp/a", projectPath: "/elsewhere" });
    expect([r.error?.code, r.error?.message]).toEqual([
      -32602,
      "invalid params: give project or projectPath, not both with different paths (field project)",
    ]);
    expect(
      (await server.rpc("session.list", { project: "/tmp/a", projectPath: "/tmp/a" })).error,
    ).toBeUndefined();
  });

  test("uploads past --max-stored-bytes are 507 until older links expire", async () => {
    const body = JSON.stringify(doc);
    const statuses: number[] = [];
    for (let i = 0; i < Math.ceil(20_000 / body.length) + 2; i++) statuses.push((await upload(body)).status);
    expect(statuses[0]).toBe(201);
    expect(statuses.at(-1)).toBe(507);
    const last = await upload(body);
    expect(((await last.json()) as { error: string }).error).toContain(
      "the server already holds its limit of 20000 bytes of exports (--max-stored-bytes)",
    );
    // Uploads removed by hand make room: the held bytes are counted again before refusing.
    const remote = join(home.path, "remote");
    for (const name of readdirSync(remote)) if (name.endsWith(".json")) rmSync(join(remote, name));
    expect((await upload(body)).status).toBe(201);
  });

  test("unusable --host, token, --public-url and --ttl are usage errors (exit 2), one line", async () => {
    await using h = await tempHome();
    const cases: [string[], Record<string, string>, string][] = [
      [["--host", "10.123.45.67"], {}, "cannot listen on 10.123.45.67: not an address of this machine"],
      [["--host", "999.1.1.1"], {}, "--host 999.1.1.1: not an IP address or a name that resolves"],
      [["--host", "nosuchhost.invalid"], {}, "not an IP address or a name that resolves"],
      [
        [],
        { FREECODE_SERVE_TOKEN: "my token with spaces" },
        "FREECODE_SERVE_TOKEN is not a usable bearer token",
      ],
      [[], { FREECODE_SERVE_TOKEN: "x" }, "FREECODE_SERVE_TOKEN is not a usable bearer token"],
      [["--public-url", "http://proxy/base?x=1"], {}, "--public-url takes no query or fragment"],
      [["--public-url", "http://proxy/base?"], {}, "--public-url takes no query or fragment"],
      [["--public-url", "http://proxy/base#"], {}, "--public-url takes no query or fragment"],
      [["--ttl", "100000000d"], {}, "--ttl must be at most 3650d"],
    ];
    for (const [args, env, message] of cases) {
      const r = runCli(["serve", "--port", "0", ...args], { home: h.path, env, timeoutMs: 20_000 });
      expect([args.join(" "), r.code]).toEqual([args.join(" "), 2]);
      expect(r.stderr).toContain(message);
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
    }
  }, 60_000);

  test("what a sync endpoint says is escaped before it reaches the terminal; its link must be http(s)", async () => {
    const fake = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch(req) {
        const path = new URL(req.url).pathname;
        if (path.startsWith("/v1/exports/"))
          return new Response("not here \x1b[31mred\x1b[0m", { status: 404 });
        return Response.json({ url: "javascript:alert(1)", expiresAt: Date.now() + 1000 }, { status: 201 });
      },
    });
    try {
      await using h = await tempHome();
      const base = `http://127.0.0.1:${fake.port}`;
      const got = await runCliAsync(["session", "import", `${base}/v1/exports/${"a".repeat(43)}`], {
        home: h.path,
      });
      expect(got.code).toBe(3);
      expect(got.stderr).not.toContain("\x1b");
      expect(got.stderr).toContain("\\x1b[31mred");
      expect(
        runCli(["session", "create", "--id", "s", "--prompt", "hi", "--project", "/w"], { home: h.path })
          .code,
      ).toBe(0);
      const up = await runCliAsync(["session", "export", "s", "--to", base], { home: h.path });
      expect(up.code).toBe(69);
      expect(up.stderr).toContain("the answer is not {url, expiresAt} with an http(s) link");
      expect(up.stdout).toBe("");
    } finally {
      fake.stop(true);
    }
  });

  test("session import of a directory names it (exit 74)", async () => {
    await using dir = await tempDir();
    await using h = await tempHome();
    const folder = join(dir.path, "exports");
    mkdirSync(folder);
    const r = runCli(["session", "import", folder], { home: h.path });
    expect(r.code).toBe(74);
    expect(r.stderr).toContain(folder);
    expect(r.stderr).toContain("is a directory");
  });
});
