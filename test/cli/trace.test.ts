/**
 * `freecode trace`: JSON, list, default session, OTLP file, thresholds from flags and config, and the
 * waterfall as a terminal shows it (tmux: a real pty, captured screen), including `--follow` turning
 * an unanswered request from in flight to HUNG while the log is live.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { appendFileSync, copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Trace } from "../../src/rollout/folds/trace-types.ts";
import { loadTrace } from "../../src/rollout/load.ts";
import { BUN, parseJson, ROOT, runCli, runCliAsync, tempHome } from "../_helpers.ts";

const FIXTURE = join(ROOT, "test/rollout/fixtures/session.jsonl");

function homeWithFixture(home: string) {
  const dir = join(home, "rollout", "sessions", "fixture-session");
  mkdirSync(dir, { recursive: true });
  copyFileSync(FIXTURE, join(dir, "events.jsonl"));
}

describe("trace", () => {
  test("--json is the Trace; the default session is the one written last; --list shows both", async () => {
    await using home = await tempHome();
    homeWithFixture(home.path);
    await Bun.sleep(20);
    runCli(["rollout", "append", "newer"], {
      home: home.path,
      stdin: '{"type":"turn.started","turnId":"turn-0"}\n',
    });
    const printed = runCli(["trace", "fixture-session", "--json"], { home: home.path });
    const fixture = parseJson<Trace>(printed);
    expect(fixture).toMatchObject({ sessionId: "fixture-session", inFlight: true, eventCount: 31 });
    // Written in pieces, byte for byte what JSON.stringify gives for the library's Trace.
    const file = join(home.path, "rollout", "sessions", "fixture-session", "events.jsonl");
    const trace = await loadTrace({ file, sessionId: "fixture-session" });
    expect(printed.stdout).toBe(`${JSON.stringify(trace, null, 2)}\n`);
    expect(parseJson<Trace>(runCli(["trace", "--json"], { home: home.path })).sessionId).toBe("newer");
    const list = parseJson<{ sessions: { sessionId: string; state: string }[] }>(
      runCli(["trace", "--list", "--json"], { home: home.path }),
    );
    expect(list.sessions.map((s) => [s.sessionId, s.state])).toEqual([
      ["newer", "open"],
      ["fixture-session", "in_flight"],
    ]);
    // --limit folds and shows only the newest; the rest are counted.
    const one = parseJson<{ total: number; sessions: { sessionId: string }[] }>(
      runCli(["trace", "--list", "--limit", "1", "--json"], { home: home.path }),
    );
    expect([one.total, one.sessions.map((s) => s.sessionId)]).toEqual([2, ["newer"]]);
    const text = runCli(["trace", "--list", "--limit", "1"], { home: home.path }).stdout;
    expect(text).toContain("newer");
    expect(text).not.toContain("fixture-session");
    expect(text).toContain("… 1 older session with a log (--limit 2 shows all)");
    for (const bad of [
      ["--list", "--limit", "0"],
      ["--limit", "3"],
    ]) {
      const r = runCli(["trace", ...bad], { home: home.path });
      expect([r.code, r.stderr]).toEqual([2, expect.stringMatching(/--limit/)]);
    }
  });

  test("regression: imported logs are listed by the time of their work, not of their import", async () => {
    await using home = await tempHome();
    const codex = join(ROOT, "test", "corpus", "codex");
    const april19 = "rollout-2026-04-19T22-10-31-019da915-31a8-74d0-ad7f-640110fae046.jsonl";
    const april10 = "rollout-2026-04-10T09-55-11-019d781a-be34-7041-abb1-577f9360b907.jsonl";
    // The older work is imported last: its log file is the newest.
    for (const f of [april19, april10]) runCli(["import", "codex", join(codex, f)], { home: home.path });
    const list = parseJson<{ sessions: { sessionId: string }[] }>(
      runCli(["trace", "--list", "--json"], { home: home.path }),
    );
    expect(list.sessions.map((s) => s.sessionId)).toEqual([
      "codex-019da915-31a8-74d0-ad7f-640110fae046",
      "codex-019d781a-be34-7041-abb1-577f9360b907",
    ]);
    // And `trace` with no id opens the newest work.
    expect(parseJson<Trace>(runCli(["trace", "--json"], { home: home.path })).sessionId).toBe(
      "codex-019da915-31a8-74d0-ad7f-640110fae046",
    );
    // Its head says it was imported (the agent writes no session.ended), not that it is open.
    const head = runCli(["trace"], { home: home.path }).stdout.split("\n").slice(0, 3).join("\n");
    expect(head).toContain("imported (its agent writes no session.ended)");
    expect(head).not.toContain("open (no session.ended)");
    // And --list calls it imported, not open.
    const states = parseJson<{ sessions: { state: string }[] }>(
      runCli(["trace", "--list", "--json"], { home: home.path }),
    ).sessions.map((s) => s.state);
    expect(states).toEqual(["imported", "imported"]);
    expect(runCli(["trace", "--list"], { home: home.path }).stdout).toMatch(
      /codex-019da915\S* +\S+ \S+ +imported /,
    );
    // A last line longer than the tail first read (a call carrying a written file) is read whole.
    const big = JSON.stringify({
      type: "function.call",
      turnId: "t0",
      tool: "write",
      args: { content: "x".repeat(100_000) },
      callId: "c1",
      timestamp: Date.parse("2024-01-01T00:00:00Z"),
    });
    runCli(["rollout", "append", "old-work"], { home: home.path, stdin: `${big}\n` });
    const again = parseJson<{ sessions: { sessionId: string }[] }>(
      runCli(["trace", "--list", "--json"], { home: home.path }),
    );
    expect(again.sessions.map((s) => s.sessionId).at(-1)).toBe("old-work");
    // A blank line at the end (the reader skips it) does not hide the last event.
    appendFileSync(join(home.path, "rollout", "sessions", "old-work", "events.jsonl"), "\n\n");
    const blank = parseJson<{ sessions: { sessionId: string }[] }>(
      runCli(["trace", "--list", "--json"], { home: home.path }),
    );
    expect(blank.sessions.map((s) => s.sessionId).at(-1)).toBe("old-work");
    // The columns line up past the id column's width.
    runCli(["rollout", "append", `x${"y".repeat(60)}`], { home: home.path, stdin: `${big}\n` });
    const rows = runCli(["trace", "--list"], { home: home.path })
      .stdout.split("\n")
      .filter((l) => l.includes(" 2024-") || l.includes(" 2026-"));
    expect(new Set(rows.map((l) => l.search(/ \d{4}-\d\d-\d\d /))).size).toBe(1);
  });

  test("--hang-ms and config.json hangMs decide hung", async () => {
    await using home = await tempHome();
    homeWithFixture(home.path);
    const flag = parseJson<Trace>(
      runCli(["trace", "fixture-session", "--json", "--hang-ms", "100"], { home: home.path }),
    );
    expect([flag.hung, flag.modelSpans[3]!.status]).toEqual([true, "hung"]);
    const under = parseJson<Trace>(
      runCli(["trace", "fixture-session", "--json", "--hang-ms", "101"], { home: home.path }),
    );
    expect(under.hung).toBe(false);
    writeFileSync(join(home.path, "config.json"), JSON.stringify({ hangMs: 50 }));
    expect(parseJson<Trace>(runCli(["trace", "fixture-session", "--json"], { home: home.path })).hung).toBe(
      true,
    );
    expect(runCli(["trace", "fixture-session", "--hang-ms", "soon"], { home: home.path }).code).toBe(2);
  });

  test("--otlp writes an OTLP/JSON file that loads back", async () => {
    await using home = await tempHome();
    homeWithFixture(home.path);
    const file = join(home.path, "spans.json");
    const r = runCli(["trace", "fixture-session", "--otlp", file], { home: home.path });
    expect(r.code).toBe(0);
    const doc = JSON.parse(readFileSync(file, "utf8"));
    const spans = doc.resourceSpans[0].scopeSpans[0].spans as { name: string; traceId: string }[];
    // 1 root, 3 turns, 4 chat, 5 tool spans, 1 denial, and the Bash call with no output (left out before).
    expect(spans.length).toBe(15);
    expect(spans.at(-1)!.name).toBe("execute_tool Bash");
    expect(new Set(spans.map((s) => s.traceId)).size).toBe(1);
    expect(r.stderr).toContain("wrote 15 OTLP spans");
  });

  test("--otlp URL POSTs the document to an OTLP/HTTP collector, with the OTEL headers", async () => {
    await using home = await tempHome();
    homeWithFixture(home.path);
    const got: { path: string; auth: string | null; type: string | null; body: string }[] = [];
    let answer = () => new Response("{}", { headers: { "content-type": "application/json" } });
    using server = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      async fetch(req) {
        const url = new URL(req.url);
        got.push({
          path: url.pathname,
          auth: req.headers.get("authorization"),
          type: req.headers.get("content-type"),
          body: await req.text(),
        });
        return answer();
      },
    });
    const base = `http://127.0.0.1:${server.port}`;
    const env = { OTEL_EXPORTER_OTLP_HEADERS: "Authorization=Basic%20dXNlcjpwdw==, x-scope = a%2Cb" };
    // A URL without a path gets the traces path; the headers are decoded.
    const r = await runCliAsync(["trace", "fixture-session", "--otlp", base], { home: home.path, env });
    expect([r.code, r.stderr]).toEqual([
      0,
      expect.stringContaining(`sent 15 OTLP spans to ${base}/v1/traces`),
    ]);
    expect(got[0]).toMatchObject({
      path: "/v1/traces",
      auth: "Basic dXNlcjpwdw==",
      type: "application/json",
    });
    const spans = JSON.parse(got[0]!.body).resourceSpans[0].scopeSpans[0].spans as unknown[];
    expect(spans.length).toBe(15);
    // A path is kept; a partial success is a warning.
    answer = () => Response.json({ partialSuccess: { rejectedSpans: 2, errorMessage: "too old" } });
    const partial = await runCliAsync(["trace", "fixture-session", "--otlp", `${base}/api/otel/v1/traces`], {
      home: home.path,
    });
    expect(partial.code).toBe(0);
    expect(got[1]!.path).toBe("/api/otel/v1/traces");
    expect(got[1]!.auth).toBeNull();
    expect(partial.stderr).toContain("rejected 2 of 15 spans: too old");
    // A collector that fails: unavailable (69), one line; a 401 names the header variable.
    answer = () => new Response("boom", { status: 503 });
    const down = await runCliAsync(["trace", "fixture-session", "--otlp", base], { home: home.path });
    expect([down.code, down.stderr.trim().split("\n").length]).toEqual([69, 1]);
    expect(down.stderr).toContain("HTTP 503: boom");
    answer = () => new Response("no", { status: 401 });
    const denied = await runCliAsync(["trace", "fixture-session", "--otlp", base], { home: home.path });
    expect(denied.code).toBe(2);
    expect(denied.stderr).toContain("OTEL_EXPORTER_OTLP_HEADERS");
    // Credentials in the URL go to the collector, and are never printed (they were, whole).
    const withPassword = `http://me:s3cret-pw@127.0.0.1:${server.port}`;
    const shown = `http://me:***@127.0.0.1:${server.port}/v1/traces`;
    const refused = await runCliAsync(["trace", "fixture-session", "--otlp", withPassword], {
      home: home.path,
    });
    expect([refused.code, refused.stderr]).toEqual([2, expect.stringContaining(`${shown}: HTTP 401`)]);
    answer = () => new Response("{}", { headers: { "content-type": "application/json" } });
    const sent = await runCliAsync(["trace", "fixture-session", "--otlp", withPassword], { home: home.path });
    expect([sent.code, sent.stderr]).toEqual([0, expect.stringContaining(`sent 15 OTLP spans to ${shown}`)]);
    expect(refused.stderr + sent.stderr).not.toContain("s3cret-pw");
    expect(got.at(-1)!.auth).toBe(`Basic ${btoa("me:s3cret-pw")}`);
    // Another scheme is refused, not made into directories.
    const grpc = await runCliAsync(["trace", "fixture-session", "--otlp", "grpc://127.0.0.1:4317"], {
      home: home.path,
      cwd: home.path,
    });
    expect(grpc.code).toBe(2);
    expect(grpc.stderr).toContain("gRPC is not supported");
    expect(existsSync(join(home.path, "grpc:"))).toBe(false);
    const bad = await runCliAsync(["trace", "fixture-session", "--otlp", base], {
      home: home.path,
      env: { OTEL_EXPORTER_OTLP_HEADERS: "novalue" },
    });
    expect([bad.code, bad.stderr]).toEqual([
      2,
      expect.stringContaining('OTEL_EXPORTER_OTLP_HEADERS: "novalue" is not key=value'),
    ]);
  });

  test("--slow keeps only spans at least that long; unknown session exits 3; empty home exits 3", async () => {
    await using home = await tempHome();
    expect(runCli(["trace"], { home: home.path }).code).toBe(3);
    homeWithFixture(home.path);
    const out = runCli(["trace", "fixture-session", "--slow", "1000"], { home: home.path }).stdout;
    expect(out).toContain("chat claude-sonnet-4");
    expect(out).not.toContain("tool Edit");
    expect(runCli(["trace", "missing"], { home: home.path }).code).toBe(3);
  });

  test("regression: a collector that redirects is named with the address to give instead, the one --otlp then posts to", async () => {
    await using home = await tempHome();
    homeWithFixture(home.path);
    const moved = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch: (req) =>
        new Response(null, {
          status: 308,
          headers: { location: `https://collector.example${new URL(req.url).pathname}` },
        }),
    });
    try {
      for (const [given, advice] of [
        // A path is posted to as it is: give the whole address.
        ["/api/public/otel/v1/traces", "give https://collector.example/api/public/otel/v1/traces instead"],
        // No path: /v1/traces was added, so the address without it.
        ["", "give https://collector.example instead"],
      ] as const) {
        const r = await runCliAsync(
          ["trace", "fixture-session", "--otlp", `http://127.0.0.1:${moved.port}${given}`],
          {
            home: home.path,
          },
        );
        expect([given, r.code, r.stderr.includes(advice)]).toEqual([given, 69, true]);
      }
    } finally {
      await moved.stop(true);
    }
  });

  test("regression: flags that would do nothing together are refused (exit 2), not ignored: --otlp with --list or --follow wrote no spans", async () => {
    await using home = await tempHome();
    homeWithFixture(home.path);
    const out = join(home.path, "spans.json");
    for (const [args, message] of [
      [["--list", "--otlp", out], "--otlp writes one finished trace: not with --list"],
      [["fixture-session", "--follow", "--otlp", out], "--otlp writes one finished trace: not with --follow"],
      [["fixture-session", "--json", "--slow", "1000"], "--slow filters the waterfall: not with --json"],
      [["--list", "--slow", "5"], "--slow filters the waterfall: not with --list (which lists sessions)"],
      [["--list", "--follow"], "--follow redraws one session's trace: not with --list"],
      [["fixture-session", "--list"], "--list lists every log: give no session id"],
    ] as const) {
      const r = runCli(["trace", ...args], { home: home.path });
      expect([args, r.code, r.stderr.includes(message)]).toEqual([args, 2, true]);
    }
    expect(existsSync(out)).toBe(false);
  });
});

const hasTmux = Bun.which("tmux") !== null;
const socket = `freecode-test-${process.pid}`;
const tmux = (...args: string[]) =>
  Bun.spawnSync(["tmux", "-L", socket, ...args], { stdout: "pipe", stderr: "pipe" });
const screen = (name: string) => tmux("capture-pane", "-p", "-t", name).stdout.toString();
afterAll(() => {
  if (hasTmux) tmux("kill-server"); // our own server on our own socket
});

async function waitFor(name: string, check: (s: string) => boolean, ms = 20_000): Promise<string> {
  const until = Date.now() + ms;
  let s = "";
  while (Date.now() < until) {
    s = screen(name);
    if (check(s)) return s;
    await Bun.sleep(100);
  }
  throw new Error(`screen never matched; last screen:\n${s}`);
}

describe.skipIf(!hasTmux)("trace in a terminal (tmux; skipped when tmux is not installed)", () => {
  test("the waterfall fits 100 columns and shows turns, spans, denials and the open request", async () => {
    await using home = await tempHome();
    homeWithFixture(home.path);
    const cmd = `${BUN} ${ROOT}/src/cli/main.ts trace fixture-session; sleep 60`;
    tmux("new-session", "-d", "-s", "wf", "-x", "100", "-y", "50", "-e", `FREECODE_HOME=${home.path}`, cmd);
    const s = await waitFor("wf", (x) => x.includes("chat gpt-5"));
    const lines = s.split("\n");
    expect(lines.some((l) => /── turn turn-0#1/.test(l))).toBe(true);
    expect(lines.some((l) => /── turn turn-1#1\s+ABORTED \(user\)/.test(l))).toBe(true);
    expect(lines.some((l) => /denied Write\s+×\s+DENIED by mode/.test(l))).toBe(true);
    expect(lines.some((l) => /chat gpt-5\s+.*░ in flight 100ms/.test(l))).toBe(true);
    expect(lines.find((l) => l.includes("chat claude-sonnet-4") && l.includes("ERROR stall"))).toContain("█");
    // Nothing wrapped: every span line starts with its time offset.
    for (const l of lines.filter((x) => /^\s+\+/.test(x))) expect(l.length).toBeLessThanOrEqual(100);
    tmux("kill-session", "-t", "wf");
  }, 30_000);

  test("--follow redraws as events arrive, and an unanswered request turns HUNG against the clock", async () => {
    await using home = await tempHome();
    const append = (line: string) =>
      runCli(["rollout", "append", "live"], { home: home.path, stdin: `${line}\n` });
    append('{"type":"turn.started","turnId":"turn-0"}');
    const cmd = `${BUN} ${ROOT}/src/cli/main.ts trace live --follow --hang-ms 3000`;
    tmux("new-session", "-d", "-s", "fo", "-x", "110", "-y", "30", "-e", `FREECODE_HOME=${home.path}`, cmd);
    await waitFor("fo", (x) => x.includes("── turn turn-0#1") && x.includes("following…"));
    append('{"type":"model.request","turnId":"turn-0","provider":"p","model":"slow-model","streamed":true}');
    await waitFor("fo", (x) => /chat slow-model.*in flight/.test(x));
    const hung = await waitFor("fo", (x) => /chat slow-model.*HUNG/.test(x));
    expect(hung).toContain("HUNG (a model request is past the hang threshold)");
    tmux("send-keys", "-t", "fo", "C-c");
    await Bun.sleep(1500);
    expect(tmux("has-session", "-t", "fo").exitCode).not.toBe(0); // the command ended, so did the pane
  }, 60_000);
});
