/**
 * The one OpenAI-compatible chat completions call that the HTTP summarizer and the HTTP titler
 * share: a POST with a timeout, no redirects, a cap on the answer's size, and errors that are one
 * line, name the service and never carry the API key. The caller reads the answer's content.
 */

import * as v from "valibot";
import { badInput, FreecodeError } from "../errors.ts";
import { BodyTooLarge, readBody } from "../util/http-body.ts";
import { clip, escapeLine } from "../util/one-line.ts";
import { shownUrl } from "../util/shown-url.ts";
import { decodeUtf8 } from "../util/utf8.ts";

/** Where a chat completions endpoint is and how to call it. */
export interface ChatEndpoint {
  /** The chat completions URL (`https://api.openai.com/v1/chat/completions`, a local server's…). */
  url: string;
  model: string;
  /** Sent as `Authorization: Bearer …` when set. */
  apiKey?: string;
  /** Give up after this long (default 120 s). */
  timeoutMs?: number;
  /** For tests and proxies; default the global `fetch`. */
  fetch?: typeof fetch;
}

export interface ChatMessage {
  role: "system" | "user" | "assistant";
  content: string;
}

/** The largest answer read (a summary is a few KB; a provider streaming gigabytes is refused). */
export const MAX_ANSWER_BYTES = 16 * 1024 * 1024;

const Completion = v.object({
  choices: v.pipe(
    v.array(v.object({ message: v.object({ content: v.nullable(v.string()) }) })),
    v.minLength(1),
  ),
});

export interface ChatClient {
  /**
   * An `unavailable` error naming the service, `service url: message: detail`; `detail` is what the
   * endpoint or the runtime said, the key redacted from it (from it alone: a key that is a word of
   * our own message, `k`, cut the message's "key" into "[redacted]ey").
   */
  fail(message: string, detail?: string, cause?: unknown): FreecodeError;
  /**
   * The content of the first choice (empty when null). A reply that is not a completion fails
   * with `the answer is not <expected>: why`.
   */
  complete(messages: ChatMessage[], expected: string): Promise<string>;
}

/** Why a valibot parse (or JSON.parse) failed, as a short phrase naming the field. */
export function parseFailure(error: unknown): string {
  const issue = error instanceof v.ValiError ? error.issues[0] : undefined;
  const path = issue ? v.getDotPath(issue) : null;
  return issue ? `${issue.message}${path ? ` (field ${path})` : ""}` : (error as Error).message;
}

/**
 * The API key a config entry names by its variable (`<service>.apiKeyEnv`), read from `env`;
 * `bad_input` naming the variable when it is not set (the key itself never goes in config.json).
 */
export function apiKeyFromEnv(
  service: string,
  apiKeyEnv: string | undefined,
  env: Record<string, string | undefined>,
  file: string,
): string | undefined {
  if (apiKeyEnv === undefined) return undefined;
  const key = env[apiKeyEnv];
  if (!key)
    throw badInput(`${service}: the environment variable ${apiKeyEnv} (apiKeyEnv) is not set`, {
      file,
      field: `${service}.apiKeyEnv`,
    });
  return key;
}

/** The password a URL holds, and the Basic credentials `fetch` makes of it (none without one). */
function urlCredentials(url: string): string[] {
  try {
    const u = new URL(url);
    if (!u.password) return [];
    return [
      decodeURIComponent(u.password),
      btoa(`${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`),
    ];
  } catch {
    return [];
  }
}

/** A client for `endpoint`; `service` ("summarizer", "titler") starts every error message. */
export function chatClient(endpoint: ChatEndpoint, service: string): ChatClient {
  if (!/^https?:\/\//i.test(endpoint.url))
    throw new FreecodeError("bad_input", `${service} url must be http(s): ${shownUrl(endpoint.url)}`);
  const { apiKey, url } = endpoint;
  // A provider may echo the key back ("Invalid key: Bearer sk-…"), or the Basic credentials a URL
  // with a password makes: never in a message we pass on.
  const secrets = [apiKey, ...urlCredentials(url)].filter((x): x is string => Boolean(x));
  const hide = (text: string) => secrets.reduce((t, secret) => t.split(secret).join("[redacted]"), text);
  /** `fail` with a detail already redacted. */
  const said = (message: string, detail?: string, cause?: unknown) =>
    new FreecodeError(
      "unavailable",
      `${service} ${shownUrl(url)}: ${message}${detail === undefined ? "" : `: ${detail}`}`,
      { cause },
    );
  const fail = (message: string, detail?: string, cause?: unknown) =>
    said(message, detail === undefined ? undefined : hide(detail), cause);
  const timeoutMs = endpoint.timeoutMs ?? 120_000;
  const late = (e: Error) => fail(`no answer within ${timeoutMs / 1000} s`, undefined, e);

  async function post(messages: ChatMessage[]): Promise<Response> {
    let response: Response;
    try {
      response = await (endpoint.fetch ?? fetch)(url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}),
        },
        body: JSON.stringify({ model: endpoint.model, temperature: 0, messages }),
        signal: AbortSignal.timeout(timeoutMs),
        // A redirect would send the transcript elsewhere, or turn the POST into a bodiless GET:
        // not followed, and said with where it points (the runtime's own words named neither).
        redirect: "manual",
      });
    } catch (error) {
      const e = error as Error;
      if (e.name === "TimeoutError") throw late(e);
      throw fail("the request failed", e.message.split("\n")[0] ?? String(e), e);
    }
    if (response.status >= 300 && response.status < 400 && response.status !== 304) {
      const to = response.headers.get("location");
      await response.body?.cancel();
      throw fail(
        `the endpoint redirects (HTTP ${response.status}) to ${to ? escapeLine(hide(to)) : "an address it does not give"}: not followed (the transcript and the key would go along); give that url instead`,
      );
    }
    return response;
  }

  return {
    fail,
    async complete(messages, expected) {
      const response = await post(messages);
      let text: string | undefined;
      try {
        text = decodeUtf8(await readBody(response, MAX_ANSWER_BYTES));
      } catch (error) {
        if (error instanceof BodyTooLarge)
          throw fail(`the answer is larger than ${MAX_ANSWER_BYTES} bytes`, undefined, error);
        const e = error as Error;
        if (e.name === "TimeoutError") throw late(e);
        throw fail("reading the answer failed", e.message, error);
      }
      if (text === undefined) throw fail(`the answer (HTTP ${response.status}) is not valid UTF-8`);
      if (!response.ok) {
        // Hidden before it is cut: a key cut in half would no longer match.
        const detail = hide(text).replace(/\s+/g, " ").trim();
        throw said(`HTTP ${response.status}`, detail ? clip(detail, 200) : undefined);
      }
      try {
        return v.parse(Completion, JSON.parse(text)).choices[0]!.message.content ?? "";
      } catch (error) {
        throw fail(`the answer is not ${expected}`, parseFailure(error), error);
      }
    },
  };
}
