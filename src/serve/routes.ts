/**
 * The HTTP face of `freecode serve`: a request in, a response out.
 *
 *   GET  /health              no auth   {"ok": true, "version"}
 *   POST /v1/exports          bearer    an export document → 201 {"url", "expiresAt"}
 *   GET  /v1/exports/<key>    no auth   the document; 404 unknown or malformed key, 410 expired
 *   POST /rpc                 bearer    JSON-RPC 2.0 (one request or a batch); 204 when nothing answers
 *
 * A download needs no token: the link's 43-character random key is the capability, as with a
 * pre-signed URL. Bodies are read under the size limit (`util/http-body.ts`); error bodies are
 * `{"error": "<one line>"}`.
 */
import { FreecodeError } from "../errors.ts";
import { parseExportDocument } from "../session/export.ts";
import { BodyTooLarge, readBody } from "../util/http-body.ts";
import { decodeUtf8 } from "../util/utf8.ts";
import { authorized, bearerToken } from "./auth.ts";
import { ExportsFull, type RemoteExports } from "./remote-exports.ts";
import type { RpcDispatcher } from "./rpc.ts";

export interface RoutesOptions {
  token: string;
  exports: RemoteExports;
  dispatch: RpcDispatcher;
  /** Largest request body accepted, in bytes. */
  maxBytes: number;
  /** Where links point: `http://host:port` (or a proxy's URL), no trailing slash. */
  publicUrl: string;
  version: string;
  /** An unexpected exception (the client got a bare 500). */
  onInternalError?: (error: unknown, where: string) => void;
}

const EXPORT_PATH = /^\/v1\/exports\/([^/]*)$/;

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json", "cache-control": "no-store", ...headers },
  });
const error = (status: number, message: string, headers: Record<string, string> = {}) =>
  json(status, { error: message }, headers);

/** The request handler for `Bun.serve`. */
export function createRoutes(options: RoutesOptions) {
  const { exports, maxBytes } = options;

  const denied = (request: Request) =>
    error(
      401,
      bearerToken(request.headers.get("authorization")) === undefined
        ? "missing bearer token (Authorization: Bearer <token>)"
        : "wrong token",
      { "www-authenticate": "Bearer" },
    );
  const tooLarge = (e: BodyTooLarge) =>
    // The rest of the body is not read: the connection cannot carry another request after it.
    error(413, `request body is over the limit of ${e.limit} bytes (--max-bytes)`, { connection: "close" });

  async function upload(request: Request): Promise<Response> {
    const bytes = await readBody(request, maxBytes);
    const text = decodeUtf8(bytes);
    if (text === undefined) return error(400, "the document is not valid UTF-8");
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch (e) {
      return error(400, `the document is not JSON: ${(e as Error).message}`);
    }
    try {
      parseExportDocument(raw);
    } catch (e) {
      if (e instanceof FreecodeError) return error(400, e.oneLine);
      throw e;
    }
    // Stored inside a JSON wrapper, where a byte-order mark (which the decoder above skipped) is not allowed.
    const bom = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf;
    let stored: { key: string; expiresAt: number };
    try {
      stored = exports.put(bom ? bytes.subarray(3) : bytes);
    } catch (e) {
      if (!(e instanceof ExportsFull)) throw e;
      return error(507, `${e.message} (--max-stored-bytes): try again once older links expire`);
    }
    const { key, expiresAt } = stored;
    const url = `${options.publicUrl}/v1/exports/${key}`;
    return json(201, { url, expiresAt }, { location: url });
  }

  function download(key: string): Response {
    const found = exports.get(key);
    if (found.kind === "missing") return error(404, "no such export (unknown link)");
    if (found.kind === "expired") return error(410, "this export has expired");
    return new Response(Bun.file(found.file).slice(found.start, found.end), {
      headers: { "content-type": "application/json", "cache-control": "no-store" },
    });
  }

  async function rpc(request: Request, server: { timeout(request: Request, seconds: number): void }) {
    const text = decodeUtf8(await readBody(request, maxBytes));
    // Only once the request is in (a client that stops sending still times out): a compaction
    // with an HTTP summarizer may think for minutes before the answer starts.
    server.timeout(request, 0);
    const answer =
      text === undefined
        ? JSON.stringify({
            jsonrpc: "2.0",
            id: null,
            error: { code: -32700, message: "parse error: the request is not valid UTF-8" },
          })
        : await options.dispatch(text);
    if (answer === undefined) return new Response(null, { status: 204 });
    return new Response(answer, { headers: { "content-type": "application/json" } });
  }

  return async function handle(
    request: Request,
    server: { timeout(request: Request, seconds: number): void },
  ): Promise<Response> {
    const path = new URL(request.url).pathname;
    const allow = (methods: string) =>
      methods.split(", ").includes(request.method)
        ? undefined
        : error(405, `method ${request.method} not allowed here`, { allow: methods });
    try {
      if (path === "/health") return allow("GET, HEAD") ?? json(200, { ok: true, version: options.version });
      if (path === "/v1/exports") {
        const wrong = allow("POST");
        if (wrong) return wrong;
        if (!authorized(request, options.token)) return denied(request);
        return await upload(request);
      }
      const key = EXPORT_PATH.exec(path)?.[1];
      if (key !== undefined) return allow("GET, HEAD") ?? download(key);
      if (path === "/rpc") {
        const wrong = allow("POST");
        if (wrong) return wrong;
        if (!authorized(request, options.token)) return denied(request);
        return await rpc(request, server);
      }
      return error(404, "not found");
    } catch (e) {
      if (e instanceof BodyTooLarge) return tooLarge(e);
      // The client went away, or a second signal cut the connection mid-body: nobody to answer.
      if (request.signal.aborted) return error(400, "the request was aborted");
      options.onInternalError?.(e, `${request.method} ${path}`);
      return error(500, "internal error");
    }
  };
}
