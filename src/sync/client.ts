/**
 * The sync client: upload an export document to a sync endpoint (`freecode serve`, or anything
 * speaking the same two routes) and download one from the link it gave. HTTP failures become one
 * line each, with the exit code saying whose problem it is:
 *
 *   network error, timeout, 5xx, an answer out of shape   unavailable (69)
 *   401, 403 (token missing or wrong)                     usage (2)
 *   404 (unknown link), 410 (expired)                     not_found (3)
 *   400, 413, any other 4xx                               bad_input (2)
 */

import * as v from "valibot";
import { badInput, FreecodeError, notFound, usageError } from "../errors.ts";
import { isBearerToken, MIN_TOKEN_LENGTH } from "../util/bearer-token.ts";
import { BodyTooLarge, readBody } from "../util/http-body.ts";
import { clip, escapeLine } from "../util/one-line.ts";
import { shownUrl } from "../util/shown-url.ts";
import { decodeUtf8 } from "../util/utf8.ts";

/** Give up on a request after this long (connect, send and read). */
export const SYNC_TIMEOUT_MS = 60_000;
/** A download larger than this is refused (the server's upload limit is 64 MiB by default). */
export const MAX_DOWNLOAD_BYTES = 512 * 1024 * 1024;

export interface SyncOptions {
  /** Sent as `Authorization: Bearer …` on upload. */
  token?: string;
  timeoutMs?: number;
  maxBytes?: number;
  /** For tests and proxies; default the global `fetch`. */
  fetch?: typeof fetch;
}

export interface Uploaded {
  url: string;
  expiresAt: number;
}

/** A link is printed and handed on: http(s) only, no control characters (a hostile endpoint's ESC). */
const Link = v.pipe(
  v.string(),
  v.url(),
  v.check((u) => /^https?:\/\//i.test(u) && !/[\u0000-\u001f\u007f]/.test(u), "not an http(s) link"),
);
const Answer = v.object({ url: Link, expiresAt: v.pipe(v.number(), v.safeInteger()) });

/** `url` if it is http(s), else a usage error. */
export function httpUrl(url: string, what: string): URL {
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    parsed = undefined;
  }
  if (!parsed || (parsed.protocol !== "http:" && parsed.protocol !== "https:"))
    throw usageError(`${what} must be an http:// or https:// URL (got "${shownUrl(url)}")`);
  return parsed;
}

/** Where an endpoint takes uploads: `<endpoint>/v1/exports` (a path prefix of the endpoint kept). */
export function exportsUrl(endpoint: string): string {
  const base = httpUrl(endpoint, "the sync endpoint");
  if (!base.pathname.endsWith("/")) base.pathname += "/";
  return new URL("v1/exports", base).href;
}

const unavailable = (message: string, cause?: unknown) =>
  new FreecodeError("unavailable", message, cause === undefined ? {} : { cause });

/** Send one request, mapping a failure to connect or to answer in time to `unavailable`. */
export async function send(url: string, init: RequestInit, options: SyncOptions): Promise<Response> {
  const timeoutMs = options.timeoutMs ?? SYNC_TIMEOUT_MS;
  try {
    return await (options.fetch ?? fetch)(url, { ...init, signal: AbortSignal.timeout(timeoutMs) });
  } catch (error) {
    throw failedToSend(url, error, timeoutMs);
  }
}

function failedToSend(url: string, error: unknown, timeoutMs: number): FreecodeError {
  const e = error as Error;
  if (e.name === "TimeoutError")
    return unavailable(`${shownUrl(url)}: no answer within ${timeoutMs / 1000} s`, e);
  return unavailable(`${shownUrl(url)}: ${(e.message ?? String(e)).split("\n")[0]}`, e);
}

/** The body of `response` as text, under the size limit. */
export async function bodyText(url: string, response: Response, options: SyncOptions): Promise<string> {
  let bytes: Uint8Array;
  try {
    bytes = await readBody(response, options.maxBytes ?? MAX_DOWNLOAD_BYTES);
  } catch (error) {
    if (error instanceof BodyTooLarge) throw badInput(`${shownUrl(url)}: ${error.message}`);
    throw failedToSend(url, error, options.timeoutMs ?? SYNC_TIMEOUT_MS);
  }
  const text = decodeUtf8(bytes);
  if (text === undefined) throw badInput("the answer is not valid UTF-8", { file: shownUrl(url) });
  return text;
}

/**
 * A non-2xx answer as the error it means (see the table at the top); `authHint` follows a 401/403
 * (what to set).
 */
export async function httpError(
  url: string,
  response: Response,
  options: SyncOptions,
  authHint = "set FREECODE_SYNC_TOKEN to the server's token",
): Promise<FreecodeError> {
  let text = "";
  try {
    text = await bodyText(url, response, { ...options, maxBytes: 64 * 1024 });
  } catch {
    // An error page that cannot be read (too big, cut off, not UTF-8): the status says enough.
  }
  const detail = errorDetail(text).replace(/\s+/g, " ").trim().slice(0, 300);
  const s = response.status;
  // Not followed (`redirect: "manual"`): it would carry the credentials to wherever it points.
  if (REDIRECTS.has(s)) {
    const to = response.headers.get("location");
    return unavailable(
      `${shownUrl(url)}: the endpoint redirects (HTTP ${s}) to ${to ? escapeLine(to) : "an address it does not give"}: ` +
        `freecode follows no redirect (the credentials would go along)${to ? `; give ${escapeLine(endpointOf(url, to))} instead` : ""}`,
    );
  }
  const message = `${shownUrl(url)}: HTTP ${s}${detail ? `: ${detail}` : ""}`;
  if (s === 401 || s === 403) return usageError(`${message} (${authHint})`);
  if (s === 404 || s === 410) return notFound(message);
  if (s >= 400 && s < 500) return badInput(message);
  return unavailable(message);
}

/** The statuses that redirect (a 304 answers a conditional request: not one). */
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/**
 * What to give instead of the endpoint that redirected `url` to `to`: `to` without the path freecode
 * adds to an endpoint (`/v1/exports`; `/v1/traces` to an address that has no path), so that given,
 * it posts where `to` is (given whole, `…/v1/exports` became `…/v1/exports/v1/exports`, a 404).
 */
function endpointOf(url: string, to: string): string {
  const target = new URL(to, url);
  // The sync client adds `/v1/exports` to every endpoint.
  if (new URL(url).pathname.endsWith("/v1/exports") && target.pathname.endsWith("/v1/exports"))
    return `${target.origin}${target.pathname.slice(0, -"/v1/exports".length)}${target.search}`;
  // The OTLP exporter adds `/v1/traces` to an address with no path only: one with a path is used as it is.
  if (target.pathname === "/v1/traces" && !target.search) return target.origin;
  return target.href;
}

/** The `error` of our JSON error bodies, else the text as it is (a proxy's error page). */
function errorDetail(text: string): string {
  let detail = text;
  try {
    const error = (JSON.parse(text) as { error?: unknown } | null)?.error;
    if (typeof error === "string") detail = error;
  } catch {
    // Not JSON: shown as it is.
  }
  // What another server says reaches a terminal: control characters escaped, one line, short.
  return clip(escapeLine(detail.replace(/\s+/g, " ").trim()), 200);
}

/** POST `document` (JSON text) to `endpoint`'s `/v1/exports`; the link and its expiry. */
export async function uploadExport(
  endpoint: string,
  document: string,
  options: SyncOptions = {},
): Promise<Uploaded> {
  const url = exportsUrl(endpoint);
  if (options.token !== undefined && !isBearerToken(options.token))
    throw usageError(
      `FREECODE_SYNC_TOKEN is not a bearer token: at least ${MIN_TOKEN_LENGTH} characters of A-Z a-z 0-9 - . _ ~ + / (no spaces or newlines)`,
    );
  const response = await send(
    url,
    {
      method: "POST",
      headers: {
        "content-type": "application/json",
        ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
      },
      body: document,
      // A redirect must not carry the token to wherever it points (`httpError` names it).
      redirect: "manual",
    },
    options,
  );
  if (!response.ok) throw await httpError(url, response, options);
  const text = await bodyText(url, response, { ...options, maxBytes: 64 * 1024 });
  let answer: unknown;
  try {
    answer = JSON.parse(text);
  } catch {
    answer = undefined;
  }
  const r = v.safeParse(Answer, answer);
  if (!r.success)
    throw unavailable(
      `${shownUrl(url)}: the answer is not {url, expiresAt} with an http(s) link: ${errorDetail(text)}`,
    );
  return r.output;
}

/** GET the document at `url` (a link from `uploadExport`), parsed as JSON but not yet checked. */
export async function downloadExport(url: string, options: SyncOptions = {}): Promise<unknown> {
  const href = httpUrl(url, "the link").href;
  const response = await send(href, { method: "GET", headers: { accept: "application/json" } }, options);
  if (!response.ok) throw await httpError(href, response, options);
  const text = await bodyText(href, response, options);
  try {
    return JSON.parse(text);
  } catch (error) {
    throw badInput(`not JSON: ${(error as Error).message}`, { file: href });
  }
}
