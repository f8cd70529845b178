/**
 * `freecode serve` over real HTTP on loopback: health, bearer auth (missing, wrong, right; a
 * generated token), uploads and downloads of export documents (checked, private files, capability
 * links), the size limit (declared and streamed), expiry and the sweeps, malformed keys and path
 * traversal, and a clean shutdown on SIGTERM that finishes the request in flight.
 */
import { afterAll, beforeAll, describe, expect, spyOn, test } from "bun:test";
import crypto from "node:crypto";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { authorized } from "../../src/serve/auth.ts";
import { startServer } from "../../src/serve/server.ts";
import memoryFactory from "../../src/storage/adapters/memory.ts";
import { VERSION } from "../../src/version.ts";
import { tempHome } from "../_helpers.ts";
import { type Served, serve, TOKEN, userSays } from "./_serve.ts";

type Payload = NonNullable<RequestInit["body"]>;

const MAX = 64 * 1024;
let home: { path: string } & AsyncDisposable;
let server: Served;
let doc: Record<string, unknown>;

beforeAll(async () => {
  home = await tempHome();
  server = await serve(home.path, ["--max-bytes", String(MAX)]);
  const created = await server.rpc("session.create", {
    projectPath: "/work/app",
    messages: [userSays("fix the parser"), { role: "assistant", parts: [{ type: "text", content: "done" }] }],
  });
  const id = (created.result as { id: string }).id;
  doc = (await server.rpc("session.export", { id })).result as Record<string, unknown>;
});

afterAll(async () => {
  expect(await server.stop()).toBe(0);
  await home[Symbol.asyncDispose]();
});

const upload = (body: Payload, init: RequestInit & { auth?: boolean } = {}) =>
  server.fetch("/v1/exports", { method: "POST", body, ...init });
const remoteDir = () => join(home.path, "remote");

describe("serve: health and auth", () => {
  test("GET /health needs no token and names the version", async () => {
    const r = await server.fetch("/health", { auth: false });
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({ ok: true, version: VERSION });
  });

  test("a missing or wrong token is 401 with WWW-Authenticate: Bearer; the right one is let in", async () => {
    for (const path of ["/rpc", "/v1/exports"]) {
      const body = path === "/rpc" ? '{"jsonrpc":"2.0","id":1,"method":"session.list"}' : JSON.stringify(doc);
      const missing = await server.fetch(path, { method: "POST", body, auth: false });
      expect(missing.status).toBe(401);
      expect(missing.headers.get("www-authenticate")).toBe("Bearer");
      expect(await missing.json()).toEqual({ error: expect.stringContaining("missing bearer token") });
      for (const wrong of [
        `Bearer ${TOKEN}x`,
        `Bearer ${TOKEN.slice(0, -1)}`,
        "Bearer ",
        `Basic ${TOKEN}`,
        TOKEN,
      ]) {
        const r = await server.fetch(path, { method: "POST", body, headers: { authorization: wrong } });
        expect(r.status, wrong).toBe(401);
        expect(r.headers.get("www-authenticate")).toBe("Bearer");
        expect(Object.keys((await r.json()) as object)).toEqual(["error"]);
      }
      const right = await server.fetch(path, { method: "POST", body });
      expect(right.status).toBe(path === "/rpc" ? 200 : 201);
    }
  });

  test("the token is compared with timingSafeEqual, on equal-length digests", () => {
    const spy = spyOn(crypto, "timingSafeEqual");
    try {
      const request = (auth?: string) =>
        new Request("http://x/rpc", auth === undefined ? {} : { headers: { authorization: auth } });
      expect(authorized(request(`Bearer ${TOKEN}`), TOKEN)).toBe(true);
      expect(authorized(request("Bearer short"), TOKEN)).toBe(false);
      expect(authorized(request(`Bearer ${TOKEN}${"x".repeat(100)}`), TOKEN)).toBe(false);
      expect(authorized(request(), TOKEN)).toBe(false);
      expect(spy).toHaveBeenCalledTimes(4);
      for (const [a, b] of spy.mock.calls)
        expect([(a as Buffer).length, (b as Buffer).length]).toEqual([32, 32]);
    } finally {
      spy.mockRestore();
    }
  });

  test("without FREECODE_SERVE_TOKEN a random token is made and printed once on stderr", async () => {
    await using h = await tempHome();
    await using s = await serve(h.path, [], { token: null });
    const printed = s.stderr().match(/^token: (\S+)$/gm) ?? [];
    expect(printed).toHaveLength(1);
    expect(s.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect((await s.rpc("session.list")).result).toEqual({ items: [], total: 0 });
    const wrong = await s.fetch("/rpc", {
      method: "POST",
      body: "{}",
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(wrong.status).toBe(401);
    expect(await s.stop("SIGINT")).toBe(0);
  });

  test("unknown paths are 404 and wrong methods 405, as JSON", async () => {
    const r = await server.fetch("/nope");
    expect(r.status).toBe(404);
    expect(await r.json()).toEqual({ error: "not found" });
    const g = await server.fetch("/rpc");
    expect(g.status).toBe(405);
    expect(g.headers.get("allow")).toBe("POST");
  });
});

describe("serve: uploads and links", () => {
  test("POST /v1/exports stores the document privately and GET of its link returns it", async () => {
    const r = await upload(JSON.stringify(doc));
    expect(r.status).toBe(201);
    const answer = (await r.json()) as { url: string; expiresAt: number };
    expect(answer.url).toMatch(new RegExp(`^${server.url}/v1/exports/[A-Za-z0-9_-]{43}$`));
    expect(r.headers.get("location")).toBe(answer.url);
    const week = 7 * 24 * 3600 * 1000;
    expect(Math.abs(answer.expiresAt - (Date.now() + week))).toBeLessThan(60_000);
    const key = answer.url.split("/").at(-1)!;
    const file = join(remoteDir(), `${key}.json`);
    expect(statSync(remoteDir()).mode & 0o777).toBe(0o700);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readdirSync(remoteDir()).filter((n) => n.endsWith(".tmp"))).toEqual([]);
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual({ expiresAt: answer.expiresAt, document: doc });

    const got = await fetch(answer.url); // no token: the link is the capability
    expect(got.status).toBe(200);
    expect(got.headers.get("content-type")).toBe("application/json");
    expect(await got.json()).toEqual(doc);
  });

  test("a document with a byte-order mark is stored without it (the file stays JSON)", async () => {
    const bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(JSON.stringify(doc))]);
    const r = await upload(bytes);
    expect(r.status).toBe(201);
    const { url } = (await r.json()) as { url: string };
    const file = join(remoteDir(), `${url.split("/").at(-1)}.json`);
    expect(JSON.parse(readFileSync(file, "utf8")).document).toEqual(doc);
    expect(await (await fetch(url)).json()).toEqual(doc);
  });

  test("a document that is not an export is 400 with one line naming the field; nothing stored", async () => {
    const before = existsSync(remoteDir()) ? readdirSync(remoteDir()).length : 0;
    const messages = doc.messages as Record<string, unknown>[];
    const cases: [Payload, RegExp][] = [
      ["{not json", /^the document is not JSON/],
      [new Uint8Array([0x7b, 0xff, 0x7d]), /not valid UTF-8/],
      [JSON.stringify([1]), /must be a JSON object/],
      [JSON.stringify({ ...doc, format: "other" }), /not a freecode session export.*\(field format\)/],
      [
        JSON.stringify({ ...doc, messages: [{ ...messages[0], role: "robot" }] }),
        /^invalid message: .*"robot" \(field messages\[0\]\.role\)$/,
      ],
      [JSON.stringify({ ...doc, meta: { ...(doc.meta as object), id: "../x" } }), /\(field meta\.id\)$/],
      // Regression: what the store refuses on import (an event's time past a date's range, which an
      // older version stored) was taken, and its link never imported.
      [
        JSON.stringify({
          ...doc,
          rollout: [
            { type: "turn.started", turnId: "t", id: "e1", aggregateID: "x", seq: 1, timestamp: 9e15 },
          ],
        }),
        /timestamp must be milliseconds a date can hold .*\(field rollout\[0\]\.timestamp\)$/,
      ],
    ];
    for (const [body, message] of cases) {
      const r = await upload(body);
      expect(r.status, String(message)).toBe(400);
      const { error } = (await r.json()) as { error: string };
      expect(error).toMatch(message);
      expect(error).not.toContain("\n");
    }
    expect(existsSync(remoteDir()) ? readdirSync(remoteDir()).length : 0).toBe(before);
  });

  test("a declared Content-Length over --max-bytes is 413 before the body is read", async () => {
    const r = await upload(JSON.stringify({ ...doc, padding: "x".repeat(MAX) }));
    expect(r.status).toBe(413);
    expect(await r.json()).toEqual({ error: expect.stringContaining(`limit of ${MAX} bytes`) });
  });

  test("regression: a declared Content-Length far over --max-bytes (past 16 MiB over) gets the JSON 413 too, not Bun's bare one", async () => {
    const body = new Uint8Array(MAX + 17 * 1024 * 1024).fill(0x20);
    for (const path of ["/v1/exports", "/rpc"]) {
      const r = await server.fetch(path, { method: "POST", body });
      expect([path, r.status]).toEqual([path, 413]);
      expect(await r.json()).toEqual({ error: expect.stringContaining(`limit of ${MAX} bytes`) });
    }
  });

  test("a streamed body without Content-Length is cut off with 413 once it passes --max-bytes", async () => {
    let sent = 0;
    const chunk = new TextEncoder().encode(`"${"x".repeat(8 * 1024)}",`);
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        // Far past the limit if the server read it all: it must stop reading and answer.
        if (sent > MAX * 4) return controller.close();
        controller.enqueue(sent === 0 ? new TextEncoder().encode('{"padding":[') : chunk);
        sent += chunk.length;
      },
    });
    const r = await upload(body);
    expect(r.status).toBe(413);
    // Also for JSON-RPC, whose body is read the same way.
    const rpc = await server.fetch("/rpc", { method: "POST", body: `[${'"x",'.repeat(MAX / 3)}1]` });
    expect(rpc.status).toBe(413);
  });

  test("malformed keys and path traversal are 404 and never reach files outside remote/", async () => {
    // A decoy beside remote/ that looks like an expired export: following the path would delete it (410).
    const key = crypto.randomBytes(32).toString("base64url");
    const decoy = join(home.path, `${key}.json`);
    writeFileSync(decoy, `{"expiresAt":1,"document":{}}`);
    mkdirSync(remoteDir(), { recursive: true });
    const paths = [
      `/v1/exports/..%2F${key}`,
      `/v1/exports/%2E%2E%2F${key}`,
      `/v1/exports/${key}.`,
      `/v1/exports/${key}x`,
      `/v1/exports/${key.slice(1)}`,
      `/v1/exports/${"A".repeat(43)}`,
      "/v1/exports/..",
      "/v1/exports/",
      `/v1/exports/${key.slice(0, 40)}%00..`,
    ];
    for (const path of paths) {
      const r = await fetch(`${server.url}${path}`);
      expect(r.status, path).toBe(404);
    }
    // The raw request line, as a client that does not normalise `..` sends it.
    const raw = await rawGet(`/v1/exports/../${key}`);
    expect(raw).toMatch(/^HTTP\/1\.1 404/);
    expect(existsSync(decoy)).toBe(true);
  });
});

describe("serve: expiry", () => {
  /** A server on a memory store with a clock the test moves; uploads live 60 s. */
  async function clocked(home: string, sweepIntervalMs: number) {
    const store = memoryFactory({ home });
    const clock = { now: Date.now() };
    const s = startServer({
      store,
      home,
      port: 0,
      ttlMs: 60_000,
      sweepIntervalMs,
      token: TOKEN,
      now: () => clock.now,
    });
    const post = () =>
      fetch(`${s.url}/v1/exports`, {
        method: "POST",
        headers: { authorization: `Bearer ${TOKEN}` },
        body: JSON.stringify(doc),
      }).then((r) => r.json() as Promise<{ url: string; expiresAt: number }>);
    const fileOf = (url: string) => join(home, "remote", `${url.split("/").at(-1)}.json`);
    return {
      clock,
      post,
      fileOf,
      async [Symbol.asyncDispose]() {
        await s.stop();
        await store.close();
      },
    };
  }

  test("an expired link is 410 and its file removed, then 404", async () => {
    await using h = await tempHome();
    await using s = await clocked(h.path, 3_600_000);
    const a = await s.post();
    expect(a.expiresAt).toBe(s.clock.now + 60_000);
    expect((await fetch(a.url)).status).toBe(200);
    s.clock.now += 59_999;
    expect((await fetch(a.url)).status).toBe(200);
    s.clock.now += 1;
    const gone = await fetch(a.url);
    expect(gone.status).toBe(410);
    expect(await gone.json()).toEqual({ error: "this export has expired" });
    expect(existsSync(s.fileOf(a.url))).toBe(false);
    expect((await fetch(a.url)).status).toBe(404);
  });

  test("the periodic sweep removes expired uploads nobody asked for", async () => {
    await using h = await tempHome();
    await using s = await clocked(h.path, 20);
    const [a, b] = [await s.post(), await s.post()];
    s.clock.now += 30_000;
    const c = await s.post();
    s.clock.now += 30_000; // a and b are now expired, c is not
    const deadline = Date.now() + 10_000;
    while ((existsSync(s.fileOf(a.url)) || existsSync(s.fileOf(b.url))) && Date.now() < deadline)
      await Bun.sleep(20);
    expect(readdirSync(join(h.path, "remote"))).toEqual([`${c.url.split("/").at(-1)}.json`]);
    expect((await fetch(c.url)).status).toBe(200);
  });

  test("--ttl 200ms from the CLI: the link expires (410)", async () => {
    await using h = await tempHome();
    await using s = await serve(h.path, ["--ttl", "200ms"]);
    const r = await s.fetch("/v1/exports", { method: "POST", body: JSON.stringify(doc) });
    const { url, expiresAt } = (await r.json()) as { url: string; expiresAt: number };
    expect(expiresAt - Date.now()).toBeLessThanOrEqual(200);
    await Bun.sleep(Math.max(0, expiresAt - Date.now()) + 10);
    expect((await fetch(url)).status).toBe(410);
    expect(await s.stop()).toBe(0);
  });

  test("expired uploads are swept at startup; unknown files in remote/ are left alone", async () => {
    await using h = await tempHome();
    const dir = join(h.path, "remote");
    mkdirSync(dir, { recursive: true });
    const expired = crypto.randomBytes(32).toString("base64url");
    const live = crypto.randomBytes(32).toString("base64url");
    writeFileSync(join(dir, `${expired}.json`), `{"expiresAt":${Date.now() - 1000},"document":{}}`);
    writeFileSync(join(dir, `${live}.json`), `{"expiresAt":${Date.now() + 3_600_000},"document":{"a":1}}`);
    writeFileSync(join(dir, "notes.txt"), "mine");
    // A directory named like an upload is not one: it stopped the server from starting.
    const folder = crypto.randomBytes(32).toString("base64url");
    mkdirSync(join(dir, `${folder}.json`));
    chmodSync(dir, 0o755); // made by hand: others could list the links' keys

    await using s = await serve(h.path);
    expect(readdirSync(dir).sort()).toEqual([`${live}.json`, `${folder}.json`, "notes.txt"].sort());
    expect(s.stderr()).toContain("removed 1 expired export(s)");
    expect(await (await fetch(`${s.url}/v1/exports/${live}`)).json()).toEqual({ a: 1 });
    expect((await fetch(`${s.url}/v1/exports/${folder}`)).status).toBe(404);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(await s.stop()).toBe(0);
  });

  test("listening on every address without --public-url warns that the links name no reachable host", async () => {
    await using h = await tempHome();
    await using s = await serve(h.path, ["--host", "0.0.0.0"]);
    expect(s.stderr()).toMatch(
      /links name http:\/\/0\.0\.0\.0:\d+, which no other machine can reach: give --public-url/,
    );
    expect(s.stderr()).toContain("listening beyond loopback over plain HTTP");
    expect(await s.stop()).toBe(0);
    // Loopback spelled otherwise is loopback: no warning.
    for (const host of ["127.1", "0:0:0:0:0:0:0:1"]) {
      await using l = await serve(h.path, ["--host", host]);
      expect(l.stderr()).not.toContain("[warn]");
      expect(await l.stop()).toBe(0);
    }
    await using p = await serve(h.path, ["--host", "0.0.0.0", "--public-url", "https://sync.example.org"]);
    expect(p.stderr()).not.toContain("links name");
    expect(await p.stop()).toBe(0);
  });

  test("bad flags are usage errors; a port in use is a conflict", async () => {
    const { runCli } = await import("../_helpers.ts");
    await using h = await tempHome();
    for (const args of [
      ["--ttl", "7w"],
      ["--ttl", "0"],
      ["--max-bytes", "1k"],
      ["--port", "70000"],
      ["--public-url", "ftp://x"],
    ]) {
      const r = runCli(["serve", ...args], { home: h.path });
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
    }
    const port = new URL(server.url).port;
    const taken = runCli(["serve", "--port", port], { home: h.path });
    expect(taken.code).toBe(4);
    expect(taken.stderr).toContain(`port ${port} is in use on 127.0.0.1 (--port 0 picks a free one)`);
  });
});

/** GET `path` with the request line sent as written (fetch would resolve `..`). */
async function rawGet(path: string): Promise<string> {
  const { hostname, port } = new URL(server.url);
  let text = "";
  const { promise, resolve } = Promise.withResolvers<string>();
  await Bun.connect({
    hostname,
    port: Number(port),
    socket: {
      open(socket) {
        socket.write(`GET ${path} HTTP/1.1\r\nHost: ${hostname}\r\nConnection: close\r\n\r\n`);
      },
      data(_socket, data) {
        text += data.toString();
      },
      close() {
        resolve(text);
      },
    },
  });
  return promise;
}
