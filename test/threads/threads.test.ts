/**
 * The thread store over a real sqlite adapter: turns and tool calls derived from messages and the
 * rollout, FTS5 search and the scan fallback returning the same hits, filters, incremental refresh
 * (a session written by another adapter instance shows up; unchanged threads are not re-derived),
 * a corrupt freecode.db rebuilt, goals, and calls' outputs searched (a long one by its head and tail).
 */
import { expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import sqlite from "../../src/storage/adapters/sqlite.ts";
import type { StorageAdapter } from "../../src/storage/contract.ts";
import type { StoredMessage } from "../../src/storage/records.ts";
import {
  rebuildThreads,
  type scanSearch,
  searchThreads,
  setGoal,
  turnItemsView,
} from "../../src/threads/api.ts";
import { OUTPUT_CHARS, outputText } from "../../src/threads/output-text.ts";
import { refreshThreads } from "../../src/threads/refresh.ts";
import { queryTerms, renderSnippet } from "../../src/threads/search-text.ts";
import { openThreadStore, threadDbPath } from "../../src/threads/store.ts";
import { snippet } from "../../src/threads/words.ts";
import { tempHome } from "../_helpers.ts";
import { meta, msg } from "./_records.ts";

const user = (id: string, text: string, ts: number) => msg(id, "user", text, ts);
const assistant = (id: string, ts: number, parts: StoredMessage["parts"]): StoredMessage => ({
  id,
  role: "assistant",
  parts,
  timestamp: ts,
});

async function seed(a: StorageAdapter) {
  await a.createSession(meta("s1", { title: "Fix the flaky parser test" }), [
    user("u1", "the tokenizer crashes on unicode input", 2000),
    assistant("a1", 2100, [
      { type: "text", content: "Let me read the tokenizer." },
      {
        type: "tool",
        tool: { name: "read_file", args: { path: "src/tokenizer.ts" } },
        callId: "c1",
        result: "export function tokenize(s) { return s.split(/quuxsplit/) }",
      },
      {
        type: "tool",
        tool: { name: "bash", args: { command: "bun test tokenizer" } },
        callId: "c2",
        failed: true,
      },
    ]),
    assistant("a2", 2200, [{ type: "text", content: "The tokenizer now handles surrogate pairs." }]),
    user("u2", "also run the linter", 3000),
    assistant("a3", 3100, [{ type: "text", content: "Running it." }]),
  ]);
  await a.appendEvents("s1", [
    { type: "function.output", tool: "read_file", callId: "c1", duration_ms: 12, timestamp: 2110 },
    { type: "function.denied", tool: "bash", callId: "c2", source: "user", timestamp: 2120 },
    // A call the message log no longer holds (compaction erased it): the rollout keeps it.
    { type: "function.call", tool: "grep", args: { pattern: "eslint" }, callId: "c9", timestamp: 3050 },
    { type: "turn.aborted", turnId: "t2", timestamp: 3200 },
  ]);
  await a.createSession(meta("s2", { projectPath: "/work/beta", title: "Deploy notes" }), [
    user("u1", "write deploy notes for the tokenizer release", 5000),
    assistant("a1", 5100, [
      { type: "tool", tool: { name: "write_file", args: { path: "NOTES.md" } }, callId: "w1" },
    ]),
  ]);
}

test("turns, tool calls and outcomes come from messages and the rollout", async () => {
  await using home = await tempHome();
  const a = sqlite({ home: home.path });
  await seed(a);
  const turns = await turnItemsView(a, home.path, "s1");
  expect(turns).toHaveLength(2);
  expect(turns[0]).toMatchObject({
    number: 1,
    prompt: "the tokenizer crashes on unicode input",
    outcome: "answered",
  });
  expect(turns[0]!.response).toContain("surrogate pairs");
  expect(turns[0]!.tools).toEqual([
    { name: "read_file", args: { path: "src/tokenizer.ts" }, durationMs: 12 },
    { name: "bash", args: { command: "bun test tokenizer" }, failed: true, deniedBy: "user" },
  ]);
  expect(turns[1]).toMatchObject({ number: 2, outcome: "interrupted" });
  expect(turns[1]!.tools.map((t) => t.name)).toEqual(["grep"]);
  expect((await turnItemsView(a, home.path, "s1", 1)).map((t) => t.number)).toEqual([2]);
  await expect(turnItemsView(a, home.path, "nope")).rejects.toMatchObject({ code: "not_found" });
  await a.close();
});

test("FTS5 and the scan return the same hits, ranked, with marked snippets", async () => {
  await using home = await tempHome();
  const a = sqlite({ home: home.path });
  await seed(a);
  for (const text of [
    "tokenizer",
    "tokeni",
    "Tokénizer unicode",
    "eslint",
    "deploy notes",
    "read_file",
    "quuxsplit",
  ]) {
    const fts = await searchThreads(a, home.path, { text });
    const scan = await searchThreads(a, home.path, { text }, { engine: "scan" });
    expect(fts.engine).toBe("fts5");
    expect(scan.engine).toBe("scan");
    const key = (r: typeof fts) => r.hits.map((h) => `${h.sessionId}/${h.kind}/${h.turn}/${h.tool ?? ""}`);
    expect(key(scan)).toEqual(key(fts));
    expect(scan.total).toBe(fts.total);
    for (const [f, s] of fts.hits.map((h, i) => [h, scan.hits[i]!] as const))
      expect(s.score).toBeCloseTo(f.score, 4);
  }
  const r = await searchThreads(a, home.path, { text: "tokenizer" });
  expect(r.total).toBe(6); // three messages of s1, one of s2, the read_file and bash arguments
  expect(r.hits.every((h) => renderSnippet(h.snippet, false).includes("[tokenizer"))).toBe(true);
  expect(renderSnippet(r.hits[0]!.snippet, true)).toContain("\x1b[1;33m");
  // A call's output is searched too: a row of its own, named by its tool.
  const out = await searchThreads(a, home.path, { text: "quuxsplit" });
  expect(out.hits.map((h) => [h.kind, h.tool, h.turn])).toEqual([["output", "read_file", 1]]);
  expect(renderSnippet(out.hits[0]!.snippet, false)).toContain("[quuxsplit]");
  await a.close();
});

test("filters: project, time, tool, deleted sessions", async () => {
  await using home = await tempHome();
  const a = sqlite({ home: home.path });
  await seed(a);
  for (const engine of ["fts5", "scan"] as const) {
    const ids = async (q: Parameters<typeof scanSearch>[1]) =>
      (await searchThreads(a, home.path, q, { engine })).hits.map((h) => `${h.sessionId}/${h.kind}`).sort();
    expect(await ids({ text: "tokenizer", projectPath: "/work/beta" })).toEqual(["s2/message"]);
    expect(await ids({ text: "tokenizer", projectPath: "/work" })).toHaveLength(6);
    expect(await ids({ text: "tokenizer", projectPath: "/wor" })).toEqual([]);
    expect(await ids({ text: "tokenizer", since: 4000 })).toEqual(["s2/message"]);
    expect(await ids({ text: "tokenizer", until: 2050 })).toEqual(["s1/message"]);
    expect(await ids({ text: "flaky" })).toEqual(["s1/title"]);
    expect(await ids({ text: "tokenizer", tool: "READ_FILE" })).toEqual(["s1/tool"]);
    // --tool keeps a call's output (the output of read_file), not another tool's.
    expect(await ids({ text: "quuxsplit", tool: "read_file" })).toEqual(["s1/output"]);
    expect(await ids({ text: "quuxsplit", tool: "bash" })).toEqual([]);
  }
  await a.updateMeta("s2", (m) => ({ ...m, status: "deleted" }));
  expect((await searchThreads(a, home.path, { text: "deploy" })).total).toBe(0);
  expect((await searchThreads(a, home.path, { text: "deploy", all: true })).total).toBeGreaterThan(0);
  await expect(searchThreads(a, home.path, { text: "  --- " })).rejects.toMatchObject({ code: "bad_input" });
  await a.close();
});

test("refresh is incremental and sees another process's writes; a corrupt index is rebuilt", async () => {
  await using home = await tempHome();
  const a = sqlite({ home: home.path });
  await seed(a);
  const store = await openThreadStore(home.path);
  expect(store.engine).toBe("sqlite");
  expect(await refreshThreads(a, store)).toMatchObject({ updated: 2, removed: 0 });
  expect(await refreshThreads(a, store)).toMatchObject({ updated: 0 });
  // Another writer (a second adapter instance on the same file) appends to s2 and logs events for s3.
  const other = sqlite({ home: home.path });
  await other.appendMessages("s2", [user("u9", "zebra crossing", 6000)]);
  await other.appendEvents("s3", [{ type: "turn.started", turnId: "t1" }]);
  await other.purgeSession("s1");
  await other.close();
  expect(await refreshThreads(a, store)).toMatchObject({ updated: 2, removed: 1 });
  expect(store.getThread("s3")?.title).toBe("(rollout only) s3");
  store.close();
  expect((await searchThreads(a, home.path, { text: "zebra" })).hits.map((h) => h.sessionId)).toEqual(["s2"]);
  writeFileSync(threadDbPath(home.path), "this is not a database, it was damaged");
  expect((await searchThreads(a, home.path, { text: "zebra" })).total).toBe(1);
  await a.close();
});

test("the JSON thread store serves turns and goals; search then scans", async () => {
  await using home = await tempHome();
  const a = sqlite({ home: home.path });
  await seed(a);
  process.env.FREECODE_THREADS = "json";
  try {
    expect((await openThreadStore(home.path)).engine).toBe("json");
    expect((await turnItemsView(a, home.path, "s2"))[0]?.tools.map((t) => t.name)).toEqual(["write_file"]);
    expect((await searchThreads(a, home.path, { text: "tokenizer" })).engine).toBe("scan");
  } finally {
    delete process.env.FREECODE_THREADS;
  }
  await a.close();
});

test("goals: set text and status, update the status alone, clear", async () => {
  await using home = await tempHome();
  const a = sqlite({ home: home.path });
  await seed(a);
  await expect(setGoal(a, "s1", { status: "completed" })).rejects.toMatchObject({ code: "bad_input" });
  expect((await setGoal(a, "s1", { text: "parser green" })).goal).toEqual({
    text: "parser green",
    status: "active",
  });
  expect((await setGoal(a, "s1", { status: "completed" })).goal).toEqual({
    text: "parser green",
    status: "completed",
  });
  const store = await openThreadStore(home.path);
  await refreshThreads(a, store);
  expect(store.getThread("s1")).toMatchObject({ goal: "parser green", goalStatus: "completed" });
  expect((await setGoal(a, "s1", { clear: true })).goal).toBeUndefined();
  await refreshThreads(a, store);
  expect(store.getThread("s1")?.goal).toBeUndefined();
  store.close();
  await expect(setGoal(a, "nope", { text: "x" })).rejects.toMatchObject({ code: "not_found" });
  expect(queryTerms("Héllo, wörld!")).toEqual(["hello", "world"]);
  await a.close();
});

test("a long output is searchable by its head and tail, not its middle (OUTPUT_CHARS)", async () => {
  await using home = await tempHome();
  const a = sqlite({ home: home.path });
  const filler = "lorem ipsum ".repeat(OUTPUT_CHARS / 8);
  const result = `zqhead ${filler} zqmiddle ${filler} zqtail`;
  await a.createSession(meta("long"), [
    user("u1", "build it", 1000),
    assistant("a1", 1100, [
      { type: "tool", tool: { name: "bash", args: { command: "make" } }, callId: "c1", result },
    ]),
  ]);
  expect(outputText(result).length).toBeLessThan(OUTPUT_CHARS + 8);
  for (const engine of ["fts5", "scan"] as const) {
    const found = async (text: string) => (await searchThreads(a, home.path, { text }, { engine })).total;
    expect([await found("zqhead"), await found("zqtail"), await found("zqmiddle")]).toEqual([1, 1, 0]);
  }
  // The cuts fall between characters: an emoji across either one is left whole or out, never halved.
  for (const pad of [0, 1]) {
    const emoji = `${"a".repeat(OUTPUT_CHARS / 2 - 1 + pad)}${"😀".repeat(OUTPUT_CHARS)}`;
    const cut = outputText(emoji);
    expect(cut.length).toBeLessThanOrEqual(OUTPUT_CHARS + 3);
    expect(cut.isWellFormed()).toBe(true);
  }
  await a.close();
});

test("an output is searched by its text: blocks by their text, objects by key: value lines, no image data", async () => {
  // A structured result (an MCP tool's): one `key: value` per line, nested keys too.
  expect(outputText({ exitCode: 2, stderr: "no such file\nor directory", more: { port: 31337 } })).toBe(
    "exitCode: 2\nstderr: no such file\nor directory\nmore\nport: 31337",
  );
  // JSON a command printed (`cat package.json`): its values with their keys and numbers, escapes read.
  const printed =
    '{"name":"widgetco","devDependencies":{"typescript":"5.0.0"},"port":31337,"msg":"a\\nSecondword"}';
  expect(outputText(printed)).toBe(
    "name: widgetco\ndevDependencies\ntypescript: 5.0.0\nport: 31337\nmsg: a\nSecondword",
  );
  // A rule of 200 `=` is not base64: the output is kept.
  expect(outputText(`${"=".repeat(210)}\nBUILD FAILED zebraword`)).toContain("BUILD FAILED zebraword");
  // Claude Code text blocks, and an image block beside them: the text only.
  const blocks = [
    { type: "text", text: "Found it.\n\nAdditionally, the cache" },
    { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBOR".repeat(100) } },
  ];
  expect(outputText(blocks)).toBe("Found it.\n\nAdditionally, the cache");
  // Codex's shell output: a string that is JSON itself.
  const codex = JSON.stringify({ output: "\r\nCount\r\n-----\r\n27832", metadata: { exit_code: 0 } });
  expect(outputText(codex)).toBe("\r\nCount\r\n-----\r\n27832");
  // Base64 runs and data URLs are data, not text; a string that only looks like JSON stays as it is.
  const base64 = Buffer.from(Array.from({ length: 300 }, (_, i) => (i * 37) % 256)).toString("base64");
  expect(outputText([base64, "data:image/png;base64,AAAA", "ok"])).toBe("ok");
  expect(outputText("{not json}")).toBe("{not json}");
  // Through search, on both engines: line-initial words, coloured words; no row of markers only.
  await using home = await tempHome();
  const a = sqlite({ home: home.path });
  const call = (callId: string, result: unknown): StoredMessage["parts"][number] => ({
    type: "tool",
    tool: { name: "bash", args: { command: "make" } },
    callId,
    result,
  });
  await a.createSession(meta("o"), [
    user("u1", "build it", 1000),
    assistant("a1", 1100, [
      call("c1", blocks),
      call("c2", codex),
      call(
        "c3",
        "\u001b[31mFAILED\u001b[0m tests/test_zq.py \u001b]0;title\u0007done \u001b(B\u001b[mGREENLIGHT \u001b7SAVEDCURSOR\u001b8",
      ),
      call("c4", "\u0002\u0003"),
    ]),
  ]);
  for (const engine of ["fts5", "scan"] as const) {
    const hits = async (text: string) =>
      (await searchThreads(a, home.path, { text }, { engine })).hits.map((h) => h.kind);
    expect(await hits("Additionally")).toEqual(["output"]);
    expect(await hits("Count")).toEqual(["output"]);
    expect(await hits("FAILED")).toEqual(["output"]);
    expect(await hits("done")).toEqual(["output"]);
    expect(await hits("GREENLIGHT SAVEDCURSOR")).toEqual(["output"]);
    for (const none of ["nAdditionally", "type", "iVBOR", "exit_code", "31mFAILED", "title", "BGREENLIGHT"])
      expect([none, await hits(none)]).toEqual([none, []]);
  }
  const rows = (await searchThreads(a, home.path, { text: "bash", limit: 50 })).hits;
  expect(rows.filter((h) => h.kind === "tool")).toHaveLength(4);
  await a.close();
});

test("regression: what a call the rollout alone holds printed is searched, and the call is not pending", async () => {
  await using home = await tempHome();
  const a = sqlite({ home: home.path });
  // A session recorded with the rollout log alone (no messages), and one whose call compaction
  // erased from the messages: each call's output only the rollout holds.
  await a.appendEvents("rolled", [
    { type: "turn.started", turnId: "t1", timestamp: 1000 },
    { type: "function.call", tool: "bash", args: { command: "make" }, callId: "c1", timestamp: 1010 },
    { type: "function.output", tool: "bash", callId: "c1", output: "zqbuilt 3 targets", timestamp: 1020 },
  ]);
  await a.createSession(meta("erased"), [user("u1", "look for it", 2000)]);
  await a.appendEvents("erased", [
    { type: "function.call", tool: "grep", args: { pattern: "x" }, callId: "g1", timestamp: 2010 },
    {
      type: "function.output",
      tool: "grep",
      callId: "g1",
      output: '{"output": "src/zqfound.ts:3", "metadata": {"exit_code": 0}}',
      timestamp: 2020,
    },
  ]);
  for (const engine of ["fts5", "scan"] as const) {
    const hits = async (text: string) =>
      (await searchThreads(a, home.path, { text }, { engine })).hits.map((h) => [
        h.sessionId,
        h.kind,
        h.tool,
      ]);
    expect([engine, await hits("zqbuilt")]).toEqual([engine, [["rolled", "output", "bash"]]]);
    expect([engine, await hits("zqfound")]).toEqual([engine, [["erased", "output", "grep"]]]);
  }
  // Neither output recorded a duration: the calls finished all the same.
  for (const id of ["rolled", "erased"])
    expect((await turnItemsView(a, home.path, id))[0]!.tools.map((t) => t.pending ?? false)).toEqual([false]);
  await a.close();
});

test("regression: arguments are searched by their values, escapes read: a heredoc's second line, an argument named type", async () => {
  await using home = await tempHome();
  const a = sqlite({ home: home.path });
  await a.createSession(meta("args"), [
    user("u1", "write the notes", 1000),
    assistant("a1", 1100, [
      {
        type: "tool",
        tool: {
          name: "bash",
          args: { command: "cat <<EOF > notes.txt\nzebracorn alpha\n\tquokkafish\nEOF" },
        },
        callId: "c1",
      },
      { type: "tool", tool: { name: "create_issue", args: { type: "wombatbug", title: "x" } }, callId: "c2" },
      // An argument object shaped like an image block, and a file content that starts with a key blob.
      { type: "tool", tool: { name: "attach", args: { type: "image", name: "zebrafile" } }, callId: "c3" },
      // A long path is not a blob of base64 (its `/` come every few words).
      {
        type: "tool",
        tool: {
          name: "ls",
          args: { command: `ls -la /src/main/${"Module1/".repeat(25)}Lemurfish2Controller.java` },
        },
        callId: "c5",
      },
      {
        type: "tool",
        tool: { name: "write", args: { content: `${"Ab1".repeat(100)}\nkoalaword follows the blob` } },
        callId: "c4",
      },
    ]),
  ]);
  for (const engine of ["fts5", "scan"] as const) {
    const found = async (text: string) =>
      (await searchThreads(a, home.path, { text }, { engine })).hits.map((h) => `${h.kind}/${h.tool}`);
    expect([engine, await found("zebracorn"), await found("quokkafish"), await found("wombatbug")]).toEqual([
      engine,
      ["tool/bash"],
      ["tool/bash"],
      ["tool/create_issue"],
    ]);
    expect([engine, await found("Lemurfish2Controller")]).toEqual([engine, ["tool/ls"]]);
    expect([engine, await found("zebrafile"), await found("koalaword")]).toEqual([
      engine,
      ["tool/attach"],
      ["tool/write"],
    ]);
    // The escapes were words of their own glued to the next one.
    expect([engine, await found("nzebracorn"), await found("tquokkafish")]).toEqual([engine, [], []]);
  }
  await a.close();
});

test("regression: search --project finds a session recorded with the rollout log alone, by the project its log names", async () => {
  await using home = await tempHome();
  const a = sqlite({ home: home.path });
  await a.appendEvents("r1", [
    { type: "session.started", projectPath: "/srv/app", timestamp: 1000 },
    { type: "turn.started", turnId: "t0", timestamp: 1001 },
    {
      type: "function.call",
      tool: "Bash",
      args: { command: "pytest -k flamingo" },
      callId: "k1",
      timestamp: 1002,
    },
  ]);
  for (const engine of ["fts5", "scan"] as const) {
    const r = await searchThreads(a, home.path, { text: "flamingo", projectPath: "/srv/app" }, { engine });
    expect([engine, r.hits.map((h) => [h.sessionId, h.projectPath])]).toEqual([engine, [["r1", "/srv/app"]]]);
  }
  await a.close();
});

test("regression: a snippet is short whatever the text: a long word or a long run of punctuation is cut (a 2 MB argument was one hit's snippet)", () => {
  const banner = `${"=".repeat(3000)} 1 failed in 2.1s ${"=".repeat(3000)}\n${"-".repeat(3000)}\nFAILED tests/test_x.py`;
  const s = snippet(banner, ["failed"]);
  expect(s.length).toBeLessThan(400);
  expect(renderSnippet(s, false)).toContain("[failed]");
  const word = snippet(`Write ${"x".repeat(2_000_000)}`, ["write"]);
  expect(word.length).toBeLessThan(200);
  expect(renderSnippet(word, false)).toStartWith("[Write] xxx");
  // Cut between characters: an emoji across the cut is left out whole.
  const emoji = snippet(`${"a".repeat(79)}${"😀".repeat(50)} hit`, ["hit"]);
  expect(emoji.isWellFormed()).toBe(true);
});

test("regression: a purged session's words leave the thread store's file, and a full rebuild leaves none of what it replaced (strings found them)", async () => {
  await using home = await tempHome();
  const a = sqlite({ home: home.path });
  const secret = "Hunter2Secret99";
  await a.createSession(meta("leak"), [user("u1", `connect to https://alice:${secret}@db.example`, 1000)]);
  await a.createSession(meta("kept"), [user("u1", "an unrelated session", 1000)]);
  const bytes = () =>
    ["", "-wal"]
      .map((x) => `${threadDbPath(home.path)}${x}`)
      .filter((f) => existsSync(f))
      .map((f) => readFileSync(f).toString("latin1"))
      .join("");
  expect((await searchThreads(a, home.path, { text: secret })).total).toBe(1);
  expect(bytes()).toContain(secret.toLowerCase());
  await a.purgeSession("leak");
  expect((await searchThreads(a, home.path, { text: "unrelated" })).total).toBe(1);
  expect(bytes()).not.toContain(secret.toLowerCase());
  expect(bytes()).not.toContain(secret);
  // Replaced by a masked copy, as a --redact re-import does: gone after a full rebuild.
  await a.createSession(meta("again"), [user("u1", `connect with ${secret}`, 1000)]);
  expect((await searchThreads(a, home.path, { text: secret })).total).toBe(1);
  await a.replaceMessages("again", [user("u1", "connect with ****", 1000)]);
  await rebuildThreads(a, home.path);
  expect(bytes()).not.toContain(secret.toLowerCase());
  await a.close();
});

test('regression: JSON a command printed keeps every key — a `type` key is a value, not a content block\'s tag (`cat package.json` with "type": "module" lost its keys)', () => {
  const pkg = JSON.stringify(
    { name: "quasarapp", type: "module", scripts: { build: "tsc" }, dependencies: { "left-pad": "^1.3.0" } },
    null,
    2,
  );
  const text = outputText(pkg);
  for (const word of ["name: quasarapp", "type: module", "scripts", "dependencies", "left-pad: ^1.3.0"])
    expect([word, text.includes(word)]).toEqual([word, true]);
  // A structured result with a `type` that names no content block keeps it too; real blocks say their text.
  expect(outputText({ type: "module", path: "a.ts" })).toBe("type: module\npath: a.ts");
  expect(outputText([{ type: "text", text: "hello" }])).toBe("hello");
  // Content blocks recorded as JSON text are still blocks: their text, not their tags.
  expect(outputText('[{"type":"text","text":"zebrafish manual"}]')).toBe("zebrafish manual");
});

test('regression: JSON a command printed with a `"type": "image"` or `"type": "text"` object is data, searched with its keys (the image was dropped whole, the text lost its keys)', () => {
  const gallery = JSON.stringify(
    { images: [{ type: "image", caption: "walrusbeach sunset", file: "beach.png" }], name: "gallery" },
    null,
    2,
  );
  const text = outputText(gallery);
  for (const word of ["type: image", "caption: walrusbeach sunset", "file: beach.png", "name: gallery"])
    expect([word, text.includes(word)]).toEqual([word, true]);
  expect(outputText('[{"type":"text","text":"hello","author":"zebrafinch"}]')).toBe(
    "type: text\ntext: hello\nauthor: zebrafinch",
  );
  // Blocks recorded as JSON text are still blocks, an image's bytes left out.
  const blocks = JSON.stringify([
    { type: "text", text: "see the chart", cache_control: { type: "ephemeral" } },
    { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo" } },
  ]);
  expect(outputText(blocks)).toBe("see the chart\ntype: ephemeral");
});
