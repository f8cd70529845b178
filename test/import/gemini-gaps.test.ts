/**
 * Regressions of the Gemini CLI importer, on recordings written here in the shape of corpus/gemini
 * and Gemini's `chatRecordingService`: any tool-call status but `cancelled` and `error` was a
 * successful call, so a call still `executing`, `scheduled` or `awaiting_approval` (the process
 * died, or it is still running) got an output it never had. Only `success` succeeds now; a call
 * left open is cut off (its turn interrupted) once the session went idle or a later response began.
 * A message Gemini wrote again (with its usage, its calls' new statuses) counts once, as last written.
 */
import { describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { importSources } from "../../src/import/import.ts";
import { loadTrace } from "../../src/rollout/load.ts";
import type { EventRecord } from "../../src/storage/records.ts";
import { openStore } from "../../src/storage/select.ts";
import { CORPUS, tempDir, tempHome } from "../_helpers.ts";
import { importOne, type Raw, sessionsFrom } from "./_corpus.ts";

const SESSION = "c0ffee00-1111-4222-8333-444455556666";
/** Long over: no process is running this session any more. */
const OLD = Date.parse("2026-05-01T10:00:00.000Z");
const MINUTE = 60_000;
const iso = (t: number) => new Date(t).toISOString();

const meta = (start: number, last: number) => ({
  sessionId: SESSION,
  projectHash: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
  startTime: iso(start),
  lastUpdated: iso(last),
  directories: ["/work/p"],
});
const user = (id: string, at: number, text: string) => ({
  id,
  timestamp: iso(at),
  type: "user",
  content: [{ text }],
});
const call = (id: string, at: number, status: string) => ({
  id,
  name: "run_shell_command",
  args: { command: "npm test" },
  status,
  timestamp: iso(at),
  displayName: "Shell",
  description: "npm test",
  ...(status === "success" || status === "error" || status === "cancelled"
    ? { result: [{ functionResponse: { id, name: "run_shell_command", response: { output: status } } }] }
    : {}),
});
const gemini = (id: string, at: number, toolCalls: Raw[], extra: Raw = {}) => ({
  id,
  timestamp: iso(at),
  type: "gemini",
  content: "",
  thoughts: [],
  model: "gemini-2.5-pro",
  toolCalls,
  ...extra,
});

/** Write a recording (`records` as JSONL; a legacy `.json` holds meta + messages) and import it. */
async function importRecording(name: string, records: Raw[]) {
  await using dir = await tempDir();
  await using home = await tempHome();
  const path = join(dir.path, name);
  const text = name.endsWith(".jsonl")
    ? `${records.map((r) => JSON.stringify(r)).join("\n")}\n`
    : JSON.stringify({ ...records[0], messages: records.slice(1) }, null, 2);
  writeFileSync(path, text);
  const { adapter, report } = await importOne(home.path, "gemini", path);
  try {
    expect(report.sources[0]!.warnings).toEqual([]);
    const [id] = await sessionsFrom(adapter, path);
    const events: EventRecord[] = [];
    for await (const r of adapter.readEvents(id!)) events.push(r.event!);
    const { messages } = await adapter.readMessages(id!);
    const trace = await loadTrace({ adapter, sessionId: id! });
    return {
      events,
      messages,
      trace,
      aborts: events.filter((e) => e.type === "turn.aborted"),
      outputs: events.filter((e) => e.type === "function.output").map((e) => [e.callId, e.failed]),
      interrupted: messages.filter((m) => m.interrupted).map((m) => m.id),
    };
  } finally {
    await adapter.close();
  }
}

describe("gemini importer gaps", () => {
  test("only `success` succeeds: executing, scheduled, awaiting_approval and unknown statuses stay open", async () => {
    const statuses = [
      "success",
      "error",
      "cancelled",
      "executing",
      "scheduled",
      "awaiting_approval",
      "validating",
    ];
    const { events, trace, outputs, aborts, interrupted } = await importRecording(
      "session-2026-05-01T10-00-c0ffee00.json",
      [
        meta(OLD, OLD + 9000),
        user("u1", OLD + 1000, "run the tests"),
        gemini(
          "g1",
          OLD + 2000,
          statuses.map((s, i) => call(`c-${s}`, OLD + 3000 + i, s)),
        ),
      ],
    );
    expect(outputs).toEqual([
      ["c-success", false],
      ["c-error", true],
    ]);
    expect(events.filter((e) => e.type === "function.denied").map((e) => e.callId)).toEqual(["c-cancelled"]);
    expect(trace.pendingCalls.map((p) => p.callId)).toEqual([
      "c-executing",
      "c-scheduled",
      "c-awaiting_approval",
      "c-validating",
    ]);
    // The session is long over: the last turn ended with calls that never finished.
    expect(aborts.map((e) => [e.turnId, e.reason, e.timestamp])).toEqual([["u1", "interrupted", OLD + 3006]]);
    expect(interrupted).toEqual(["g1"]);
  });

  test("in a live recording, an executing call is left open and its turn is not aborted", async () => {
    const now = Date.now();
    const { trace, outputs, aborts, interrupted } = await importRecording(
      "session-2026-05-01T10-00-c0ffee00.jsonl",
      [
        meta(now - 5 * MINUTE, now - 2 * MINUTE),
        user("u1", now - 4 * MINUTE, "run the tests"),
        gemini("g1", now - 3 * MINUTE, [call("c1", now - 2 * MINUTE, "executing")]),
      ],
    );
    expect(outputs).toEqual([]);
    expect(trace.pendingCalls.map((p) => p.callId)).toEqual(["c1"]);
    expect(aborts).toEqual([]);
    expect(interrupted).toEqual([]);
  });

  test("a call left open is cut off once a later response began, even in a live recording", async () => {
    const now = Date.now();
    const { aborts, interrupted } = await importRecording("session-2026-05-01T10-00-c0ffee00.jsonl", [
      meta(now - 10 * MINUTE, now - MINUTE),
      user("u1", now - 9 * MINUTE, "run the tests"),
      gemini("g1", now - 8 * MINUTE, [call("c1", now - 8 * MINUTE, "executing")]),
      // Resumed after the crash.
      user("u2", now - 3 * MINUTE, "again"),
      gemini("g2", now - 2 * MINUTE, [call("c2", now - 2 * MINUTE, "success")]),
    ]);
    expect(aborts.map((e) => e.turnId)).toEqual(["u1"]);
    expect(interrupted).toEqual(["g1"]);
  });

  test("regression: a cut-off call is logged in its turn, before its abort, not at the end of the log", async () => {
    const { events } = await importRecording("session-2026-05-01T10-00-c0ffee00.jsonl", [
      meta(OLD, OLD + 30_000),
      user("u1", OLD + 1000, "run the tests"),
      gemini("g1", OLD + 2000, [call("c1", OLD + 3000, "executing")]),
      user("u2", OLD + 20_000, "again"),
      gemini("g2", OLD + 21_000, []),
    ]);
    const order = events.map((e) => `${e.type}${e.callId ? ` ${e.callId}` : ""}`);
    // The call went in after the next turn (`finish` wrote it), its turn showing no tool call.
    expect(order.indexOf("function.call c1")).toBe(order.indexOf("turn.aborted") - 1);
    expect(order.indexOf("turn.aborted")).toBeLessThan(order.lastIndexOf("turn.started"));
    expect(events.find((e) => e.type === "function.call")!.turnId).toBe("u1");
  });

  test("a message written again counts once, as last written: its usage, its calls' last status", async () => {
    const tokens = { input: 100, output: 10, cached: 40, thoughts: 5, tool: 2, total: 117 };
    const first = gemini("g1", OLD + 2000, [], { content: [{ text: "running them" }] });
    const { events, messages, outputs, aborts } = await importRecording(
      "session-2026-05-01T10-00-c0ffee00.jsonl",
      [
        meta(OLD, OLD),
        user("u1", OLD + 1000, "run the tests"),
        first,
        { $set: { lastUpdated: iso(OLD + 2000) } },
        // `recordMessageTokens`, then `recordToolCalls` before and after the call ran: the same message again.
        { ...first, tokens },
        { ...first, tokens, toolCalls: [call("c1", OLD + 3000, "executing")] },
        { ...first, tokens, toolCalls: [call("c1", OLD + 3000, "success")] },
        { $set: { lastUpdated: iso(OLD + 4000) } },
      ],
    );
    expect(messages.map((m) => m.id)).toEqual(["u1", "g1"]);
    const usage = events.filter((e) => e.type === "model.response" && e.inputTokens !== undefined);
    expect(usage).toHaveLength(1);
    expect(outputs).toEqual([["c1", false]]);
    expect(events.filter((e) => e.type === "function.call")).toHaveLength(1);
    expect(aborts).toEqual([]);
  });
});

test("a live recording's last message without tokens waits for them: its response lands with its usage", async () => {
  await using dir = await tempDir();
  await using home = await tempHome();
  const now = Date.now();
  const path = join(dir.path, "session-2026-05-01T10-00-c0ffee00.jsonl");
  const first = gemini("g1", now - 2000, [], { content: [{ text: "running them" }] });
  const head = [meta(now - 3000, now - 2000), user("u1", now - 3000, "run the tests"), first];
  const write = (records: Raw[]) =>
    writeFileSync(path, `${records.map((r) => JSON.stringify(r)).join("\n")}\n`);
  // One store across the imports (a files store: what was written stays written).
  const responses = async () => {
    const { adapter } = await openStore("files", { home: home.path, fsync: "never" });
    try {
      const report = await importSources({
        agent: "gemini",
        paths: [path],
        adapter,
        home: home.path,
        fsync: false,
      });
      const [id] = await sessionsFrom(adapter, path);
      const events: EventRecord[] = [];
      for await (const r of adapter.readEvents(id!)) events.push(r.event!);
      const model = events
        .filter((e) => e.type.startsWith("model."))
        .map((e) => [e.type, e.outputTokens ?? null]);
      return { model, read: report.sources[0]!.files.read };
    } finally {
      await adapter.close();
    }
  };
  write(head);
  // Gemini CLI is still at work on g1: the request is in the log, its response not yet.
  expect(await responses()).toEqual({ model: [["model.request", null]], read: 1 });
  // Unchanged, it is read again: something was left to come.
  expect(await responses()).toEqual({ model: [["model.request", null]], read: 1 });
  const tokens = { input: 100, output: 10, cached: 40, thoughts: 5, tool: 2, total: 117 };
  write([...head, { ...first, tokens }]);
  const done = await responses();
  expect(done.model).toEqual([
    ["model.request", null],
    ["model.response", 15],
  ]);
  // Settled: the next import finds it unchanged.
  expect((await responses()).read).toBe(0);
});

test("a last message that never gets its tokens has its response written once it is 5 minutes old", async () => {
  await using dir = await tempDir();
  await using home = await tempHome();
  const now = Date.now();
  const path = join(dir.path, "session-2026-05-01T10-00-c0ffee00.jsonl");
  // A response cut off 6 minutes ago, in a session active a minute ago (not idle).
  const records = [
    meta(now - 7 * MINUTE, now - MINUTE),
    user("u1", now - 7 * MINUTE, "run the tests"),
    gemini("g1", now - 6 * MINUTE, [], { content: [{ text: "running" }] }),
  ];
  writeFileSync(path, `${records.map((r) => JSON.stringify(r)).join("\n")}\n`);
  const { adapter } = await importOne(home.path, "gemini", path);
  try {
    const [id] = await sessionsFrom(adapter, path);
    const types: string[] = [];
    for await (const r of adapter.readEvents(id!)) types.push(r.event!.type);
    expect(types.filter((t) => t.startsWith("model."))).toEqual(["model.request", "model.response"]);
  } finally {
    await adapter.close();
  }
});

describe("gemini project path", () => {
  test("regression: a recording outside its project's chats folder gets its own folder as project, not an ancestor", async () => {
    await using dir = await tempDir();
    const chat = "session-2026-03-28T21-32-c4c43609.json";
    const text = readFileSync(join(CORPUS, "gemini", chat), "utf8");
    const place = async (sub: string) => {
      const path = join(dir.path, sub, chat);
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, text);
      await using home = await tempHome();
      const { adapter, report } = await importOne(home.path, "gemini", path);
      const [id] = await sessionsFrom(adapter, path);
      const projectPath = (await adapter.getMeta(id!))!.projectPath;
      await adapter.close();
      return { projectPath, warnings: report.sources[0]!.warnings.map((w) => w.message) };
    };
    // ~/Downloads/<chat>: its own folder stands in (it was /home, two folders up).
    const loose = await place(join("home", "me", "Downloads"));
    expect(loose.projectPath).toBe(join(dir.path, "home", "me", "Downloads"));
    expect(loose.warnings).toEqual([expect.stringContaining("not in its project's chats folder")]);
    // In Gemini's own layout the per-project folder stands in, as before.
    const kept = await place(join("gemini", "tmp", "f528f00f72f2", "chats"));
    expect(kept.projectPath).toBe(join(dir.path, "gemini", "tmp", "f528f00f72f2"));
  });
});
