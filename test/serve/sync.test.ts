/**
 * The sync client in `session export --to/--sync` and `session import <URL>`: a session with its
 * rollout goes from one home through a real `freecode serve` process to another home unchanged but
 * for its id; and every way the other side can fail is one line on stderr with the documented exit
 * code (401 → 2, 404/410 → 3, 413 → 2, 5xx/refused/timeout → 69).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { FreecodeError } from "../../src/errors.ts";
import { startServer } from "../../src/serve/server.ts";
import memoryFactory from "../../src/storage/adapters/memory.ts";
import { downloadExport, exportsUrl, uploadExport } from "../../src/sync/client.ts";
import { parseJson, type RunResult, runCli, runCliAsync, tempHome } from "../_helpers.ts";
import { type Served, serve, TOKEN } from "./_serve.ts";

/** The CLI without blocking this process (whose event loop serves some of these tests). */
const cli = (args: string[], home: string, env: Record<string, string> = {}): Promise<RunResult> =>
  runCliAsync(args, { home, env });

let serverHome: { path: string } & AsyncDisposable;
let server: Served;
let source: { path: string } & AsyncDisposable;
const ID = "sync-me";

beforeAll(async () => {
  serverHome = await tempHome();
  server = await serve(serverHome.path, ["--max-bytes", "100000"]);
  source = await tempHome();
  const home = source.path;
  expect(
    runCli(["session", "create", "--prompt", "fix the parser", "--id", ID, "--project", "/w"], { home }).code,
  ).toBe(0);
  const more =
    '{"role":"assistant","parts":[{"type":"text","content":"done ✓"}],"usage":{"inputTokens":5,"outputTokens":2},"responseId":"r1"}\n';
  expect(runCli(["session", "append", ID], { home, stdin: more }).code).toBe(0);
  const events = '{"type":"turn.started","turnId":"t0"}\n{"type":"turn.started","turnId":"t1"}\n';
  expect(runCli(["rollout", "append", ID], { home, stdin: events }).code).toBe(0);
});
afterAll(async () => {
  expect(await server.stop()).toBe(0);
  await serverHome[Symbol.asyncDispose]();
  await source[Symbol.asyncDispose]();
});

const show = (home: string, id: string) =>
  parseJson<{ meta: Record<string, unknown>; messages: unknown[] }>(
    runCli(["session", "show", id, "--json"], { home }),
  );
const events = (home: string, id: string) =>
  runCli(["rollout", "cat", id], { home })
    .stdout.trim()
    .split("\n")
    .map((l) => {
      const { seq: _s, aggregateID: _a, ...e } = JSON.parse(l);
      return e;
    });

describe("session export --to / import <URL>", () => {
  test("a session and its rollout go through `freecode serve` to another home", async () => {
    await using target = await tempHome();
    const up = await cli(["session", "export", ID, "--rollout", "--to", server.url, "--json"], source.path, {
      FREECODE_SYNC_TOKEN: TOKEN,
    });
    expect(up.code, up.stderr).toBe(0);
    const { url, expiresAt } = JSON.parse(up.stdout);
    expect(Object.keys(JSON.parse(up.stdout))).toEqual(["url", "expiresAt"]);
    expect(url).toStartWith(`${server.url}/v1/exports/`);
    expect(expiresAt).toBeGreaterThan(Date.now());

    const down = await cli(["session", "import", url, "--json"], target.path);
    expect(down.code, down.stderr).toBe(0);
    const id = JSON.parse(down.stdout).id as string;
    const [before, after] = [show(source.path, ID), show(target.path, id)];
    expect(after.messages).toEqual(before.messages);
    const { id: _a, copiedFrom, ...meta } = after.meta;
    const { id: _b, ...originalMeta } = before.meta;
    expect(meta).toEqual(originalMeta);
    expect(copiedFrom).toEqual({ id: ID, exportedAt: expect.any(Number) });
    expect(events(target.path, id)).toEqual(events(source.path, ID));
    // The link can be used again (until it expires), e.g. under a chosen id.
    const again = await cli(["session", "import", url, "--id", "second-copy"], target.path);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toStartWith("imported second-copy (idle)");
  });

  test("--sync uses config.json's syncEndpoint; without --json the link alone is on stdout", async () => {
    await using other = await tempHome();
    const home = other.path;
    runCli(["session", "create", "--prompt", "hello", "--id", "s"], { home });
    const none = await cli(["session", "export", "s", "--sync"], home);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("--sync needs syncEndpoint in config.json");
    writeFileSync(join(home, "config.json"), JSON.stringify({ syncEndpoint: `${server.url}/` }));
    const up = await cli(["session", "export", "s", "--sync"], home, { FREECODE_SYNC_TOKEN: TOKEN });
    expect(up.code, up.stderr).toBe(0);
    expect(up.stdout).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1\/exports\/[A-Za-z0-9_-]{43}\n$/);
    expect(up.stderr).toMatch(/uploaded s; the link expires \d{4}-\d\d-\d\d \d\d:\d\d/);
    const both = await cli(["session", "export", "s", "--sync", "--out", "x.json"], home);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain("--out and --sync cannot be used together");
  });

  test("server refusals: no or wrong token → 2, too large → 2, unknown link → 3", async () => {
    const noToken = await cli(["session", "export", ID, "--to", server.url], source.path);
    expect(noToken.code).toBe(2);
    expect(noToken.stderr).toMatch(/HTTP 401: missing bearer token.*set FREECODE_SYNC_TOKEN/);
    const wrong = await cli(["session", "export", ID, "--to", server.url], source.path, {
      FREECODE_SYNC_TOKEN: "wrong-token-0123456789",
    });
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain("HTTP 401: wrong token");
    // A token that cannot go in a header (a newline, a space) or is short is refused before sending.
    for (const token of ["nope", "a-long-enough-token\nwith-a-newline", "a long enough token"]) {
      const bad = await cli(["session", "export", ID, "--to", server.url], source.path, {
        FREECODE_SYNC_TOKEN: token,
      });
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain("FREECODE_SYNC_TOKEN is not a bearer token");
    }

    await using big = await tempHome();
    const huge = `${JSON.stringify({ role: "user", parts: [{ type: "text", content: "x".repeat(200_000) }] })}\n`;
    expect(runCli(["session", "create", "--id", "big"], { home: big.path, stdin: huge }).code).toBe(0);
    const tooLarge = await cli(["session", "export", "big", "--to", server.url], big.path, {
      FREECODE_SYNC_TOKEN: TOKEN,
    });
    expect(tooLarge.code).toBe(2);
    expect(tooLarge.stderr).toContain("HTTP 413: request body is over the limit of 100000 bytes");

    const unknown = await cli(["session", "import", `${server.url}/v1/exports/${"a".repeat(43)}`], big.path);
    expect(unknown.code).toBe(3);
    expect(unknown.stderr).toContain("HTTP 404: no such export");
    for (const r of [noToken, wrong, tooLarge, unknown]) expect(r.stderr.trim().split("\n")).toHaveLength(1);
  });

  test("an expired link → 3; a server error or no server → 69; an answer that is not a document → 2", async () => {
    await using h = await tempHome();
    const store = memoryFactory({ home: h.path });
    const s = startServer({ store, home: h.path, port: 0, ttlMs: 200, token: TOKEN });
    let status = 503;
    const broken = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch: () => new Response(status === 200 ? "<html>" : "upstream down", { status }),
    });
    try {
      const doc = (await cli(["session", "export", ID], source.path)).stdout;
      const { url, expiresAt } = await uploadExport(s.url, doc, { token: TOKEN });
      await Bun.sleep(Math.max(0, expiresAt - Date.now()) + 10);
      const expired = await cli(["session", "import", url], h.path);
      expect(expired.code).toBe(3);
      expect(expired.stderr).toContain("HTTP 410: this export has expired");

      const down = await cli(
        ["session", "export", ID, "--to", `http://127.0.0.1:${broken.port}`],
        source.path,
      );
      expect(down.code).toBe(69);
      expect(down.stderr).toContain(`http://127.0.0.1:${broken.port}/v1/exports: HTTP 503: upstream down`);
      const get = await cli(["session", "import", `http://127.0.0.1:${broken.port}/x`], h.path);
      expect(get.code).toBe(69);
      status = 200;
      const notDoc = await cli(["session", "import", `http://127.0.0.1:${broken.port}/x`], h.path);
      expect(notDoc.code).toBe(2);
      expect(notDoc.stderr).toContain(`http://127.0.0.1:${broken.port}/x: not JSON`);

      const closed = `http://127.0.0.1:${broken.port}`;
      await broken.stop(true);
      const refused = await cli(["session", "import", `${closed}/v1/exports/x`], h.path);
      expect(refused.code).toBe(69);
      expect(refused.stderr.trim().split("\n")).toHaveLength(1);
    } finally {
      await broken.stop(true);
      await s.stop();
      await store.close();
    }
  });

  test("regression: an endpoint that redirects is named with where it points, exit 69, and not followed (Bun's UnexpectedRedirect text was all)", async () => {
    let seen = 0;
    const moved = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch: (req) => {
        seen++;
        const path = new URL(req.url).pathname;
        if (path === "/away") return new Response("got the token", { status: 200 });
        if (path.startsWith("/same")) return new Response(null, { status: 304 });
        if (path.startsWith("/q"))
          return new Response(null, {
            status: 301,
            headers: { location: "https://sync.example/base/v1/exports?from=http" },
          });
        return new Response("moved", {
          status: 301,
          headers: { location: "https://sync.example/v1/exports" },
        });
      },
    });
    try {
      const r = await cli(["session", "export", ID, "--to", `http://127.0.0.1:${moved.port}`], source.path);
      expect(r.code).toBe(69);
      expect(r.stderr).toContain(
        `http://127.0.0.1:${moved.port}/v1/exports: the endpoint redirects (HTTP 301) to https://sync.example/v1/exports: freecode follows no redirect (the credentials would go along); give https://sync.example instead`,
      );
      expect(seen).toBe(1);
      // A redirect that keeps a query: the advice keeps it, and only the added path comes off.
      const query = await cli(
        ["session", "export", ID, "--to", `http://127.0.0.1:${moved.port}/q`],
        source.path,
      );
      expect(query.stderr).toContain("give https://sync.example/base?from=http instead");
      // A 304 is an answer, not a redirect.
      const same = await cli(
        ["session", "export", ID, "--to", `http://127.0.0.1:${moved.port}/same`],
        source.path,
      );
      expect(same.stderr).toContain("/same/v1/exports: HTTP 304");
    } finally {
      await moved.stop(true);
    }
  });

  test("a server that does not answer in time is `unavailable`; endpoints keep their path prefix", async () => {
    const hang = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch: () => new Promise<Response>(() => {}),
    });
    try {
      const error = await downloadExport(`http://127.0.0.1:${hang.port}/v1/exports/x`, {
        timeoutMs: 200,
      }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(FreecodeError);
      expect((error as FreecodeError).code).toBe("unavailable");
      expect((error as FreecodeError).message).toEndWith("no answer within 0.2 s");
    } finally {
      await hang.stop(true);
    }
    expect(exportsUrl("https://sync.example/freecode")).toBe("https://sync.example/freecode/v1/exports");
    expect(exportsUrl("https://sync.example/")).toBe("https://sync.example/v1/exports");
    expect(() => exportsUrl("ftp://x")).toThrow("must be an http:// or https:// URL");
  });
});
