/**
 * Sending a trace's OTLP/JSON document to a collector over OTLP/HTTP (`trace --otlp URL`): Jaeger,
 * Langfuse, an OpenTelemetry Collector. The endpoint is taken as the OpenTelemetry exporters take
 * theirs: a URL with no path gets the traces path `/v1/traces`; one with a path is used as it is.
 * Headers come from `OTEL_EXPORTER_OTLP_TRACES_HEADERS`, else `OTEL_EXPORTER_OTLP_HEADERS`
 * (`key=value` pairs, comma-separated, values URL-encoded: `Authorization=Basic%20…`). Failures are
 * one line each, with the exit codes of the sync client (`sync/client.ts`).
 */
import { badInput, FreecodeError } from "../errors.ts";
import { shownUrl } from "../util/shown-url.ts";
import { bodyText, httpError, httpUrl, type SyncOptions, send } from "./client.ts";

/** Where spans go: `url` as is, or its `/v1/traces` when it names no path. */
export function otlpTracesUrl(url: string): string {
  const u = httpUrl(url, "the OTLP endpoint");
  if (u.pathname === "" || u.pathname === "/") u.pathname = "/v1/traces";
  return u.href;
}

/** The headers the OTLP environment variables name (the traces one wins over the general one). */
export function otlpHeaders(env: Record<string, string | undefined> = process.env): Record<string, string> {
  const name =
    env.OTEL_EXPORTER_OTLP_TRACES_HEADERS !== undefined
      ? "OTEL_EXPORTER_OTLP_TRACES_HEADERS"
      : "OTEL_EXPORTER_OTLP_HEADERS";
  const raw = env[name];
  const headers: Record<string, string> = {};
  if (!raw?.trim()) return headers;
  for (const pair of raw.split(",")) {
    if (!pair.trim()) continue;
    const eq = pair.indexOf("=");
    const key = eq > 0 ? pair.slice(0, eq).trim() : "";
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(key))
      throw badInput(`${name}: "${pair.trim().slice(0, 40)}" is not key=value`, { field: name });
    let value: string;
    try {
      value = decodeURIComponent(pair.slice(eq + 1).trim());
    } catch {
      throw badInput(`${name}: the value of ${key} is not URL-encoded text`, { field: name });
    }
    if (/[\r\n\0]/.test(value))
      throw badInput(`${name}: the value of ${key} holds a line break`, { field: name });
    headers[key.toLowerCase()] = value;
  }
  return headers;
}

export interface OtlpSent {
  url: string;
  /** Spans the collector said it rejected (OTLP partial success), with its message. */
  rejectedSpans: number;
  message?: string;
}

/** POST an OTLP/JSON `TracesData` document (`body`) to `url` (see `otlpTracesUrl`). */
export async function postOtlp(
  url: string,
  body: string,
  options: SyncOptions & { headers?: Record<string, string> } = {},
): Promise<OtlpSent> {
  const href = otlpTracesUrl(url);
  const response = await send(
    href,
    {
      method: "POST",
      headers: { ...options.headers, "content-type": "application/json" },
      body,
      // A redirect must not carry the headers (credentials) to wherever it points (`httpError`
      // names it).
      redirect: "manual",
    },
    options,
  );
  if (!response.ok)
    throw await httpError(
      href,
      response,
      options,
      "set OTEL_EXPORTER_OTLP_HEADERS to the collector's credentials",
    );
  // A success may still say some spans were rejected (`partialSuccess`).
  let answer: { partialSuccess?: { rejectedSpans?: unknown; errorMessage?: unknown } } | undefined;
  try {
    answer = JSON.parse(await bodyText(href, response, { ...options, maxBytes: 64 * 1024 }));
  } catch (error) {
    if (error instanceof FreecodeError) throw error;
    answer = undefined; // an empty or non-JSON 2xx body: accepted
  }
  const partial = answer?.partialSuccess;
  const rejected = Number(partial?.rejectedSpans ?? 0);
  return {
    url: shownUrl(href),
    rejectedSpans: Number.isFinite(rejected) ? rejected : 0,
    ...(typeof partial?.errorMessage === "string" && partial.errorMessage
      ? { message: partial.errorMessage }
      : {}),
  };
}
