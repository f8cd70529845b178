/**
 * `freecode serve --tls-cert --tls-key`: HTTPS with a real certificate made by openssl for this
 * test. A client that trusts it (fetch with the CA, or the sync client with NODE_EXTRA_CA_CERTS)
 * talks to the server; one that does not is refused; bad flags are one-line usage errors.
 */
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { runCli, runCliAsync, tempDir, tempHome } from "../_helpers.ts";
import { serve, userSays } from "./_serve.ts";

const openssl = Bun.which("openssl");

/** A self-signed certificate for 127.0.0.1 and localhost, valid one day. */
function certificate(dir: string): { cert: string; key: string } {
  const cert = join(dir, "cert.pem");
  const key = join(dir, "key.pem");
  const r = Bun.spawnSync(
    [
      openssl!,
      "req",
      "-x509",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:P-256",
      "-nodes",
      "-keyout",
      key,
      "-out",
      cert,
      "-days",
      "1",
      "-subj",
      "/CN=localhost",
      "-addext",
      "subjectAltName=IP:127.0.0.1,DNS:localhost",
    ],
    { stdout: "pipe", stderr: "pipe" },
  );
  if (r.exitCode !== 0) throw new Error(`openssl failed: ${r.stderr.toString()}`);
  return { cert, key };
}

describe.skipIf(!openssl)("serve over HTTPS", () => {
  test("health and JSON-RPC over TLS; an untrusting client is refused; the sync client with the CA uploads", async () => {
    await using dir = await tempDir();
    await using home = await tempHome();
    const { cert, key } = certificate(dir.path);
    const ca = await Bun.file(cert).text();
    await using server = await serve(home.path, ["--tls-cert", cert, "--tls-key", key]);
    expect(server.url).toStartWith("https://127.0.0.1:");
    const health = await fetch(`${server.url}/health`, { tls: { ca } } as RequestInit);
    expect(health.status).toBe(200);
    await expect(fetch(`${server.url}/health`)).rejects.toThrow(/self.signed/i);
    const rpc = await fetch(`${server.url}/rpc`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.token}` },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "session.create",
        params: { id: "tls1", projectPath: "/p", messages: [userSays("over tls")] },
      }),
      tls: { ca },
    } as RequestInit);
    expect(((await rpc.json()) as { result: { id: string } }).result.id).toBe("tls1");
    // The CLI's sync client trusts the certificate through NODE_EXTRA_CA_CERTS.
    await using other = await tempHome();
    expect(runCli(["session", "create", "--id", "up", "--prompt", "hi"], { home: other.path }).code).toBe(0);
    const up = await runCliAsync(["session", "export", "up", "--to", server.url], {
      home: other.path,
      env: { NODE_EXTRA_CA_CERTS: cert, FREECODE_SYNC_TOKEN: server.token },
    });
    expect(up.code, up.stderr).toBe(0);
    expect(up.stdout).toContain(`${server.url}/v1/exports/`);
    expect(server.stderr()).not.toContain("unencrypted");
  });

  test("--tls-cert without --tls-key, a missing file, a file that is not PEM: usage errors (exit 2)", async () => {
    await using dir = await tempDir();
    await using home = await tempHome();
    const { cert, key } = certificate(dir.path);
    const notPem = join(dir.path, "x.txt");
    writeFileSync(notPem, "hello");
    await using otherDir = await tempDir();
    const other = certificate(otherDir.path);
    const damaged = join(dir.path, "damaged.pem");
    writeFileSync(damaged, "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n");
    const run = (...args: string[]) =>
      runCli(["serve", ...(args.includes("--stdio") ? [] : ["--port", "0"]), ...args], { home: home.path });
    const cases: [string[], string][] = [
      [["--tls-cert", cert], "--tls-cert and --tls-key go together"],
      [["--tls-cert", join(dir.path, "nope.pem"), "--tls-key", key], "ENOENT"],
      [["--tls-cert", notPem, "--tls-key", key], "not a PEM file"],
      [["--tls-cert", cert, "--tls-key", cert], "--tls-key"],
      [["--stdio", "--tls-cert", cert], "--tls-cert does not apply to --stdio"],
      // Review: PEM that TLS cannot use was exit 70 with a stack trace.
      [["--tls-cert", cert, "--tls-key", other.key], "KEY_VALUES_MISMATCH: the key is not the certificate's"],
      [["--tls-cert", damaged, "--tls-key", key], "TLS cannot use them (DECODE_ERROR)"],
    ];
    for (const [args, message] of cases) {
      const r = run(...args);
      expect([r.code, r.stderr.trim().split("\n").length]).toEqual([2, 1]);
      expect(r.stderr).toContain(message);
    }
  });
});
