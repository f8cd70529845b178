/**
 * `freecode session export` / `session import` on real homes: a real imported Claude Code session
 * (subagents, rollout) goes from a files store to a sqlite store and back unchanged but for its id;
 * every kind of bad document is refused with a one-line error naming the field and leaves nothing
 * behind; an import that fails half way is purged.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { FreecodeError } from "../../src/errors.ts";
import { exportSession, importSessionDocument } from "../../src/session/export.ts";
import { MAX_EVENT_BYTES } from "../../src/storage/_events.ts";
import memoryFactory from "../../src/storage/adapters/memory.ts";
import type { StorageAdapter } from "../../src/storage/contract.ts";
import type { SessionMeta } from "../../src/storage/records.ts";
import { verifyStore } from "../../src/storage/verify.ts";
import { processStartTime } from "../../src/util/lock.ts";
import { CORPUS, parseJson, runCli, tempDir, tempHome } from "../_helpers.ts";

const SOURCE = "claude-ad723d79-d1aa-4c89-9a82-926c1918e7ee";

type Shown = { meta: Record<string, unknown> & { id: string }; messages: unknown[] };

async function importedHome() {
  const home = await tempHome();
  const r = runCli(["import", "claude", join(CORPUS, "claude", "laf-us_idaho-vault")], { home: home.path });
  expect(r.code, r.stderr).toBe(0);
  return home;
}

const show = (home: string, id: string, store = "files") =>
  parseJson<Shown>(runCli(["session", "show", id, "--json", "--store", store], { home }));
const events = (home: string, id: string, store = "files") =>
  runCli(["rollout", "cat", id, "--store", store], { home })
    .stdout.trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Record<string, unknown>);
/** A session of one message in `store` (idle, unless `meta` says otherwise). */
function oneMessage(store: StorageAdapter, id: string, meta: Partial<SessionMeta> = {}): Promise<void> {
  const now = Date.now();
  return store.createSession(
    {
      id,
      title: "t",
      projectPath: "/p",
      status: "idle",
      createdAt: now,
      updatedAt: now,
      turnCount: 0,
      messageCount: 1,
      ...meta,
    },
    [{ id: "m1", role: "user", parts: [{ type: "text", content: "hi" }], timestamp: now }],
  );
}

const withoutStamp = ({ seq: _s, aggregateID: _a, ...e }: Record<string, unknown>) => e;

describe("session export / import", () => {
  test("a real session round-trips between homes and adapters: messages, meta, context cache, rollout", async () => {
    await using src = await importedHome();
    await using dst = await tempHome();
    await using dir = await tempDir();
    // A context cache, which only the library writes.
    const store = (await import("../../src/storage/adapters/files.ts")).default({
      home: src.path,
      fsync: "never",
    });
    await store.putContextCache(SOURCE, { files: ["notes.md"], turns: 3 });
    await store.close();

    const file = join(dir.path, "out", "session.json");
    const out = runCli(["session", "export", SOURCE, "--rollout", "--out", file, "--json"], {
      home: src.path,
    });
    expect(out.code, out.stderr).toBe(0);
    const summary = JSON.parse(out.stdout);
    const original = show(src.path, SOURCE);
    expect(summary).toMatchObject({ id: SOURCE, file, messages: original.messages.length });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readdirSync(join(dir.path, "out"))).toEqual(["session.json"]);

    const imp = runCli(["session", "import", file, "--store", "sqlite", "--json"], { home: dst.path });
    expect(imp.code, imp.stderr).toBe(0);
    const id = JSON.parse(imp.stdout).id as string;
    expect(id).toStartWith("ses_");
    const copy = show(dst.path, id, "sqlite");
    expect(copy.messages).toEqual(original.messages);
    const { id: _a, copiedFrom, ...meta } = copy.meta;
    const { id: _b, ...originalMeta } = original.meta;
    expect(meta).toEqual(originalMeta);
    expect(copiedFrom).toEqual({ id: SOURCE, exportedAt: expect.any(Number) });
    const before = events(src.path, SOURCE);
    const after = events(dst.path, id, "sqlite");
    expect(before.length).toBe(summary.events);
    expect(after.map(withoutStamp)).toEqual(before.map(withoutStamp));
    expect(after.map((e) => e.seq)).toEqual(before.map((_, i) => i + 1));
    expect(new Set(after.map((e) => e.aggregateID))).toEqual(new Set([id]));

    // Back again, through stdin and under a chosen id: the same document but for the ids.
    const again = runCli(["session", "export", id, "--rollout", "--store", "sqlite"], { home: dst.path });
    const back = runCli(["session", "import", "-", "--id", "round-trip"], {
      home: src.path,
      stdin: again.stdout,
    });
    expect(back.code, back.stderr).toBe(0);
    expect(show(src.path, "round-trip").messages).toEqual(original.messages);
    const cache = (await import("../../src/storage/adapters/files.ts")).default({
      home: src.path,
      fsync: "never",
    });
    expect(await cache.getContextCache("round-trip")).toEqual({ files: ["notes.md"], turns: 3 });
    await cache.close();
    // The id is taken now: refused, nothing changed.
    const taken = runCli(["session", "import", file, "--id", "round-trip"], { home: src.path });
    expect(taken.code).toBe(4);
    expect(taken.stderr).toContain("session round-trip already exists");
  }, 60_000);

  test("bad documents: one line naming the file and field, exit 2, nothing written", async () => {
    await using src = await importedHome();
    await using dst = await tempHome();
    await using dir = await tempDir();
    const doc = JSON.parse(runCli(["session", "export", SOURCE, "--rollout"], { home: src.path }).stdout);
    // Regression: `--out /dev/stdout` is the document alone (a summary after it made it no JSON).
    const viaOut = runCli(["session", "export", SOURCE, "--rollout", "--out", "/dev/stdout"], {
      home: src.path,
    });
    expect(JSON.parse(viaOut.stdout).meta).toEqual(doc.meta);
    const cases: [string, unknown, string][] = [
      ["not a document", [1, 2], "not a freecode session export: the document must be a JSON object"],
      ["another format", { ...doc, format: "other" }, 'not a freecode session export (format "other"'],
      [
        "a newer version",
        { ...doc, version: 2 },
        "session export version 2 is newer than this freecode reads (1): upgrade freecode (field version)",
      ],
      [
        "a bad message",
        { ...doc, messages: [doc.messages[0], { ...doc.messages[1], role: "robot" }] },
        "(field messages[1].role)",
      ],
      [
        "a duplicate message id",
        { ...doc, messages: [doc.messages[0], doc.messages[0]] },
        "(field messages[1].id)",
      ],
      ["a bad meta", { ...doc, meta: { ...doc.meta, createdAt: "yesterday" } }, "(field meta.createdAt)"],
      [
        "an empty project path",
        { ...doc, meta: { ...doc.meta, projectPath: "" } },
        "project path must not be empty (field meta.projectPath)",
      ],
      [
        "Infinity in a tool's args",
        {
          ...doc,
          messages: [
            doc.messages[0],
            {
              ...doc.messages[1],
              parts: [{ type: "tool", tool: { name: "t", args: { n: "__INF__" } } }],
            },
          ],
        },
        "(field messages[1].parts.0.tool.args.n)",
      ],
      [
        "a time past a date's range",
        { ...doc, meta: { ...doc.meta, createdAt: 9e15 } },
        "(field meta.createdAt)",
      ],
      [
        "a bad event",
        { ...doc, rollout: [doc.rollout[0], { ...doc.rollout[1], timestamp: "x" }] },
        "(field rollout[1].timestamp)",
      ],
      [
        "a text part with no words",
        { ...doc, messages: [doc.messages[0], { ...doc.messages[1], parts: [{ type: "text" }] }] },
        'a text part\'s words go in "content" (field messages[1].parts[0].content)',
      ],
      [
        "a negative token count",
        { ...doc, messages: [doc.messages[0], { ...doc.messages[1], usage: { inputTokens: -5 } }] },
        "a token count must be a whole number ≥ 0 (got -5) (field messages[1].usage.inputTokens)",
      ],
      ["a tag with a comma", { ...doc, meta: { ...doc.meta, tags: ["ok", "a,b"] } }, "(field meta.tags[1])"],
      [
        "a tag with a bell",
        { ...doc, meta: { ...doc.meta, tags: ["a\u0007"] } },
        "control character (field meta.tags[0])",
      ],
      [
        "events out of order",
        { ...doc, rollout: [doc.rollout[1], doc.rollout[0]] },
        "events out of order: seq 1 after 2 (field rollout[1].seq)",
      ],
    ];
    for (const [what, body, message] of cases) {
      const file = join(dir.path, `${what.replaceAll(" ", "-")}.json`);
      writeFileSync(file, JSON.stringify(body).replace('"__INF__"', "1e999")); // JSON.parse reads Infinity
      const r = runCli(["session", "import", file], { home: dst.path });
      expect([what, r.code]).toEqual([what, 2]);
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
      expect(r.stderr).toContain(`${file}: `);
      expect(r.stderr).toContain(message);
    }
    writeFileSync(join(dir.path, "torn.json"), JSON.stringify(doc).slice(0, 500));
    const torn = runCli(["session", "import", join(dir.path, "torn.json")], { home: dst.path });
    expect(torn.code).toBe(2);
    expect(torn.stderr).toContain("torn.json: not JSON");
    expect(runCli(["session", "import", join(dir.path, "missing.json")], { home: dst.path }).code).toBe(3);
    expect(
      parseJson<{ items: unknown[] }>(runCli(["session", "list", "--all", "--json"], { home: dst.path }))
        .items,
    ).toEqual([]);
    const logs = join(dst.path, "rollout", "sessions");
    expect(existsSync(logs) ? readdirSync(logs) : []).toEqual([]);
  }, 60_000);

  test("export refuses what it cannot carry whole: an unknown id, an unreadable log line", async () => {
    await using src = await importedHome();
    expect(runCli(["session", "export", "nope"], { home: src.path }).code).toBe(3);
    const log = join(src.path, "rollout", "sessions", SOURCE, "events.jsonl");
    const lines = readFileSync(log, "utf8").split("\n");
    lines[4] = "{not json";
    writeFileSync(log, lines.join("\n"));
    const r = runCli(["session", "export", SOURCE, "--rollout"], { home: src.path });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`${log}:5: session ${SOURCE} has 1 unreadable rollout line(s)`);
    expect(r.stdout).toBe("");
    // Without the rollout, the session itself still exports.
    expect(runCli(["session", "export", SOURCE], { home: src.path }).code).toBe(0);
  }, 60_000);

  test("regression: a session whose message log was lost is refused at export, naming why (it exported a document no import takes, exit 0), and migrate points at store verify", async () => {
    await using home = await tempHome();
    await using out = await tempDir();
    const h = { home: home.path };
    expect(
      runCli(["session", "create", "--id", "c1", "--project", home.path, "--prompt", "start"], h).code,
    ).toBe(0);
    const [log] = [...new Bun.Glob("sessions/*/c1/messages.jsonl").scanSync(home.path)];
    writeFileSync(join(home.path, log!), "");
    const file = join(out.path, "c1.json");
    const r = runCli(["session", "export", "c1", "--out", file], h);
    expect([r.code, r.stderr.trim(), existsSync(file)]).toEqual([
      1,
      expect.stringContaining(
        "session c1 holds no message (its log was lost: its meta counts 1; `freecode store verify` reports it)",
      ),
      false,
    ]);
    const m = runCli(["store", "migrate", "--to", "json", "--to-home", join(out.path, "copy")], h);
    expect([m.code, m.stderr]).toEqual([
      1,
      expect.stringContaining("`freecode store verify` on the source names what is wrong there"),
    ]);
    // Once `store verify --repair` has recounted it, the error says what can be done.
    expect(runCli(["store", "verify", "--repair"], h).code).toBe(0);
    const after = runCli(["session", "export", "c1", "--out", file], h);
    expect([after.code, after.stderr]).toEqual([
      1,
      expect.stringContaining("`freecode session delete c1 --purge` removes it"),
    ]);
  });

  test("regression: an event whose stored line is just under the limit exports and imports again, under a new id of its length; a longer id the store refuses names it", async () => {
    await using home = await tempHome();
    const store = memoryFactory({ home: home.path });
    await oneMessage(store, "src");
    // A call whose line is 60 bytes under the limit (the import's check counted the session id and
    // seq it holds, then added room for them again, and refused it).
    const probe = await store.appendEvents("probe", [
      { type: "function.call", tool: "Write", callId: "c1", args: { s: "" } },
    ]);
    const base = Buffer.byteLength(JSON.stringify(probe[0]));
    const pad = MAX_EVENT_BYTES - 60 - base;
    const [call] = await store.appendEvents("src", [
      { type: "function.call", tool: "Write", callId: "c1", args: { s: "y".repeat(pad) } },
    ]);
    expect(Buffer.byteLength(JSON.stringify(call))).toBe(
      MAX_EVENT_BYTES - 60 - "probe".length + "src".length,
    );
    const doc = await exportSession(store, "src", { rollout: true });
    const copy = await importSessionDocument(store, doc);
    expect((await exportSession(store, copy.id, { rollout: true })).rollout?.length).toBe(1);
    expect((await importSessionDocument(store, doc, { id: "s2" })).id).toBe("s2");
    // Under an id 100 characters long, its line would be too long: refused, naming the event.
    const e = await importSessionDocument(store, doc, { id: "z".repeat(100), file: "doc.json" }).catch(
      (x) => x,
    );
    expect([e.code, e.source]).toEqual(["bad_input", { file: "doc.json", field: "rollout[0]" }]);
    expect(await store.getMeta("z".repeat(100))).toBeUndefined();
    await store.close();
  });

  test("regression: a document whose project path is not absolute imports, with a warning that --project will not find it (it imported unsaid, and no --project listed it)", async () => {
    await using home = await tempHome();
    const h = { home: home.path };
    expect(
      runCli(["session", "create", "--prompt", "wombat task", "--id", "r1", "--project", "/tmp/p"], h).code,
    ).toBe(0);
    const doc = JSON.parse(runCli(["session", "export", "r1"], h).stdout);
    doc.meta.projectPath = "relative/path";
    const r = runCli(["session", "import", "-", "--id", "r2"], { ...h, stdin: JSON.stringify(doc) });
    expect([r.code, r.stderr]).toEqual([
      0,
      expect.stringContaining(
        'its project path "relative/path" is not absolute: `--project` will not find the session',
      ),
    ]);
    expect(runCli(["session", "list", "--all"], h).stdout).toContain("r2");
  });

  test("a running session arrives idle; an import that fails half way leaves nothing", async () => {
    await using home = await tempHome();
    const store = memoryFactory({ home: home.path });
    await oneMessage(store, "live", {
      status: "running",
      owner: { pid: 1, start: null, host: "elsewhere" },
      turnCount: 1,
    });
    await store.appendEvents("live", [{ type: "turn.started", turnId: "t1" }]);
    const doc = await exportSession(store, "live", { rollout: true });
    const meta = await importSessionDocument(store, doc, { id: "copy" });
    expect(meta.status).toBe("idle");
    expect(meta.owner).toBeUndefined();
    // A store whose event append fails: the session it just created is purged.
    const failing = Object.assign(Object.create(Object.getPrototypeOf(store)), store, {
      appendEvents: async () => {
        throw new FreecodeError("internal", "disk full");
      },
    });
    await expect(importSessionDocument(failing, doc, { id: "half" })).rejects.toThrow("disk full");
    expect(await store.getMeta("half")).toBeUndefined();
    // A whole import carries no mark.
    expect((await store.getMeta("copy"))?.copiedFrom).toEqual({ id: "live", exportedAt: doc.exportedAt });
    await store.close();
  });

  test("regression: an id holding a rollout log with no session is taken, whether the document carries a log or not (without one, the new session took over the recorded events)", async () => {
    await using home = await tempHome();
    const store = memoryFactory({ home: home.path });
    await oneMessage(store, "other", {});
    await store.appendEvents("recorded", [{ type: "turn.started", turnId: "t1" }]);
    for (const rollout of [false, true]) {
      const doc = await exportSession(store, "other", { rollout });
      await expect(importSessionDocument(store, doc, { id: "recorded" })).rejects.toThrow(
        "a rollout log for recorded already exists",
      );
    }
    expect(await store.getMeta("recorded")).toBeUndefined();
    await store.close();
  });

  test("an import whose process was killed half way is marked, named by verify, and replaced by a retry", async () => {
    await using home = await tempHome();
    const store = memoryFactory({ home: home.path });
    await oneMessage(store, "src");
    await store.appendEvents(
      "src",
      Array.from({ length: 2500 }, (_, i) => ({ type: "turn.started", turnId: `t${i}` })),
    );
    const doc = await exportSession(store, "src", { rollout: true });
    // The process dies after its first batch of events: nothing purges what it made.
    let batches = 0;
    const dying = Object.assign(Object.create(Object.getPrototypeOf(store)), store, {
      appendEvents: async (id: string, drafts: never[]) => {
        if (++batches > 1) throw new Error("killed");
        return store.appendEvents(id, drafts);
      },
      purgeSession: async () => false,
    });
    await expect(importSessionDocument(dying, doc, { id: "half" })).rejects.toThrow("killed");
    expect((await store.getMeta("half"))?.copiedFrom?.incomplete).toBe(true);
    // The copy names the process making it. While that process lives and is at it (here another,
    // still running), it is left to finish: a retry is refused and verify does not name it.
    const busy = Bun.spawn(["sleep", "30"]);
    const makeBy = (pid: number) =>
      store.updateMeta("half", (m) => ({
        ...m,
        copiedFrom: { ...m.copiedFrom!, by: { pid, start: processStartTime(pid), host: hostname() } },
      }));
    await makeBy(busy.pid);
    await expect(importSessionDocument(store, doc, { id: "half" })).rejects.toThrow(
      `session half is being imported by process ${busy.pid}`,
    );
    expect((await verifyStore(store, home.path)).ok).toBe(true);
    // It dies: its mark names a process that is gone.
    busy.kill();
    await busy.exited;
    const report = await verifyStore(store, home.path);
    expect(report.problems.map((p) => [p.kind, p.sessionId])).toEqual([["incomplete_import", "half"]]);
    expect(report.ok).toBe(false);
    // Imported again under its id, it is made again whole (it was refused as existing).
    const again = await importSessionDocument(store, doc, { id: "half" });
    expect(again.copiedFrom).toEqual({ id: "src", exportedAt: doc.exportedAt });
    let events = 0;
    for await (const r of store.readEvents("half")) if (r.event) events++;
    expect(events).toBe(2500);
    expect((await verifyStore(store, home.path)).ok).toBe(true);
    // A whole session under that id is still refused.
    await expect(importSessionDocument(store, doc, { id: "half" })).rejects.toThrow("already exists");
    // A copy this very process left (an import that failed in a server, its clean-up failing too)
    // is cut off, not at work: named by verify, replaced by a retry.
    batches = 0;
    await expect(importSessionDocument(dying, doc, { id: "mine" })).rejects.toThrow("killed");
    expect((await store.getMeta("mine"))?.copiedFrom?.by?.pid).toBe(process.pid);
    expect((await verifyStore(store, home.path)).problems.map((p) => p.kind)).toEqual(["incomplete_import"]);
    expect((await importSessionDocument(store, doc, { id: "mine" })).copiedFrom?.incomplete).toBeUndefined();
    // Two imports under one id side by side in this process: one makes it, the other is refused.
    const both = await Promise.allSettled([
      importSessionDocument(store, doc, { id: "twice" }),
      importSessionDocument(store, doc, { id: "twice" }),
    ]);
    expect(both.map((r) => r.status).sort()).toEqual(["fulfilled", "rejected"]);
    let twice = 0;
    for await (const r of store.readEvents("twice")) if (r.event) twice++;
    expect(twice).toBe(2500);
    await store.close();
  });
});

test("regression: session import puts right what the commands put right — a text part's words given as text, a title over lines, tags given twice or with blanks, a remembered status on an idle session", async () => {
  await using src = await tempHome();
  await using dst = await tempHome();
  await using dir = await tempDir();
  expect(
    runCli(["session", "create", "--id", "s1", "--project", src.path, "--prompt", "hi"], { home: src.path })
      .code,
  ).toBe(0);
  const doc = JSON.parse(runCli(["session", "export", "s1"], { home: src.path }).stdout);
  doc.messages[0].parts = [{ type: "text", text: "words as text" }];
  // A title's other control characters and its length are kept: `rename` keeps the first, an
  // agent's own title may be long (refusing them refused sessions freecode had made).
  const long = "y".repeat(800);
  doc.meta = {
    ...doc.meta,
    title: `two\nlines \u001b[31mred ${long}`,
    tags: [" a ", "a", "b"],
    previousStatus: "deleted",
  };
  const file = join(dir.path, "doc.json");
  writeFileSync(file, JSON.stringify(doc));
  expect(runCli(["session", "import", file, "--id", "copy"], { home: dst.path }).code).toBe(0);
  const shown = parseJson<{ meta: Record<string, unknown>; messages: { parts: unknown[] }[] }>(
    runCli(["session", "show", "copy", "--json"], { home: dst.path }),
  );
  expect(shown.messages[0]!.parts).toEqual([{ type: "text", content: "words as text" }]);
  expect([shown.meta.title, shown.meta.tags, shown.meta.previousStatus]).toEqual([
    `two lines \u001b[31mred ${long}`,
    ["a", "b"],
    undefined,
  ]);
});

test("regression: a session whose log an older version wrote with a -1 count exports and imports as it is (the import refused what the export made)", async () => {
  await using src = await tempHome();
  await using dst = await tempHome();
  await using dir = await tempDir();
  expect(
    runCli(["session", "create", "--id", "s1", "--project", src.path, "--prompt", "hi"], { home: src.path })
      .code,
  ).toBe(0);
  const lines = [
    '{"type":"turn.started","turnId":"t1"}',
    '{"type":"model.request","turnId":"t1","provider":"p","model":"m"}',
    '{"type":"model.response","turnId":"t1","provider":"p","model":"m","inputTokens":10,"outputTokens":5}',
  ];
  expect(runCli(["rollout", "append", "s1"], { home: src.path, stdin: `${lines.join("\n")}\n` }).code).toBe(
    0,
  );
  const log = join(src.path, "rollout", "sessions", "s1", "events.jsonl");
  writeFileSync(log, readFileSync(log, "utf8").replace('"inputTokens":10', '"inputTokens":-1'));
  const doc = join(dir.path, "doc.json");
  expect(runCli(["session", "export", "s1", "--rollout", "--out", doc], { home: src.path }).code).toBe(0);
  const imported = runCli(["session", "import", doc, "--id", "copy"], { home: dst.path });
  expect([imported.code, imported.stderr]).toEqual([0, expect.anything()]);
  const events = readFileSync(join(dst.path, "rollout", "sessions", "copy", "events.jsonl"), "utf8");
  expect(events).toContain('"inputTokens":-1');
});
