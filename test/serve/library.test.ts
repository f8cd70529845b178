/**
 * The server pieces as a library, through `src/index.ts` only: `startServer` over a store the caller
 * opened (the caller closes it), the dispatcher over the method table for a transport of one's own,
 * `serveLines` over any byte stream, and `parseDuration` as `serve --ttl` reads it.
 */
import { describe, expect, test } from "bun:test";
import * as freecode from "../../src/index.ts";
import { tempHome } from "../_helpers.ts";

describe("serve as a library", () => {
  test("startServer: url, token, stop(); the store stays the caller's", async () => {
    await using home = await tempHome();
    const { adapter } = await freecode.openStore("files", { home: home.path, fsync: "never" });
    try {
      let url: string;
      {
        await using server = freecode.startServer({ store: adapter, home: home.path, port: 0 });
        url = server.url;
        expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
        expect(server.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
        const r = await fetch(`${url}/rpc`, {
          method: "POST",
          headers: { authorization: `Bearer ${server.token}` },
          body: JSON.stringify({
            jsonrpc: "2.0",
            id: 1,
            method: "session.create",
            params: {
              projectPath: home.path,
              id: "lib",
              messages: [{ role: "user", parts: [{ type: "text", content: "x" }] }],
            },
          }),
        });
        expect(await r.json()).toMatchObject({ id: 1, result: { id: "lib" } });
      }
      // Disposed: the port is closed, the store still works.
      expect(
        await fetch(`${url}/health`).then(
          () => "open",
          () => "closed",
        ),
      ).toBe("closed");
      expect(await freecode.getSession(adapter, "lib")).toMatchObject({ id: "lib" });
    } finally {
      await adapter.close();
    }
  });

  test("the dispatcher and serveLines carry the same methods over any stream", async () => {
    await using home = await tempHome();
    const { adapter } = await freecode.openStore("memory", { home: home.path });
    const dispatch = freecode.createRpcDispatcher(freecode.sessionMethods({ store: adapter, config: {} }));
    const input = [
      {
        jsonrpc: "2.0",
        id: "a",
        method: "session.create",
        params: { projectPath: "/p", id: "m", messages: [{ role: "user", parts: [] }] },
      },
      { jsonrpc: "2.0", id: "b", method: "session.list" },
    ]
      .map((m) => JSON.stringify(m))
      .join("\n");
    // Split mid-line, as a pipe may deliver it.
    const bytes = new TextEncoder().encode(input);
    const chunks = [bytes.subarray(0, 7), bytes.subarray(7, 150), bytes.subarray(150)];
    const out: string[] = [];
    await freecode.serveLines(
      (async function* () {
        yield* chunks;
      })(),
      dispatch,
      (line) => void out.push(line),
      { maxBytes: freecode.DEFAULT_MAX_BYTES },
    );
    expect(out.map((l) => JSON.parse(l))).toMatchObject([
      { id: "a", result: { id: "m" } },
      { id: "b", result: { total: 1 } },
    ]);
    expect(freecode.RPC_ERRORS.methodNotFound).toBe(-32601);
    await adapter.close();
  });

  test("parseDuration reads 7d, 12h, 30m, 45s, 200ms and bare milliseconds, nothing else", () => {
    expect(freecode.parseDuration("7d")).toBe(freecode.DEFAULT_TTL_MS);
    expect(freecode.parseDuration("12h")).toBe(12 * 3_600_000);
    expect(freecode.parseDuration("30m")).toBe(1_800_000);
    expect(freecode.parseDuration("45s")).toBe(45_000);
    expect(freecode.parseDuration("200ms")).toBe(200);
    expect(freecode.parseDuration("1500")).toBe(1500);
    for (const bad of ["", "0", "0s", "1.5h", "-1", "7 days", "1w", "1e3", "d"])
      expect(() => freecode.parseDuration(bad), bad).toThrow("--ttl must be a duration");
  });
});
