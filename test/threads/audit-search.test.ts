/**
 * Regressions from the search audit, against real files and real SQLite: the FTS5 engine missing
 * words the scan finds (Korean, voiced kana, full-width, ligatures, emoji-glued words) and the two
 * engines disagreeing on the corpus; `store reindex` exposing a half-built index; a session purged
 * mid-refresh failing the search; every refresh re-reading every rollout log (and re-deriving one
 * with a bad line each time); `projectPath` not normalised; unchecked limits and times; a leading
 * system message making a phantom turn; the JSON fallback refreshing before it scans anyway; the
 * match markers in recorded text, and the rollout-only placeholder title, being searchable.
 */
import { expect, test } from "bun:test";
import { appendFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import { foldMessagesIntoMeta } from "../../src/storage/_meta-fold.ts";
import files from "../../src/storage/adapters/files.ts";
import sqlite from "../../src/storage/adapters/sqlite.ts";
import type { StorageAdapter } from "../../src/storage/contract.ts";
import type { StoredMessage } from "../../src/storage/records.ts";
import { listThreads, searchThreads, turnItemsView } from "../../src/threads/api.ts";
import { refreshThreads } from "../../src/threads/refresh.ts";
import { queryTerms, renderSnippet, type SearchResult } from "../../src/threads/search-text.ts";
import { openThreadStore, type ThreadStore, threadJsonPath } from "../../src/threads/store.ts";
import { CORPUS, parseJson, runCli, tempHome } from "../_helpers.ts";
import { meta, msg } from "./_records.ts";

/** Everything a hit shows but its score, in order (and the scores, to 6 places). */
const shape = (r: SearchResult) => ({
  total: r.total,
  hits: r.hits.map(
    (h) => `${h.sessionId}|${h.kind}|${h.turn}|${h.role ?? h.tool}|${h.timestamp}|${h.snippet}`,
  ),
  scores: r.hits.map((h) => h.score.toFixed(6)),
});

async function bothEngines(a: StorageAdapter, home: string, text: string, extra = {}) {
  const fts = await searchThreads(a, home, { text, limit: 1000, ...extra });
  const scan = await searchThreads(a, home, { text, limit: 1000, ...extra }, { engine: "scan" });
  expect(fts.engine).toBe("fts5");
  expect(scan.engine).toBe("scan");
  expect(shape(fts)).toEqual(shape(scan));
  return fts;
}

test("FTS5 finds what the scan finds: Korean, voiced kana, full-width, ligatures, emoji-glued words (audit 1)", async () => {
  await using home = await tempHome();
  const a = files({ home: home.path });
  const texts = [
    "한국어 문서를 검색",
    "データベースの設計",
    "ＦＵＬＬＷＩＤＴＨ letters",
    "the ﬁnal answer",
    "🧪testing 🤖robots ✅️done",
    "cafe\u0301 au lait, naïve",
  ];
  for (const [i, text] of texts.entries())
    await a.createSession(meta(`s${i}`), [msg("u1", "user", text, 2000 + i)]);
  const cases: [string, string][] = [
    ["한국어", "s0"],
    ["한국", "s0"],
    ["データベース", "s1"],
    ["テータヘース", "s1"],
    ["ＦＵＬＬＷＩＤＴＨ", "s2"],
    ["fullwidth", "s2"],
    ["ﬁnal", "s3"],
    ["final", "s3"],
    ["testing", "s4"],
    ["robots", "s4"],
    ["done", "s4"],
    ["café", "s5"],
    ["naive", "s5"],
  ];
  for (const [text, id] of cases) {
    const r = await bothEngines(a, home.path, text);
    expect([text, r.hits.map((h) => h.sessionId)]).toEqual([text, [id]]);
    expect(r.hits[0]!.snippet).toContain("\u0002");
  }
  expect(renderSnippet((await bothEngines(a, home.path, "testing")).hits[0]!.snippet, false)).toBe(
    "🧪[testing] 🤖robots ✅️done",
  );
  await a.close();
});

test("both engines give the same hits, order, snippets and scores over the corpus (audit 1)", async () => {
  await using home = await tempHome();
  expect(runCli(["import", "auto", CORPUS, "--json"], { home: home.path }).code).toBe(0);
  const a = files({ home: home.path });
  // Common words, rare words, short prefixes and several words at once.
  const queries = [
    "fi",
    "the file",
    "te",
    "error test",
    "pre",
    "viewport",
    "import",
    "json",
    "run",
    "a",
    "x",
  ];
  for (const text of queries) await bothEngines(a, home.path, text);
  await a.close();
}, 60_000);

/** A store that runs `check` after each change it commits (a search on another connection). */
function observed(store: ThreadStore, check: () => void): ThreadStore {
  return new Proxy(store, {
    get(target, prop) {
      const value = Reflect.get(target, prop) as unknown;
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        const result = (value as (...a: unknown[]) => unknown).apply(target, args);
        if (["put", "remove", "clear", "batch"].includes(String(prop))) check();
        return result;
      };
    },
  });
}

test("a full refresh (store reindex) never shows a search a half-built index (audit 3)", async () => {
  await using home = await tempHome();
  const a = sqlite({ home: home.path });
  const n = 450; // more than one chunk of 200
  for (let i = 0; i < n; i++)
    await a.createSession(meta(`s${i}`), [msg("u1", "user", `fix the marmot bug ${i}`, 2000 + i)]);
  const store = await openThreadStore(home.path);
  await refreshThreads(a, store);
  const reader = await openThreadStore(home.path);
  const seen = new Set<number>();
  const terms = queryTerms("marmot");
  const check = () => seen.add(reader.search!({ text: "marmot", limit: 1 }, terms).total);
  await refreshThreads(a, observed(store, check), true);
  expect([...seen]).toEqual([n]);
  reader.close();
  store.close();
  await a.close();
});

test("a session purged between the listing and the read is skipped and dropped (audit 4)", async () => {
  await using home = await tempHome();
  const real = files({ home: home.path });
  for (const id of ["s1", "s2", "s3"])
    await real.createSession(meta(id), [msg("u1", "user", `marmot in ${id}`, 2000)]);
  await real.appendEvents("r1", [{ type: "turn.started", turnId: "t1", timestamp: 2100 }]);
  await real.appendEvents("s2", [{ type: "turn.started", turnId: "t1", timestamp: 2100 }]);
  // Another process purges s2 and the rollout-only r1 just after this one listed them.
  const racing: StorageAdapter = {
    ...real,
    async listSessions(q) {
      const page = await real.listSessions(q);
      await real.purgeSession("s2");
      return page;
    },
    async listEventLogs() {
      const ids = await real.listEventLogs();
      await real.purgeSession("r1");
      return ids;
    },
  };
  for (const engine of ["fts5", "scan"] as const) {
    const r = await searchThreads(racing, home.path, { text: "marmot" }, { engine });
    expect(r.hits.map((h) => h.sessionId).sort()).toEqual(["s1", "s3"]);
  }
  expect((await listThreads(real, home.path)).map((t) => t.id).sort()).toEqual(["s1", "s3"]);
  await real.close();
});

test("an unchanged rollout log is not read again, nor is one with a bad line re-derived (audit 5)", async () => {
  await using home = await tempHome();
  const real = files({ home: home.path });
  await real.createSession(meta("s1"), [msg("u1", "user", "hello", 2000)]);
  expect(await real.eventLogStamp?.("s1")).toBeUndefined();
  await real.appendEvents("s1", [{ type: "turn.started", turnId: "t1", timestamp: 2100 }]);
  const before = await real.eventLogStamp?.("s1");
  await real.appendEvents("s1", [{ type: "turn.started", turnId: "t2", timestamp: 2200 }]);
  expect(await real.eventLogStamp?.("s1")).not.toBe(before);
  let reads = 0;
  const counting: StorageAdapter = {
    ...real,
    readEvents(id, options) {
      reads++;
      return real.readEvents(id, options);
    },
  };
  const store = await openThreadStore(home.path);
  expect(await refreshThreads(counting, store)).toMatchObject({ updated: 1 });
  reads = 0;
  expect(await refreshThreads(counting, store)).toMatchObject({ updated: 0 });
  expect(reads).toBe(0);
  // A torn last line and a bad one: re-derived once, then left alone.
  appendFileSync(join(home.path, "rollout", "sessions", "s1", "events.jsonl"), '{not json\n{"torn":');
  expect(await refreshThreads(counting, store)).toMatchObject({ updated: 1 });
  expect(await refreshThreads(counting, store)).toMatchObject({ updated: 0 });
  store.close();
  await real.close();
});

test("projectPath: trailing separators and Windows paths match that project and below it (audit 6)", async () => {
  await using home = await tempHome();
  const a = sqlite({ home: home.path });
  await a.createSession(meta("p1", { projectPath: "/work/alpha" }), [msg("u1", "user", "marmot", 2000)]);
  await a.createSession(meta("p2", { projectPath: "/work/alpha/sub" }), [msg("u1", "user", "marmot", 2001)]);
  await a.createSession(meta("p3", { projectPath: "/work/alphabet" }), [msg("u1", "user", "marmot", 2002)]);
  await a.createSession(meta("w1", { projectPath: "C:\\Users\\john\\app" }), [
    msg("u1", "user", "marmot", 2003),
  ]);
  await a.createSession(meta("w2", { projectPath: "C:\\Users\\johnny" }), [
    msg("u1", "user", "marmot", 2004),
  ]);
  // Claude Code records `c:\…` as often as `C:\…`: the same drive.
  await a.createSession(meta("w3", { projectPath: "c:\\Users\\john\\lib" }), [
    msg("u1", "user", "marmot", 2005),
  ]);
  const ids = async (projectPath: string) =>
    (await bothEngines(a, home.path, "marmot", { projectPath })).hits.map((h) => h.sessionId).sort();
  expect(await ids("/work/alpha")).toEqual(["p1", "p2"]);
  expect(await ids("/work/alpha/")).toEqual(["p1", "p2"]);
  expect(await ids("/work/alpha//")).toEqual(["p1", "p2"]);
  expect(await ids("/work/alpha/sub/")).toEqual(["p2"]);
  expect(await ids("/")).toEqual(["p1", "p2", "p3"]);
  expect(await ids("C:\\Users\\john")).toEqual(["w1", "w3"]);
  expect(await ids("c:\\Users\\john\\")).toEqual(["w1", "w3"]);
  expect(await ids("C:/Users/john/app")).toEqual(["w1"]);
  expect(await ids("C:\\")).toEqual(["w1", "w2", "w3"]);
  await a.close();
});

test("limits and times are checked: bad_input, and limit 0 counts without hits (audit 9)", async () => {
  await using home = await tempHome();
  const a = sqlite({ home: home.path });
  await a.createSession(meta("s1"), [
    msg("u1", "user", "marmot one", 2000),
    msg("a1", "assistant", "ok", 2001),
    msg("u2", "user", "marmot two", 3000),
  ]);
  for (const engine of ["fts5", "scan"] as const) {
    for (const bad of [
      { limit: 2.5 },
      { limit: -1 },
      { since: Number.NaN },
      { until: Infinity },
      { limit: "3" },
    ])
      await expect(
        searchThreads(a, home.path, { text: "marmot", ...bad } as never, { engine }),
      ).rejects.toMatchObject({
        code: "bad_input",
      });
    const none = await searchThreads(a, home.path, { text: "marmot", limit: 0 }, { engine });
    expect([none.total, none.hits.length]).toEqual([2, 0]);
  }
  expect(await turnItemsView(a, home.path, "s1", 0)).toEqual([]);
  expect((await turnItemsView(a, home.path, "s1", 1)).map((t) => t.number)).toEqual([2]);
  for (const bad of [-1, 1.5, Number.NaN])
    await expect(turnItemsView(a, home.path, "s1", bad)).rejects.toMatchObject({ code: "bad_input" });
  await expect(listThreads(a, home.path, { limit: 2.5 })).rejects.toMatchObject({ code: "bad_input" });
  await a.close();
});

test("a leading system message makes no turn of its own (audit 10)", async () => {
  await using home = await tempHome();
  const a = sqlite({ home: home.path });
  const messages = [
    msg("sys", "system", "you are a careful wombat", 1990),
    msg("u1", "user", "fix the parser", 2000),
    msg("a1", "assistant", "fixed", 2100),
  ];
  // Counted as every writer counts them (session create, append, import).
  await a.createSession(foldMessagesIntoMeta(meta("s1"), messages), messages);
  const m = await a.getMeta("s1");
  const [thread] = await listThreads(a, home.path);
  expect(thread!.turnCount).toBe(m!.turnCount);
  expect(thread!.turnCount).toBe(1);
  const turns = await turnItemsView(a, home.path, "s1");
  expect(turns.map((t) => [t.number, t.prompt, t.outcome, t.response])).toEqual([
    [1, "fix the parser", "answered", "fixed"],
  ]);
  const hit = (await bothEngines(a, home.path, "wombat")).hits[0]!;
  expect([hit.turn, hit.role]).toEqual([1, "system"]);
  await a.close();
});

test("with the JSON thread store, search scans without refreshing it first (audit 11)", async () => {
  await using home = await tempHome();
  const a = sqlite({ home: home.path });
  await a.createSession(meta("s1"), [msg("u1", "user", "marmot", 2000)]);
  process.env.FREECODE_THREADS = "json";
  try {
    const r = await searchThreads(a, home.path, { text: "marmot" });
    expect([r.engine, r.total]).toEqual(["scan", 1]);
    expect(existsSync(threadJsonPath(home.path))).toBe(false);
  } finally {
    delete process.env.FREECODE_THREADS;
  }
  await a.close();
});

test("match markers in recorded text are not highlights; the rollout-only title is not searched (audit 12)", async () => {
  await using home = await tempHome();
  const a = files({ home: home.path });
  await a.createSession(meta("s1"), [msg("u1", "user", "\u0002alpha\u0003 beta", 2000)]);
  await a.appendEvents("r1", [{ type: "turn.started", turnId: "t1", timestamp: 2100 }]);
  const r = await bothEngines(a, home.path, "beta");
  expect(renderSnippet(r.hits[0]!.snippet, false)).toBe("alpha [beta]");
  expect((await bothEngines(a, home.path, "rollout")).total).toBe(0);
  expect((await bothEngines(a, home.path, "r1")).total).toBe(0);
  expect((await listThreads(a, home.path)).map((t) => t.id).sort()).toEqual(["r1", "s1"]);
  await a.close();
});

test("regression: a compacted session's turns are numbered as the session counts them (they started again from 1, and a search hit's turn moved)", async () => {
  await using home = await tempHome();
  const h = { home: home.path };
  const made = runCli(
    ["session", "create", "--prompt", "fix the parser", "--project", home.path, "--json"],
    h,
  );
  const id = JSON.parse(made.stdout).id as string;
  const lines = [1, 2, 3, 4, 5].flatMap((i) => [
    JSON.stringify({ role: "assistant", parts: [{ type: "text", content: `done ${i}` }] }),
    JSON.stringify({ role: "user", parts: [{ type: "text", content: `nextstep${i}` }] }),
  ]);
  expect(runCli(["session", "append", id], { ...h, stdin: `${lines.join("\n")}\n` }).code).toBe(0);
  const turnOf = () => JSON.parse(runCli(["search", "nextstep5", "--json"], h).stdout).hits[0].turn;
  expect(turnOf()).toBe(6);
  expect(runCli(["session", "compact", id, "--keep", "2"], h).code).toBe(0);
  expect(turnOf()).toBe(6);
  const shown = runCli(["session", "show", id, "--turns"], h).stdout;
  expect(shown.split("\n")[0]).toContain("6 turns, the last 2 shown");
  expect([...shown.matchAll(/^#(\d+) /gm)].map((m) => Number(m[1]))).toEqual([5, 6]);
});

test("regression: a rollout-only session purged and recorded again under its id with as few events is searched anew in every store (sqlite, sqljs and json kept the purged log's calls)", async () => {
  for (const store of ["files", "sqlite", "sqljs", "json"]) {
    await using home = await tempHome();
    const h = { home: home.path, env: { FREECODE_STORE: store } };
    const call = (cmd: string) =>
      `${JSON.stringify({ type: "function.call", tool: "bash", callId: "k1", args: { command: cmd } })}\n`;
    expect(runCli(["rollout", "append", "rr"], { ...h, stdin: call("echo oldsecretword") }).code).toBe(0);
    expect(runCli(["search", "oldsecretword"], h).stdout).toContain("oldsecretword");
    expect(runCli(["session", "delete", "rr", "--purge"], h).code).toBe(0);
    expect(runCli(["rollout", "append", "rr"], { ...h, stdin: call("echo newword") }).code).toBe(0);
    expect([store, runCli(["search", "oldsecretword"], h).stdout.trim()]).toEqual([store, "no matches"]);
    expect([store, runCli(["search", "newword"], h).stdout]).toEqual([
      store,
      expect.stringContaining("newword"),
    ]);
  }
}, 60_000);

test("regression: a call the message log holds without its result is searched by what its rollout output printed (it was never found)", async () => {
  await using home = await tempHome();
  const h = { home: home.path };
  expect(runCli(["session", "create", "--prompt", "go", "--id", "s4", "--project", home.path], h).code).toBe(
    0,
  );
  const part = { type: "tool", tool: { name: "bash", args: { command: "ls" } }, callId: "cc1" };
  const msg = `${JSON.stringify({ role: "assistant", parts: [part] })}\n`;
  expect(runCli(["session", "append", "s4"], { ...h, stdin: msg }).code).toBe(0);
  const out = {
    type: "function.output",
    tool: "bash",
    callId: "cc1",
    output: "koalafailure here",
    failed: true,
  };
  expect(runCli(["rollout", "append", "s4"], { ...h, stdin: `${JSON.stringify(out)}\n` }).code).toBe(0);
  const hits = JSON.parse(runCli(["search", "koalafailure", "--json"], h).stdout).hits as { kind: string }[];
  expect(hits.map((x) => x.kind)).toEqual(["output"]);
});

test("regression: the calls a compaction erased go in turns of their own, numbered as the session counts them (they were all filed under the first kept turn)", async () => {
  await using home = await tempHome();
  const h = { home: home.path };
  const now = Date.now();
  expect(
    runCli(["session", "create", "--prompt", "turn one", "--id", "cp", "--project", home.path], h).code,
  ).toBe(0);
  for (const i of [1, 2, 3, 4]) {
    const ts = now + i * 10_000;
    const lines = (xs: object[]) => `${xs.map((x) => JSON.stringify(x)).join("\n")}\n`;
    if (i > 1)
      runCli(["session", "append", "cp"], {
        ...h,
        stdin: lines([{ role: "user", parts: [{ type: "text", content: `prompt ${i}` }], timestamp: ts }]),
      });
    runCli(["rollout", "append", "cp"], {
      ...h,
      stdin: lines([
        { type: "turn.started", turnId: `t${i}`, timestamp: ts + 1 },
        {
          type: "function.call",
          tool: "bash",
          callId: `call${i}`,
          args: { command: `echo word${i}` },
          timestamp: ts + 2,
        },
        {
          type: "function.output",
          tool: "bash",
          callId: `call${i}`,
          output: `out${i}`,
          duration_ms: 5,
          timestamp: ts + 3,
        },
      ]),
    });
    const part = {
      type: "tool",
      tool: { name: "bash", args: { command: `echo word${i}` } },
      callId: `call${i}`,
      result: `out${i}`,
    };
    runCli(["session", "append", "cp"], {
      ...h,
      stdin: lines([
        { role: "assistant", parts: [part, { type: "text", content: `done ${i}` }], timestamp: ts + 4 },
      ]),
    });
  }
  expect(runCli(["session", "compact", "cp", "--keep", "1"], h).code).toBe(0);
  const turnOf = (w: string) => JSON.parse(runCli(["search", w, "--json"], h).stdout).hits[0].turn;
  expect([1, 2, 3, 4].map((i) => turnOf(`word${i}`))).toEqual([1, 2, 3, 4]);
  const shown = runCli(["session", "show", "cp", "--turns"], h).stdout;
  expect([...shown.matchAll(/^#(\d+) /gm)].map((m) => Number(m[1]))).toEqual([1, 2, 3, 4]);
  expect(shown.split("\n")[0]).toContain("4 turns");
});

test("regression: a Greek word's prefix ending in Σ finds it (ς never prefixed σ); a reply of only blanks is no reply; a FREECODE_THREADS that names no engine is bad usage", async () => {
  await using home = await tempHome();
  const h = { home: home.path };
  expect(
    runCli(
      ["session", "create", "--prompt", "το ΣΥΣΤΗΜΑ έπεσε, ΟΔΟΣΗΜΑΝΣΗ", "--id", "gr", "--project", home.path],
      h,
    ).code,
  ).toBe(0);
  for (const q of ["ΣΥΣ", "ΟΔΟΣ", "οδος", "συστημα"])
    expect([q, runCli(["search", q], h).stdout]).toEqual([q, expect.stringContaining("2 of 2 matches")]);
  const blank = `${JSON.stringify({ role: "assistant", parts: [{ type: "text", content: "\n\n" }] })}\n`;
  expect(runCli(["session", "append", "gr"], { ...h, stdin: blank }).code).toBe(0);
  expect(runCli(["session", "show", "gr", "--turns"], h).stdout).toContain("outcome: (no reply)");
  const bad = runCli(["search", "x"], { ...h, env: { FREECODE_THREADS: "JSON" } });
  expect([bad.code, bad.stderr]).toEqual([
    2,
    expect.stringContaining('unknown thread store engine "JSON" in FREECODE_THREADS'),
  ]);
});

test("regression: letters folding leaves whole are found by the Latin letters a reader takes them for (Łódź by lodz, Ørsted by orsted, Straße by strasse), with both engines", async () => {
  await using home = await tempHome();
  const h = { home: home.path };
  const prompt = "meeting in Łódź with Ørsted about Straße names, Þórr and Æsir, ĦAL, İzmir ıI";
  expect(
    runCli(["session", "create", "--prompt", prompt, "--id", "lt", "--project", home.path], h).code,
  ).toBe(0);
  for (const engine of ["sqlite", "json"])
    for (const q of ["lodz", "LODZ", "orsted", "strasse", "thorr", "aesir", "hal", "Łódź", "straße"])
      expect([engine, q, runCli(["search", q], { ...h, env: { FREECODE_THREADS: engine } }).stdout]).toEqual([
        engine,
        q,
        expect.stringMatching(/\b[12] of [12] match/),
      ]);
  expect(runCli(["search", "lodzx"], h).stdout).not.toMatch(/\b[12] of [12] match/);
});

test("regression: a session with no prompt (system and synthetic messages, then the model's work) has its calls searched, in turn 0, which it does not count (they were in no turn, never found)", async () => {
  await using home = await tempHome();
  const a = files({ home: home.path });
  const tool: StoredMessage = {
    id: "a1",
    role: "assistant",
    parts: [
      {
        type: "tool",
        tool: { name: "bash", args: { command: "grep zebrafinch" } },
        callId: "c1",
        result: "lemurcount 3",
      },
      { type: "text", content: "done" },
    ],
    timestamp: 1002,
  };
  await a.createSession(meta("np"), [
    msg("s1", "system", "you are an agent", 1000),
    { ...msg("u1", "user", "Continue from where you left off.", 1001), synthetic: "continue" },
    tool,
  ]);
  await a.close();
  const h = { home: home.path };
  for (const word of ["zebrafinch", "lemurcount"]) {
    const hits = JSON.parse(runCli(["search", word, "--json"], h).stdout).hits as { turn: number }[];
    expect([word, hits.map((x) => x.turn)]).toEqual([word, [0]]);
  }
  const shown = runCli(["session", "show", "np", "--turns", "--json"], h);
  expect(JSON.parse(shown.stdout).meta.turnCount).toBe(0);
});

test("regression: a Chinese or Japanese word inside a sentence is found (written without spaces, the sentence was one word, and only its start matched)", async () => {
  await using home = await tempHome();
  const h = { home: home.path };
  const prompt = "我们的数据库连接失败了，データベースが壊れた";
  expect(
    runCli(["session", "create", "--prompt", prompt, "--id", "cj", "--project", home.path], h).code,
  ).toBe(0);
  for (const q of ["数据库", "连接失败", "数", "データベース", "壊れ"])
    expect([q, runCli(["search", q], h).stdout]).toEqual([q, expect.stringContaining("2 of 2 matches")]);
  expect(runCli(["search", "数据表"], h).stdout.trim()).toBe("no matches");
  // A one-character word ending a run (it starts no pair).
  expect(
    runCli(["session", "create", "--prompt", "我爱我的猫", "--id", "cat", "--project", home.path], h).code,
  ).toBe(0);
  expect(runCli(["search", "猫"], h).stdout).toContain("2 of 2 matches");
});

test("regression: an image's alt text, which session show prints, is searched", async () => {
  await using home = await tempHome();
  const h = { home: home.path };
  expect(
    runCli(["session", "create", "--prompt", "look", "--id", "im", "--project", home.path], h).code,
  ).toBe(0);
  const image = {
    type: "image",
    mediaType: "image/png",
    data: "iVBORw0KGgo=",
    altText: "screenshot of the walrusdialog error",
  };
  const line = `${JSON.stringify({ role: "user", parts: [image, { type: "text", content: "what is wrong" }] })}\n`;
  expect(runCli(["session", "append", "im"], { ...h, stdin: line }).code).toBe(0);
  expect(runCli(["search", "walrusdialog"], h).stdout).toContain("1 of 1 match");
});

test("regression: a compacted Codex session keeps every erased call in its own turn (Codex starts a turn a few ms before its prompt: every call went one turn early)", async () => {
  await using home = await tempHome();
  const h = { home: home.path };
  const file = join(
    CORPUS,
    "codex",
    "rollout-2026-04-19T22-04-58-019da910-1d2d-7883-b552-6e3adf8a4ed9.jsonl",
  );
  expect(runCli(["import", "codex", file, "--finished"], h).code).toBe(0);
  const id = "codex-019da910-1d2d-7883-b552-6e3adf8a4ed9";
  const calls = () =>
    (
      JSON.parse(runCli(["session", "show", id, "--turns", "--json"], h).stdout).turns as {
        number: number;
        tools: { args?: unknown }[];
      }[]
    ).map((t) => [t.number, t.tools.map((c) => JSON.stringify(c.args))]);
  const before = calls();
  expect(runCli(["session", "compact", id, "--keep", "2"], h).code).toBe(0);
  expect(calls()).toEqual(before);
});

test("regression: a compacted session with a turn that has no prompt after its kept ones (a Codex `!` command) keeps each erased call in its own turn", async () => {
  await using home = await tempHome();
  const h = { home: home.path };
  const T = 1700000000000;
  const msg = (role: string, content: string, at: number) =>
    JSON.stringify({ role, parts: [{ type: "text", content }], timestamp: at });
  const messages = [
    msg("user", "first task alpha", T + 10),
    msg("assistant", "done alpha", T + 5000),
    msg("user", "second task beta", T + 100010),
    msg("assistant", "done beta", T + 105000),
    msg("user", "third task gamma", T + 200010),
    msg("assistant", "done gamma", T + 205000),
  ].join("\n");
  expect(
    runCli(["session", "create", "--id", "cx", "--project", "/tmp/cx"], { ...h, stdin: `${messages}\n` })
      .code,
  ).toBe(0);
  const turn = (id: string, at: number, callId: string, word: string) => [
    { type: "turn.started", turnId: id, timestamp: at },
    {
      type: "function.call",
      turnId: id,
      tool: "bash",
      callId,
      args: { command: `echo ${word}` },
      timestamp: at + 1000,
    },
    { type: "function.output", turnId: id, tool: "bash", callId, output: "ok", timestamp: at + 1100 },
  ];
  const events = [
    ...turn("t1", T, "a1", "alphacmd"),
    ...turn("t2", T + 100000, "b1", "betacmd"),
    ...turn("t3", T + 200000, "g1", "gammacmd"),
    ...turn("t4", T + 300000, "d1", "deltacmd"),
  ];
  const stdin = `${events.map((e) => JSON.stringify(e)).join("\n")}\n`;
  expect(runCli(["rollout", "append", "cx"], { ...h, stdin }).code).toBe(0);
  const calls = () =>
    (
      JSON.parse(runCli(["session", "show", "cx", "--turns", "--json"], h).stdout).turns as {
        number: number;
        tools: { args?: { command: string } }[];
      }[]
    ).map((t) => [t.number, t.tools.map((c) => c.args?.command)]);
  const before = calls();
  expect(before.map(([n]) => n)).toEqual([1, 2, 3]);
  expect(runCli(["session", "compact", "cx", "--keep", "1"], h).code).toBe(0);
  expect(calls()).toEqual(before);
  expect(
    JSON.parse(runCli(["search", "betacmd", "--json"], h).stdout).hits.map((x: { turn: number }) => x.turn),
  ).toEqual([2]);
});

test("regression: a purge clears the search index at once, so a log recorded again under the id with the same event ids does not keep the purged text (sqlite, sqljs and json stores)", async () => {
  for (const store of ["sqlite", "json"]) {
    await using home = await tempHome();
    const h = { home: home.path, env: { FREECODE_STORE: store } };
    const log = (secret: string) =>
      `${JSON.stringify({ type: "function.call", id: "E1", tool: "bash", callId: "k1", args: { command: `export TOKEN=${secret}` }, timestamp: 1700000000000 })}\n`;
    expect(runCli(["rollout", "append", "rr"], { ...h, stdin: log("hunter2secret") }).code).toBe(0);
    expect(runCli(["search", "hunter2secret"], h).stdout).toContain("hunter2secret");
    expect(runCli(["session", "delete", "rr", "--purge"], h).code).toBe(0);
    expect(runCli(["rollout", "append", "rr"], { ...h, stdin: log("redacted") }).code).toBe(0);
    expect([store, runCli(["search", "hunter2secret"], h).stdout.trim()]).toEqual([store, "no matches"]);
    expect([store, runCli(["search", "redacted"], h).stdout]).toEqual([
      store,
      expect.stringContaining("redacted"),
    ]);
  }
}, 60_000);

test("regression: the vowel signs of Indic and Thai scripts are letters to search, not accents (दिन found दान, काम found कमरा); a Korean syllable is not a start of another", async () => {
  await using home = await tempHome();
  const h = { home: home.path };
  const prompts = ["मेरा कमरा साफ़ करो", "दान दिया", "กิน ข้าว", "한국어 문서"];
  for (const [i, prompt] of prompts.entries())
    expect(
      runCli(["session", "create", "--prompt", prompt, "--id", `in${i}`, "--project", home.path], h).code,
    ).toBe(0);
  const hits = (q: string, engine: string) =>
    parseJson<{ total: number }>(runCli(["search", q, "--json"], { ...h, env: { FREECODE_THREADS: engine } }))
      .total;
  for (const engine of ["sqlite", "json"]) {
    for (const q of ["काम", "दिन", "กน", "하"]) expect([engine, q, hits(q, engine)]).toEqual([engine, q, 0]);
    for (const q of ["कमरा", "दान", "กิน", "한국"])
      expect([engine, q, hits(q, engine) > 0]).toEqual([engine, q, true]);
  }
});
