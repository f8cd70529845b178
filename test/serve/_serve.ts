/**
 * `freecode serve` as a real child process from source, on loopback with `--port 0`: started,
 * waited for until it prints `listening on http://…` (its readiness signal, no fixed sleep), its
 * stderr kept for assertions, and stopped with a signal whose exit code the test checks.
 */
import { afterAll, beforeAll, expect } from "bun:test";
import { join } from "node:path";
import { BUN, ROOT, tempHome } from "../_helpers.ts";

export interface Served extends AsyncDisposable {
  url: string;
  /** The token the server uses (the one given, or the one it printed). */
  token: string;
  proc: Bun.Subprocess<"ignore", "pipe", "pipe">;
  stderr(): string;
  /** Send `signal` (once) and wait for the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number>;
  /** Wait for the process to end (after a signal sent some other way); its exit code. */
  exited(): Promise<number>;
  /** `fetch` against the server, with the token unless `auth: false`. */
  fetch(path: string, init?: RequestInit & { auth?: boolean }): Promise<Response>;
  /** One JSON-RPC call over HTTP; the parsed response. */
  rpc(method: string, params?: unknown, id?: string | number): Promise<RpcAnswer>;
}

export type RpcAnswer = {
  jsonrpc: "2.0";
  id: unknown;
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
};

export const TOKEN = "test-token-0123456789abcdef";

/** Start `freecode serve --port 0 …args` on `home`; `token: null` leaves FREECODE_SERVE_TOKEN unset. */
export async function serve(
  home: string,
  args: string[] = [],
  options: { token?: string | null; env?: Record<string, string> } = {},
): Promise<Served> {
  const env: Record<string, string> = { NO_COLOR: "1" };
  for (const [k, v] of Object.entries(process.env))
    if (v !== undefined && k !== "FREECODE_SERVE_TOKEN") env[k] = v;
  Object.assign(env, { FREECODE_HOME: home }, options.env);
  const given = options.token === undefined ? TOKEN : options.token;
  if (given !== null) env.FREECODE_SERVE_TOKEN = given;
  const proc = Bun.spawn([BUN, join(ROOT, "src/cli/main.ts"), "serve", "--port", "0", ...args], {
    cwd: ROOT,
    env,
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  let text = "";
  let wake: () => void = () => {};
  const drained = (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of proc.stderr) {
      text += decoder.decode(chunk, { stream: true });
      wake();
    }
    wake();
  })();
  const deadline = Date.now() + 30_000;
  let url: string | undefined;
  while (!(url = /listening on (https?:\/\/\S+)/.exec(text)?.[1])) {
    if (proc.exitCode !== null || Date.now() > deadline) {
      proc.kill("SIGKILL");
      await drained;
      throw new Error(`serve did not start (exit ${proc.exitCode}):\n${text}`);
    }
    await Promise.race([new Promise<void>((r) => (wake = r)), Bun.sleep(100)]);
  }
  const token = given ?? /token: (\S+)/.exec(text)?.[1] ?? "";
  const exited = async () => {
    const code = await proc.exited;
    await drained;
    return code;
  };
  let exit: Promise<number> | undefined;
  const stop = (signal: NodeJS.Signals = "SIGTERM") => {
    if (!exit) {
      proc.kill(signal);
      exit = exited();
    }
    return exit;
  };
  const served: Served = {
    url,
    token,
    proc,
    stderr: () => text,
    stop,
    exited,
    fetch(path, init = {}) {
      const { auth = true, ...rest } = init;
      const headers = new Headers(rest.headers);
      if (auth && !headers.has("authorization")) headers.set("authorization", `Bearer ${token}`);
      return fetch(`${url}${path}`, { ...rest, headers });
    },
    async rpc(method, params, id = 1) {
      const response = await served.fetch("/rpc", {
        method: "POST",
        body: JSON.stringify({ jsonrpc: "2.0", id, method, ...(params === undefined ? {} : { params }) }),
      });
      return (await response.json()) as RpcAnswer;
    },
    async [Symbol.asyncDispose]() {
      if (proc.exitCode === null) await stop("SIGKILL");
    },
  };
  return served;
}

/** A message input as `session create` takes it on stdin. */
export const userSays = (content: string, extra: Record<string, unknown> = {}) => ({
  role: "user",
  parts: [{ type: "text", content }],
  ...extra,
});
export const assistantSays = (content: string, extra: Record<string, unknown> = {}) => ({
  role: "assistant",
  parts: [{ type: "text", content }],
  ...extra,
});

/**
 * One `freecode serve` on a fresh home shared by a test file's tests: started before them, stopped
 * after (exit 0 checked). `served.server` and `served.home` are set once `beforeAll` ran.
 */
export function serveForFile(): { server: Served; home: string } {
  const served = {} as { server: Served; home: string };
  let home: { path: string } & AsyncDisposable;
  beforeAll(async () => {
    home = await tempHome();
    served.home = home.path;
    served.server = await serve(home.path);
  });
  afterAll(async () => {
    expect(await served.server.stop()).toBe(0);
    await home[Symbol.asyncDispose]();
  });
  return served;
}

/** The result of a JSON-RPC call that must succeed (its error fails the test, with the method). */
export async function rpcOk<T>(on: Served, method: string, params?: unknown): Promise<T> {
  const r = await on.rpc(method, params);
  if (r.error) throw new Error(`${method}: ${JSON.stringify(r.error)}`);
  return r.result as T;
}
