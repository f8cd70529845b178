/**
 * The HTTP summarizer against a small OpenAI-compatible server on loopback (the one fake: an LLM
 * provider is outside our reach): what it sends, how it reads the answer, and that a provider
 * that fails, stalls or answers out of shape leaves the session exactly as it was. Then the CLI's
 * `session compact` using config.json's `summarizer`.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { FreecodeError } from "../../src/errors.ts";
import { compactSession } from "../../src/session/compaction.ts";
import { httpSummarizer } from "../../src/session/http-summarizer.ts";
import { createSession } from "../../src/session/lifecycle.ts";
import { summarizerFromConfig } from "../../src/session/summarizer-config.ts";
import factory from "../../src/storage/adapters/files.ts";
import { runCliAsync, tempHome } from "../_helpers.ts";
import { conversation } from "./_conversation.ts";

const ANSWER = {
  taskGoal: "Fix the parser",
  completedSteps: ["edited f1.ts", "edited f2.ts"],
  keyDecisions: ["kept the old API because callers depend on it"],
  currentState: "tests pass; next: request 3",
};

type Reply = {
  status?: number;
  body?: unknown;
  raw?: string;
  hang?: boolean;
  /** Answer with the request's Authorization header in the body (a provider echoing the key). */
  echoAuth?: boolean;
  /** Characters before the echoed key (to place it across the error's 200-character cut). */
  pad?: number;
  /** Answer with this many bytes of `a`. */
  bytes?: number;
  headers?: Record<string, string>;
};
let reply: Reply = {};
const seen: {
  auth: string | null;
  body: { model: string; messages: { role: string; content: string }[] };
}[] = [];

const server = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  async fetch(req) {
    seen.push({
      auth: req.headers.get("authorization"),
      body: (await req.json()) as (typeof seen)[number]["body"],
    });
    if (reply.hang) await new Promise((r) => setTimeout(r, 5_000));
    if (reply.bytes) return new Response("a".repeat(reply.bytes));
    if (reply.echoAuth)
      return new Response(
        JSON.stringify({
          error: { message: `${"x".repeat(reply.pad ?? 0)}Invalid key: ${req.headers.get("authorization")}` },
        }),
        {
          status: 401,
        },
      );
    const text =
      reply.raw ??
      JSON.stringify(
        reply.body ?? { choices: [{ message: { role: "assistant", content: JSON.stringify(ANSWER) } }] },
      );
    return new Response(text, {
      status: reply.status ?? 200,
      headers: { "content-type": "application/json", ...reply.headers },
    });
  },
});
afterAll(() => server.stop(true));
const url = `http://127.0.0.1:${server.port}/v1/chat/completions`;

async function compactWith(summarizer: ReturnType<typeof httpSummarizer>) {
  await using home = await tempHome();
  const store = factory({ home: home.path, fsync: "never" });
  try {
    await createSession(store, { projectPath: "/p", id: "s" }, conversation(3, { result: (t) => `ok ${t}` }));
    const before = readFileSync(join(home.path, "sessions", "p", "s", "messages.jsonl"), "utf8");
    let error: unknown;
    let result: Awaited<ReturnType<typeof compactSession>> | undefined;
    try {
      result = await compactSession(store, "s", { keepUserTurns: 1, rollout: false, summarizer });
    } catch (e) {
      error = e;
    }
    const after = readFileSync(join(home.path, "sessions", "p", "s", "messages.jsonl"), "utf8");
    return { error, result, unchanged: before === after, meta: await store.getMeta("s") };
  } finally {
    await store.close();
  }
}

describe("http summarizer", () => {
  test("sends the dropped part as a transcript and stores the four sections it answers", async () => {
    reply = {};
    seen.length = 0;
    const r = await compactWith(httpSummarizer({ url, model: "small-model", apiKey: "sk-test" }));
    expect(r.error).toBeUndefined();
    expect(r.result).toMatchObject({ compacted: true, messagesBefore: 9, messagesAfter: 3 });
    expect(r.meta?.summary).toMatchObject({ ...ANSWER, summarizer: "http:small-model" });
    expect(r.meta?.summary?.text).toContain(
      "## Key decisions\n- kept the old API because callers depend on it",
    );
    expect(seen).toHaveLength(1);
    const sent = seen[0]!;
    expect(sent.auth).toBe("Bearer sk-test");
    expect(sent.body.model).toBe("small-model");
    expect(sent.body.messages.map((m) => m.role)).toEqual(["system", "user"]);
    const user = sent.body.messages[1]!.content;
    // The two dropped turns, tool calls with their results, and the request the kept part opens with.
    expect(user).toContain("user: request 1");
    expect(user).toContain('[tool edit {"path":"f2.ts"}]\n[result] ok 2');
    expect(user).not.toContain("finished 3");
    expect(user).toContain("continues with this user message:\nuser: request 3");
  });

  test("an answer in a code fence is read; no key means no Authorization header", async () => {
    reply = {
      body: {
        choices: [{ message: { content: `Here it is:\n\`\`\`json\n${JSON.stringify(ANSWER)}\n\`\`\`` } }],
      },
    };
    seen.length = 0;
    const r = await compactWith(httpSummarizer({ url, model: "m" }));
    expect(r.error).toBeUndefined();
    expect(r.meta?.summary?.taskGoal).toBe("Fix the parser");
    expect(seen[0]!.auth).toBeNull();
  });

  const failures: [string, Reply, string][] = [
    [
      "an HTTP error",
      { status: 401, raw: '{"error":{"message":"bad key"}}' },
      'HTTP 401: {"error":{"message":"bad key"}}',
    ],
    [
      "a reply that is not a completion",
      { raw: "<html>gateway</html>" },
      "the answer is not the JSON summary asked for",
    ],
    [
      "a summary missing a field",
      { body: { choices: [{ message: { content: JSON.stringify({ taskGoal: "x" }) } }] } },
      "(field completedSteps)",
    ],
  ];
  for (const [what, r, message] of failures)
    test(`${what}: a one-line error, the session untouched`, async () => {
      reply = r;
      const out = await compactWith(httpSummarizer({ url, model: "m" }));
      expect(out.error).toBeInstanceOf(FreecodeError);
      expect((out.error as FreecodeError).code).toBe("unavailable");
      expect((out.error as Error).message).toStartWith(`summarizer ${url}: `);
      expect((out.error as Error).message).toContain(message);
      expect((out.error as Error).message).not.toContain("\n");
      expect(out.unchanged).toBe(true);
      expect(out.meta?.summary).toBeUndefined();
      expect(out.meta?.pendingCompaction).toBeUndefined();
    });

  test("a key the provider echoes back is never shown; a huge answer or a redirect is refused", async () => {
    reply = { echoAuth: true };
    const echoed = await compactWith(httpSummarizer({ url, model: "m", apiKey: "sk-very-secret-key" }));
    expect((echoed.error as Error).message).toContain("Invalid key: Bearer [redacted]");
    expect((echoed.error as Error).message).not.toContain("sk-very-secret-key");
    // Regression: cut at 200 characters first, a key across the cut was shown in part.
    reply = { echoAuth: true, pad: 120 };
    const cut = await compactWith(
      httpSummarizer({ url, model: "m", apiKey: "sk-live-0123456789abcdefghijklmnopqrstuvwxyz" }),
    );
    expect((cut.error as Error).message).not.toContain("sk-live-0123");
    // A password in the URL: sent as Basic credentials, never shown (the URL was printed whole).
    const withPassword = url.replace("http://", "http://bob:hunter2@");
    const basic = await compactWith(httpSummarizer({ url: withPassword, model: "m" }));
    const said = (basic.error as Error).message;
    expect(said).toStartWith(`summarizer ${url.replace("http://", "http://bob:***@")}: `);
    expect(said).toContain("Invalid key: Basic [redacted]");
    expect(said).not.toContain("hunter2");
    expect(said).not.toContain(btoa("bob:hunter2"));
    reply = { bytes: 17 * 1024 * 1024 };
    const huge = await compactWith(httpSummarizer({ url, model: "m" }));
    expect((huge.error as Error).message).toBe(`summarizer ${url}: the answer is larger than 16777216 bytes`);
    expect(huge.unchanged).toBe(true);
    reply = { status: 307, headers: { location: `${url}/elsewhere` }, raw: "" };
    seen.length = 0;
    const moved = await compactWith(httpSummarizer({ url, model: "m" }));
    expect((moved.error as FreecodeError).code).toBe("unavailable");
    // Said with where it points (the runtime's "UnexpectedRedirect fetching …" named neither).
    expect((moved.error as Error).message).toBe(
      `summarizer ${url}: the endpoint redirects (HTTP 307) to ${url}/elsewhere: not followed (the transcript and the key would go along); give that url instead`,
    );
    expect(seen).toHaveLength(1);
    expect(moved.unchanged).toBe(true);
    // Regression: a key that is a piece of our own words was cut out of them ("the [redacted]ey").
    const short = await compactWith(httpSummarizer({ url, model: "m", apiKey: "k" }));
    expect((short.error as Error).message).toBe((moved.error as Error).message);
    expect(() => httpSummarizer({ url: "file:///etc/hostname", model: "m" })).toThrow("must be http(s)");
  });

  test("a provider that does not answer in time: an error, the session untouched", async () => {
    reply = { hang: true };
    const out = await compactWith(httpSummarizer({ url, model: "m", timeoutMs: 200 }));
    expect((out.error as Error).message).toBe(`summarizer ${url}: no answer within 0.2 s`);
    expect(out.unchanged).toBe(true);
  });

  test("a long dropped part is cut oldest first, and says so", async () => {
    reply = {};
    seen.length = 0;
    await compactWith(httpSummarizer({ url, model: "m", maxChars: 120 }));
    const user = seen[0]!.body.messages[1]!.content;
    expect(user).toMatch(/\[… \d+ earlier message\(s\) left out …\]/);
    expect(user).not.toContain("request 1");
    expect(user).toContain("finished 2");
  });
});

describe("config.json summarizer", () => {
  test("builtin by default; http reads its key from the named variable, which must be set", () => {
    expect(summarizerFromConfig({}).name).toBe("builtin");
    const http = { summarizer: { type: "http" as const, url, model: "m", apiKeyEnv: "MY_KEY" } };
    expect(summarizerFromConfig(http, { MY_KEY: "k" }).name).toBe("http:m");
    let error: unknown;
    try {
      summarizerFromConfig(http, {});
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(FreecodeError);
    expect((error as FreecodeError).message).toBe(
      "summarizer: the environment variable MY_KEY (apiKeyEnv) is not set",
    );
    expect((error as FreecodeError).source).toEqual({ file: "config.json", field: "summarizer.apiKeyEnv" });
  });

  test("session compact uses it; a failing provider exits 69 and changes nothing", async () => {
    await using home = await tempHome();
    const store = factory({ home: home.path, fsync: "never" });
    await createSession(store, { projectPath: "/p", id: "s" }, conversation(3, { result: (t) => `ok ${t}` }));
    await store.close();
    writeFileSync(
      join(home.path, "config.json"),
      JSON.stringify({ summarizer: { type: "http", url, model: "cli-model", apiKeyEnv: "SUMMARY_KEY" } }),
    );
    // The server runs in this process: the CLI runs asynchronously so it can answer.
    const cli = (args: string[]) => runCliAsync(args, { home: home.path, env: { SUMMARY_KEY: "sk-cli" } });
    reply = { status: 503, raw: "overloaded" };
    const failed = await cli(["session", "compact", "s", "--keep", "1"]);
    expect(failed.code).toBe(69);
    expect(failed.stderr.trim()).toBe(`[error] summarizer ${url}: HTTP 503: overloaded`);
    reply = {};
    seen.length = 0;
    const ok = await cli(["session", "compact", "s", "--keep", "1", "--json"]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ compacted: true, summary: { taskGoal: "Fix the parser" } });
    expect(seen[0]!.auth).toBe("Bearer sk-cli");
    const shown = await cli(["session", "show", "s", "--json"]);
    expect(JSON.parse(shown.stdout).meta.summary.summarizer).toBe("http:cli-model");
  }, 30_000);
});
