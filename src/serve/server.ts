/**
 * `startServer`: the sync endpoint and the JSON-RPC interface on one HTTP listener, over a store
 * the caller opened. Expired exports are swept before it starts listening and then every minute.
 * `stop()` stops accepting connections, lets requests in flight finish and ends the sweep; the
 * store stays open (it is the caller's to close).
 */
import { chmodSync, statSync } from "node:fs";
import type { Config } from "../config.ts";
import { homePaths } from "../home.ts";
import type { StorageAdapter } from "../storage/contract.ts";
import { VERSION } from "../version.ts";
import { newToken } from "./auth.ts";
import { sessionMethods } from "./methods.ts";
import { remoteExports } from "./remote-exports.ts";
import { createRoutes } from "./routes.ts";
import { createRpcDispatcher } from "./rpc.ts";

export const DEFAULT_HOST = "127.0.0.1";
export const DEFAULT_PORT = 7377;
/** 64 MiB: the largest upload or JSON-RPC request by default. */
export const DEFAULT_MAX_BYTES = 64 * 1024 * 1024;
/** 1 GiB: the most bytes of uploaded exports held at once by default. */
export const DEFAULT_MAX_STORED_BYTES = 1024 * 1024 * 1024;
/** Seven days: how long an uploaded export stays downloadable by default. */
export const DEFAULT_TTL_MS = 7 * 24 * 60 * 60 * 1000;
const SWEEP_EVERY_MS = 60_000;

export interface ServerOptions {
  store: StorageAdapter;
  /** The freecode home: uploads go to `<home>/remote`. */
  home: string;
  /** The home's config.json (summarizer, rollout, fsync); default empty. */
  config?: Config;
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  /** The bearer token; default a new random one (read it from the result). */
  token?: string;
  maxBytes?: number;
  /** The most bytes of uploads held at once (default 1 GiB); past it an upload is refused (507). */
  maxStoredBytes?: number;
  ttlMs?: number;
  /** Base of the links handed out (behind a proxy); default `http://host:port`. */
  publicUrl?: string;
  sweepIntervalMs?: number;
  /** The clock expiry is judged by (for tests); default `Date.now`. */
  now?: () => number;
  /** Environment for the methods (summarizer API key, FREECODE_ROLLOUT); default `process.env`. */
  env?: Record<string, string | undefined>;
  /** An unexpected exception in a request or the sweep (the client got a bare internal error). */
  onInternalError?: (error: unknown, where: string) => void;
  /** Serve HTTPS with this certificate chain and private key (PEM text). */
  tls?: { cert: string; key: string };
}

export interface RunningServer {
  /** `http(s)://host:port` as listened on. */
  url: string;
  token: string;
  /** Expired exports removed by the startup sweep. */
  swept: number;
  /** Stop accepting, finish requests in flight (`force`: cut them), end the sweep. */
  stop(force?: boolean): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** `host` as it goes in a URL (an IPv6 address in brackets). */
const urlHost = (host: string) => (host.includes(":") && !host.startsWith("[") ? `[${host}]` : host);

/** Start listening: the server accepts connections once this returns. */
export function startServer(options: ServerOptions): RunningServer {
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  const token = options.token ?? newToken();
  const onInternalError = options.onInternalError;
  const exports = remoteExports({
    dir: homePaths(options.home).remote,
    ttlMs: options.ttlMs ?? DEFAULT_TTL_MS,
    maxStoredBytes: options.maxStoredBytes ?? DEFAULT_MAX_STORED_BYTES,
    fsync: options.config?.fsync !== "never",
    ...(options.now ? { now: options.now } : {}),
  });
  const dispatch = createRpcDispatcher(
    sessionMethods({
      store: options.store,
      config: options.config ?? {},
      configFile: homePaths(options.home).config,
      home: options.home,
      ...(options.env ? { env: options.env } : {}),
    }),
    { onInternalError: (error, method) => onInternalError?.(error, `rpc ${method}`) },
  );
  // The links' keys are their only secret: a `remote/` another user can list gives them away.
  tightenDir(exports.dir);
  const swept = exports.sweep();
  let publicUrl = options.publicUrl?.replace(/\/+$/, "") ?? "";
  const routes = createRoutes({
    token,
    exports,
    dispatch,
    maxBytes,
    get publicUrl() {
      return publicUrl;
    },
    version: VERSION,
    ...(onInternalError ? { onInternalError } : {}),
  });
  const server = Bun.serve({
    hostname: options.host ?? DEFAULT_HOST,
    port: options.port ?? DEFAULT_PORT,
    idleTimeout: 30,
    // Our own limit (`readBody`) answers 413 with a JSON error, a declared length over it before a
    // byte is read; Bun's only has to stay out of its way (at `maxBytes + 16 MiB` it answered a
    // larger declared length itself, with no body). The body streams: nothing is held past ours.
    maxRequestBodySize: Number.MAX_SAFE_INTEGER,
    fetch: routes,
    ...(options.tls ? { tls: { cert: options.tls.cert, key: options.tls.key } } : {}),
    error(error) {
      onInternalError?.(error, "http");
      return new Response(JSON.stringify({ error: "internal error" }), {
        status: 500,
        headers: { "content-type": "application/json" },
      });
    },
  });
  const scheme = options.tls ? "https" : "http";
  const url = `${scheme}://${urlHost(server.hostname ?? options.host ?? DEFAULT_HOST)}:${server.port}`;
  publicUrl ||= url;
  const sweep = setInterval(() => {
    try {
      exports.sweep();
    } catch (error) {
      onInternalError?.(error, "sweep");
    }
  }, options.sweepIntervalMs ?? SWEEP_EVERY_MS);
  sweep.unref();
  let stopping: Promise<void> | undefined;
  const stop = (force = false) => {
    clearInterval(sweep);
    if (force) return server.stop(true);
    stopping ??= server.stop();
    return stopping;
  };
  return { url, token, swept, stop, [Symbol.asyncDispose]: () => stop() };
}

/** Make an existing directory 0700 when others may read or enter it (created so, it already is). */
function tightenDir(dir: string): void {
  const st = statSync(dir, { throwIfNoEntry: false });
  if (st?.isDirectory() && (st.mode & 0o077) !== 0) chmodSync(dir, 0o700);
}
