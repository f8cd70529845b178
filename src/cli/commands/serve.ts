/**
 * `freecode serve`: the sync endpoint and the JSON-RPC interface over HTTP (token auth), or with
 * `--stdio` JSON-RPC over stdin/stdout for the process that started it. Talk (the address, a
 * generated token, errors) goes to stderr; in `--stdio` mode stdout carries only responses.
 * SIGINT/SIGTERM stop it cleanly: no new connections, requests in flight finish, the store closes,
 * exit 0.
 */

import { lookup } from "node:dns/promises";
import { readFileSync } from "node:fs";
import { isIP } from "node:net";
import { conflict, usageError } from "../../errors.ts";
import { homePaths } from "../../home.ts";
import { parseDuration } from "../../serve/duration.ts";
import { sessionMethods } from "../../serve/methods.ts";
import { createRpcDispatcher } from "../../serve/rpc.ts";
import {
  DEFAULT_HOST,
  DEFAULT_MAX_BYTES,
  DEFAULT_MAX_STORED_BYTES,
  DEFAULT_PORT,
  DEFAULT_TTL_MS,
  startServer,
} from "../../serve/server.ts";
import { serveLines } from "../../serve/stdio.ts";
import { httpUrl } from "../../sync/client.ts";
import { isBearerToken, MIN_TOKEN_LENGTH } from "../../util/bearer-token.ts";
import { command, wholeNumber } from "../_command.ts";
import { drainBeforeStderr, flushStdout, writeStdout } from "../_stdout.ts";
import { withStore } from "./session/_shared.ts";

/** A line on stderr exactly as given (tests and scripts read these; no log tag). */
const say = (line: string) => {
  drainBeforeStderr();
  process.stderr.write(`${line}\n`);
};

export default command({
  meta: {
    name: "serve",
    description: "Run the sync endpoint and JSON-RPC (session.*, rollout.*) over HTTP, or --stdio",
  },
  args: {
    host: {
      type: "string",
      description: `Address to listen on (default ${DEFAULT_HOST})`,
      valueHint: "HOST",
    },
    port: {
      type: "string",
      description: `Port (default ${DEFAULT_PORT}; 0 = any free port)`,
      valueHint: "N",
    },
    "max-bytes": {
      type: "string",
      description: `Largest upload or request, in bytes (default ${DEFAULT_MAX_BYTES}, 64 MiB)`,
      valueHint: "N",
    },
    "max-stored-bytes": {
      type: "string",
      description: `Most bytes of uploads held at once; past it uploads get 507 (default ${DEFAULT_MAX_STORED_BYTES}, 1 GiB)`,
      valueHint: "N",
    },
    ttl: {
      type: "string",
      description: "How long an upload stays downloadable: 7d, 12h, 30m, 45s or milliseconds (default 7d)",
      valueHint: "DURATION",
    },
    "public-url": {
      type: "string",
      description: "Base of the links handed out, when clients reach the server through a proxy",
      valueHint: "URL",
    },
    "tls-cert": {
      type: "string",
      description: "Serve HTTPS: the certificate chain (PEM file); goes with --tls-key",
      valueHint: "FILE",
    },
    "tls-key": {
      type: "string",
      description: "Serve HTTPS: the private key (PEM file); goes with --tls-cert",
      valueHint: "FILE",
    },
    stdio: {
      type: "boolean",
      description: "JSON-RPC over stdin/stdout, one message per line (no HTTP, no token)",
    },
  },
  async run(ctx, args) {
    const maxBytes = wholeNumber(args["max-bytes"], "max-bytes", 1) ?? DEFAULT_MAX_BYTES;
    const onInternalError = (error: unknown, where: string) =>
      ctx.log.error(`${where}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);

    if (args.stdio) {
      for (const flag of [
        "host",
        "port",
        "ttl",
        "public-url",
        "max-stored-bytes",
        "tls-cert",
        "tls-key",
      ] as const)
        if (args[flag] !== undefined) throw usageError(`--${flag} does not apply to --stdio`);
      await withStore(ctx, async (store) => {
        const methods = sessionMethods({
          store,
          config: ctx.config(),
          configFile: homePaths(ctx.home).config,
          home: ctx.home,
        });
        const dispatch = createRpcDispatcher(methods, {
          onInternalError: (error, method) => onInternalError(error, `rpc ${method}`),
        });
        await serveLines(
          Bun.stdin.stream(),
          dispatch,
          async (line) => {
            writeStdout(`${line}\n`);
            await flushStdout();
          },
          { maxBytes },
        );
      });
      return 0;
    }

    const port = wholeNumber(args.port, "port") ?? DEFAULT_PORT;
    if (port > 65535) throw usageError(`--port must be at most 65535 (got ${port})`);
    const ttlMs = args.ttl === undefined ? DEFAULT_TTL_MS : parseDuration(args.ttl);
    const maxStoredBytes =
      wholeNumber(args["max-stored-bytes"], "max-stored-bytes", 1) ?? DEFAULT_MAX_STORED_BYTES;
    const publicUrl = args["public-url"];
    if (publicUrl !== undefined) {
      const u = httpUrl(publicUrl, "--public-url");
      // `u.search` is "" for a bare `?` (and `u.hash` for a bare `#`): look at the text too.
      if (u.search || u.hash || /[?#]/.test(publicUrl))
        throw usageError(
          `--public-url takes no query or fragment: links are built by appending a path (got "${publicUrl}")`,
        );
    }
    const envToken = process.env.FREECODE_SERVE_TOKEN;
    if (envToken && !isBearerToken(envToken))
      throw usageError(
        `FREECODE_SERVE_TOKEN is not a usable bearer token: at least ${MIN_TOKEN_LENGTH} characters of A-Z a-z 0-9 - . _ ~ + / (no spaces or newlines)`,
      );
    const host = args.host ?? DEFAULT_HOST;
    await checkHost(host);
    const tls = readTls(args["tls-cert"], args["tls-key"]);
    await withStore(ctx, async (store) => {
      let server: ReturnType<typeof startServer>;
      try {
        server = startServer({
          store,
          home: ctx.home,
          config: ctx.config(),
          host,
          port,
          maxBytes,
          maxStoredBytes,
          ttlMs,
          ...(envToken ? { token: envToken } : {}),
          ...(publicUrl !== undefined ? { publicUrl } : {}),
          ...(tls ? { tls } : {}),
          onInternalError,
        });
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        // The certificate and key read as PEM but TLS cannot use them (a key of another
        // certificate, an encrypted key, a damaged body): BoringSSL's reason, on one line.
        const ssl = tls && /OPENSSL_internal:([A-Z_]+)/.exec((error as Error).message)?.[1];
        if (ssl)
          throw usageError(
            `--tls-cert/--tls-key: TLS cannot use them (${ssl}${ssl === "KEY_VALUES_MISMATCH" ? ": the key is not the certificate's" : ssl === "BAD_DECRYPT" ? ": an encrypted key (give it without a passphrase)" : ""})`,
          );
        if (code === "EADDRINUSE")
          throw conflict(`port ${port} is in use on ${host} (--port 0 picks a free one)`);
        if (code === "EADDRNOTAVAIL" || code === "EINVAL" || code === "EACCES")
          throw usageError(
            code === "EACCES"
              ? `not allowed to listen on ${host}:${port} (ports below 1024 need privileges)`
              : `cannot listen on ${host}: not an address of this machine`,
          );
        throw error;
      }
      if (!isLoopback(host) && !tls)
        ctx.log.warn(
          "listening beyond loopback over plain HTTP: the token and the documents travel unencrypted (give --tls-cert and --tls-key, or put a TLS proxy in front and give --public-url)",
        );
      if (publicUrl === undefined && isWildcard(host))
        ctx.log.warn(
          `links name ${server.url}, which no other machine can reach: give --public-url (the address others use)`,
        );
      if (server.swept > 0) ctx.log.info(`removed ${server.swept} expired export(s)`);
      if (!envToken) say(`token: ${server.token}`);
      // Signals are handled before the line below: a client that stops the server as soon as it
      // reads it got the default handler's exit 143 instead of a clean stop.
      const stopped = untilSignal(async (forced) => {
        if (forced) ctx.log.warn("second signal: closing connections now");
        else ctx.log.info("shutting down: finishing requests in flight");
        await server.stop(forced);
      });
      // Last: whoever waits for this line may rely on everything above being done.
      say(`listening on ${server.url}`);
      await stopped;
    });
    return 0;
  },
});

/**
 * The certificate and key files for HTTPS, read now: a missing or unreadable file, or text that is
 * not PEM, is a one-line usage error before anything listens (Bun's own error names neither file).
 */
function readTls(
  certFile: string | undefined,
  keyFile: string | undefined,
): { cert: string; key: string } | undefined {
  if (certFile === undefined && keyFile === undefined) return undefined;
  if (certFile === undefined || keyFile === undefined)
    throw usageError("--tls-cert and --tls-key go together");
  const read = (file: string, flag: string, label: RegExp) => {
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch (error) {
      throw usageError(
        `--${flag} ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
      );
    }
    if (!label.test(text)) throw usageError(`--${flag} ${file}: not a PEM file (no -----BEGIN … ----- line)`);
    return text;
  };
  return {
    cert: read(certFile, "tls-cert", /-----BEGIN CERTIFICATE-----/),
    key: read(keyFile, "tls-key", /-----BEGIN [A-Z ]*PRIVATE KEY-----/),
  };
}

/** `host` must be an IP address or a name that resolves: else a usage error, not a bind failure. */
async function checkHost(host: string): Promise<void> {
  if (isIP(host.replace(/^\[|\]$/g, ""))) return;
  try {
    await lookup(host);
  } catch {
    throw usageError(`--host ${host}: not an IP address or a name that resolves`);
  }
}

/** Whether `host` only takes connections from this machine. */
/** A host as a URL spells it: `127.1` → `127.0.0.1`, `0:0:0:0:0:0:0:1` → `[::1]`. */
function canonicalHost(host: string): string {
  try {
    return new URL(`http://${host.includes(":") && !host.startsWith("[") ? `[${host}]` : host}`).hostname;
  } catch {
    return host;
  }
}
const isLoopback = (host: string) =>
  /^(127\.\d+\.\d+\.\d+|\[::1\]|\[::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4}\]|localhost)$/i.test(
    canonicalHost(host),
  );
/** Every address of the machine: a link naming it leads a client to itself. */
const isWildcard = (host: string) => /^(0\.0\.0\.0|\[::\])$/.test(canonicalHost(host));

/**
 * Resolve once `onSignal` has run for SIGINT or SIGTERM; a second signal while it runs calls it
 * again with `forced` (cut connections rather than wait for them).
 */
function untilSignal(onSignal: (forced: boolean) => Promise<void>): Promise<void> {
  return new Promise((resolve, reject) => {
    let received = 0;
    const handler = () => {
      received++;
      onSignal(received > 1).then(() => {
        process.off("SIGINT", handler);
        process.off("SIGTERM", handler);
        resolve();
      }, reject);
    };
    process.on("SIGINT", handler);
    process.on("SIGTERM", handler);
  });
}
