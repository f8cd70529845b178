/**
 * Idempotence and incremental import on the files adapter (real files): importing twice changes
 * nothing; a transcript that grew imports only the new part; a torn last line waits; a malformed
 * line is reported with file and line while the rest imports; credential files are never read.
 */
import { describe, expect, test } from "bun:test";
import {
  appendFileSync,
  copyFileSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { isCredentialFile } from "../../src/import/discover.ts";
import { importSources } from "../../src/import/import.ts";
import { openStore } from "../../src/storage/select.ts";
import { CORPUS, tempDir, tempHome } from "../_helpers.ts";
import { tallyRollouts } from "./_corpus.ts";

const SRC = join(CORPUS, "claude", "drmaciver_claude-reliability", "coverage-test-fix.transcript.jsonl");
const ID = "claude-c64cc478-3430-40fe-8e9c-4ee9986e9754";

async function run(home: string, paths: string[], extra: { final?: boolean; redact?: boolean } = {}) {
  const { adapter } = await openStore("files", { home, fsync: "never" });
  try {
    const report = await importSources({ agent: "claude", paths, adapter, home, fsync: false, ...extra });
    const meta = await adapter.getMeta(ID);
    const tally = meta ? await tallyRollouts(adapter, [ID]) : undefined;
    const events: string[] = [];
    for await (const r of adapter.readEvents(ID)) if (r.event) events.push(r.event.id);
    const messages = (await adapter.readMessages(ID)).messages;
    return { report, meta, tally, events, messages, s: report.sources[0]! };
  } finally {
    await adapter.close();
  }
}

describe("incremental import", () => {
  test("re-importing unchanged files changes nothing", async () => {
    await using home = await tempHome();
    const first = await run(home.path, [SRC]);
    expect(first.s.sessions.created).toBe(1);
    const state = join(home.path, "state", "imports.json");
    const before = statSync(state);
    const second = await run(home.path, [SRC]);
    expect(second.s.files.unchanged).toBe(1);
    expect(second.s.sessions).toEqual({ created: 0, updated: 0, unchanged: 1 });
    expect(second.events).toEqual(first.events);
    expect(second.meta).toEqual(first.meta);
    // Nothing new: the import state is not rewritten either (a watch pass every second would).
    const after = statSync(state);
    expect([after.ino, after.mtimeMs]).toEqual([before.ino, before.mtimeMs]);
  });

  test("a lost import state re-reads but writes no duplicate", async () => {
    await using home = await tempHome();
    const first = await run(home.path, [SRC]);
    writeFileSync(join(home.path, "state", "imports.json"), "{ not json");
    const again = await run(home.path, [SRC]);
    expect(again.s.files.read).toBe(1);
    expect(again.events).toEqual(first.events);
    expect(again.messages).toEqual(first.messages);
  });

  test("a grown transcript imports only the new part, with the same result as a one-shot import", async () => {
    await using home = await tempHome();
    await using dir = await tempDir();
    const live = join(dir.path, "live.jsonl");
    const lines = readFileSync(SRC, "utf8").split("\n").filter(Boolean);
    const cut = 20;
    // Half the session, then a torn line (the agent is mid-write).
    writeFileSync(live, `${lines.slice(0, cut).join("\n")}\n${lines[cut]!.slice(0, 40)}`);
    const part1 = await run(home.path, [live], { final: false });
    expect(part1.s.warnings).toEqual([]);
    const state = JSON.parse(readFileSync(join(home.path, "state", "imports.json"), "utf8"));
    const offset = state.files[live].offset;
    expect(offset).toBe(Buffer.byteLength(`${lines.slice(0, cut).join("\n")}\n`));
    // The rest arrives.
    writeFileSync(live, `${lines.join("\n")}\n`);
    const part2 = await run(home.path, [live]);
    expect(part2.s.sessions.updated).toBe(1);
    expect(part2.s.entries.imported).toBeLessThan(lines.length - cut + 1);

    await using home2 = await tempHome();
    const whole = await run(home2.path, [live]);
    expect(part2.tally).toEqual(whole.tally);
    expect(part2.events.sort()).toEqual(whole.events.sort());
    expect(part2.messages.map((m) => m.id)).toEqual(whole.messages.map((m) => m.id));
    expect(part2.meta?.tokens).toEqual(whole.meta?.tokens);
  });

  test("a transcript's parser state is a file of its own, read when it grows; lost or stale, the file is read again", async () => {
    await using home = await tempHome();
    await using dir = await tempDir();
    const live = join(dir.path, "live.jsonl");
    const lines = readFileSync(SRC, "utf8").split("\n").filter(Boolean);
    const upTo = (n: number) => writeFileSync(live, `${lines.slice(0, n).join("\n")}\n`);
    const stateFile = join(home.path, "state", "imports.json");
    const parsers = join(home.path, "state", "parsers");
    upTo(20);
    await run(home.path, [live], { final: false });
    // imports.json names where it stopped; the parser (its replay memory above all) is apart.
    const state = JSON.parse(readFileSync(stateFile, "utf8"));
    expect(state.files[live].parser).toBeUndefined();
    expect(state.files[live].parserAt).toBe(state.files[live].offset);
    const [name] = readdirSync(parsers);
    const saved = JSON.parse(readFileSync(join(parsers, name!), "utf8"));
    expect([saved.path, saved.offset, typeof saved.parser]).toEqual([
      live,
      state.files[live].offset,
      "object",
    ]);
    // It grows: read from where it stopped, with that parser.
    upTo(30);
    const grown = await run(home.path, [live], { final: false });
    expect(grown.s.warnings).toEqual([]);
    expect(grown.s.entries.imported).toBeLessThan(11);
    // The parser file is lost (or another pass's: its offset is not the state's): read from the start.
    rmSync(join(parsers, name!));
    upTo(40);
    const lost = await run(home.path, [live], { final: false });
    expect(lost.s.entries.imported).toBeGreaterThan(30);
    expect(lost.s.warnings.map((w) => w.message)).toEqual([
      expect.stringContaining("read again from the start"),
    ]);
    const stale = JSON.parse(readFileSync(join(parsers, name!), "utf8"));
    writeFileSync(join(parsers, name!), JSON.stringify({ ...stale, offset: stale.offset + 1 }));
    upTo(lines.length);
    const last = await run(home.path, [live]);
    expect(last.s.entries.imported).toBeGreaterThan(lines.length - 5);
    // Nothing twice: the store is what one import of the whole file gives.
    await using home2 = await tempHome();
    const whole = await run(home2.path, [live]);
    expect(last.tally).toEqual(whole.tally);
    expect(last.events.sort()).toEqual(whole.events.sort());
    expect(last.messages).toEqual(whole.messages);
    // The file gone from its folder: its state is forgotten, its parser file with it.
    rmSync(live);
    await run(home.path, [dir.path]);
    expect(readdirSync(parsers)).toEqual([]);
  });

  test("a state from before the parsers were kept apart goes on where it stopped, and is moved apart", async () => {
    await using home = await tempHome();
    await using dir = await tempDir();
    const live = join(dir.path, "live.jsonl");
    const lines = readFileSync(SRC, "utf8").split("\n").filter(Boolean);
    writeFileSync(live, `${lines.slice(0, 20).join("\n")}\n`);
    await run(home.path, [live], { final: false });
    // Written the old way: the parser inside imports.json, no file of its own.
    const stateFile = join(home.path, "state", "imports.json");
    const parsers = join(home.path, "state", "parsers");
    const state = JSON.parse(readFileSync(stateFile, "utf8"));
    const [name] = readdirSync(parsers);
    const { parserAt: _, ...old } = state.files[live];
    old.parser = JSON.parse(readFileSync(join(parsers, name!), "utf8")).parser;
    writeFileSync(stateFile, JSON.stringify({ ...state, files: { [live]: old } }));
    rmSync(parsers, { recursive: true });
    writeFileSync(live, `${lines.join("\n")}\n`);
    const grown = await run(home.path, [live]);
    expect(grown.s.entries.imported).toBeLessThan(lines.length - 15);
    expect(JSON.parse(readFileSync(stateFile, "utf8")).files[live].parser).toBeUndefined();
    expect(readdirSync(parsers)).toHaveLength(1);
    await using home2 = await tempHome();
    expect(grown.events.sort()).toEqual((await run(home2.path, [live])).events.sort());
  });

  test("a session deleted for good comes back whole on the next import; a soft-deleted one stays deleted", async () => {
    await using home = await tempHome();
    await using dir = await tempDir();
    const live = join(dir.path, "live.jsonl");
    const lines = readFileSync(SRC, "utf8").split("\n").filter(Boolean);
    writeFileSync(live, `${lines.slice(0, 20).join("\n")}\n`);
    const first = await run(home.path, [live]);
    const purge = async () => {
      const { adapter } = await openStore("files", { home: home.path, fsync: "never" });
      try {
        expect(await adapter.purgeSession(ID)).toBe(true);
      } finally {
        await adapter.close();
      }
    };
    // Unchanged file: read again from the start, the session made again as it was.
    await purge();
    const back = await run(home.path, [live]);
    expect(back.s.files.read).toBe(1);
    expect(back.s.sessions.created).toBe(1);
    expect(back.events).toEqual(first.events);
    expect(back.messages).toEqual(first.messages);
    // Grown file: the whole session, not only what was added since.
    await purge();
    writeFileSync(live, `${lines.join("\n")}\n`);
    const grown = await run(home.path, [live]);
    await using home2 = await tempHome();
    const whole = await run(home2.path, [live]);
    expect(grown.events).toEqual(whole.events);
    expect(grown.messages).toEqual(whole.messages);
    expect(grown.meta?.tokens).toEqual(whole.meta?.tokens);
    // A soft delete is the user's choice, kept: the next import leaves it alone.
    const { adapter } = await openStore("files", { home: home.path, fsync: "never" });
    await adapter.updateMeta(ID, (m) => ({ ...m, status: "deleted" }));
    await adapter.close();
    const after = await run(home.path, [live]);
    expect(after.s.files.unchanged).toBe(1);
    expect(after.meta?.status).toBe("deleted");
  });

  test("a transcript that shrank is said to be rewritten, like one whose start changed", async () => {
    await using home = await tempHome();
    await using dir = await tempDir();
    const file = join(dir.path, "t.jsonl");
    const lines = readFileSync(SRC, "utf8").split("\n").filter(Boolean);
    writeFileSync(file, `${lines.join("\n")}\n`);
    await run(home.path, [file]);
    writeFileSync(file, `${lines.slice(0, 10).join("\n")}\n`);
    const shrunk = await run(home.path, [file]);
    expect(shrunk.s.warnings.map((w) => w.message)).toEqual([
      "transcript was rewritten: read again from the start",
    ]);
  });

  test("an older, shorter copy of a transcript read after the full one takes nothing back", async () => {
    await using home = await tempHome();
    await using dir = await tempDir();
    const lines = readFileSync(SRC, "utf8").split("\n").filter(Boolean);
    mkdirSync(join(dir.path, "backup"));
    const short = join(dir.path, "backup", "copy.jsonl");
    // Cut right after an assistant line whose tool call is answered only later in the full file.
    const cut = lines.findIndex(
      (l, i) => i > 5 && l.includes('"tool_use"') && lines[i + 1]?.includes('"tool_result"'),
    );
    writeFileSync(short, `${lines.slice(0, cut + 1).join("\n")}\n`);
    const full = await run(home.path, [SRC]);
    expect(full.messages.some((m) => m.parts.some((p) => p.type === "tool" && p.result === undefined))).toBe(
      false,
    );
    const after = await run(home.path, [short]);
    expect(after.messages).toEqual(full.messages);
    expect(after.tally).toEqual(full.tally);
    expect(after.meta?.tokens).toEqual(full.meta?.tokens);
    // The other way round the full copy still completes what the short one left open.
    await using home2 = await tempHome();
    await run(home2.path, [short]);
    const grown = await run(home2.path, [SRC]);
    expect(grown.messages).toEqual(full.messages);
  });

  test("a shorter copy read with --redact takes nothing back either; the same file with --redact still masks", async () => {
    await using home = await tempHome();
    await using dir = await tempDir();
    const secret = "Authorization: Bearer sk1234567890abcdefghijklmnop";
    const lines = readFileSync(SRC, "utf8")
      .split("\n")
      .filter(Boolean)
      // In the prompt and in the arguments of every call, the cut one included.
      .map((l) =>
        l
          .replace("multiply_numbers", `multiply_numbers (${secret})`)
          .replaceAll('"input":{', `"input":{"note":"${secret}",`),
      );
    const fullFile = join(dir.path, "full.jsonl");
    writeFileSync(fullFile, `${lines.join("\n")}\n`);
    mkdirSync(join(dir.path, "backup"));
    const short = join(dir.path, "backup", "copy.jsonl");
    const cut = lines.findIndex(
      (l, i) => i > 5 && l.includes('"tool_use"') && lines[i + 1]?.includes('"tool_result"'),
    );
    writeFileSync(short, `${lines.slice(0, cut + 1).join("\n")}\n`);
    const full = await run(home.path, [fullFile]);
    const after = await run(home.path, [short], { redact: true });
    const shape = (ms: typeof full.messages) => ms.map((m) => m.parts.map((p) => p.result !== undefined));
    expect(shape(after.messages)).toEqual(shape(full.messages));
    expect(after.meta?.tokens).toEqual(full.meta?.tokens);
    // The same file again with --redact: read from the start and masked.
    const masked = await run(home.path, [fullFile], { redact: true });
    expect(JSON.stringify(masked.messages)).not.toContain("sk1234567890abcdefghijklmnop");
    expect(shape(masked.messages)).toEqual(shape(full.messages));
  });

  test("a malformed line is reported with file and line; the rest imports", async () => {
    await using home = await tempHome();
    await using dir = await tempDir();
    const bad = join(dir.path, "bad.jsonl");
    const lines = readFileSync(SRC, "utf8").split("\n").filter(Boolean);
    lines.splice(
      5,
      0,
      "{this is not json",
      '"a string"',
      '{"type":"brand-new-entry","uuid":"x","sessionId":"s"}',
    );
    writeFileSync(bad, `${lines.join("\n")}\n`);
    const r = await run(home.path, [bad]);
    expect(r.s.warnings.map((w) => [w.file, w.line])).toEqual([
      [bad, 6],
      [bad, 7],
    ]);
    expect(r.s.entries.skipped["(malformed line)"]).toBe(2);
    expect(r.s.entries.skipped["brand-new-entry"]).toBe(1);
    const clean = await run((await tempHome()).path, [SRC]);
    expect(r.tally).toEqual(clean.tally);
  });

  test("credential files are never read, even when named", async () => {
    await using home = await tempHome();
    await using dir = await tempDir();
    mkdirSync(join(dir.path, "projects", "p"), { recursive: true });
    copyFileSync(SRC, join(dir.path, "projects", "p", "s.jsonl"));
    for (const name of [
      ".credentials.json",
      "auth.json",
      "oauth_creds.json",
      "mcp-auth.json",
      "my-secrets.json",
      "tokens.json",
    ]) {
      // Written unreadable: opening one would throw EACCES and surface as a warning.
      writeFileSync(join(dir.path, name), '{"sessionId":"x","projectHash":"y"}', { mode: 0o000 });
    }
    const r = await run(home.path, [dir.path]);
    expect(r.s.files.found).toBe(1);
    expect(r.s.warnings).toEqual([]);
    const named = await run(home.path, [join(dir.path, "auth.json")]);
    expect(named.s.warnings[0]?.message).toBe("credential file: not read");
  });

  test("credential names are told apart from transcripts of any agent", () => {
    const credentials = [
      "mcp-auth.json",
      "auth.json",
      "oauth_creds.json",
      "tokens.json",
      "client_secret.json",
      "a.credentials.json",
      ".env",
    ];
    const transcripts = [
      "author.json",
      "tokenizer.json",
      "secret-project.jsonl",
      "session-2026-03-28T21-32-c4c43609.json",
      "ses_1278abc.json",
      "rollout-2026-04-19T22-10-31-019da915.jsonl",
      "message.jsonl",
    ];
    expect(credentials.filter((n) => !isCredentialFile(`/x/${n}`))).toEqual([]);
    expect(transcripts.filter((n) => isCredentialFile(`/x/${n}`))).toEqual([]);
  });

  test("--redact masks keys in text and tool arguments", async () => {
    await using home = await tempHome();
    await using dir = await tempDir();
    const f = join(dir.path, "secret.jsonl");
    const key = `sk-ant-api03-${"A".repeat(40)}`;
    const base = { sessionId: "s1", cwd: "/p", timestamp: "2026-01-01T00:00:00.000Z" };
    appendFileSync(
      f,
      `${JSON.stringify({ ...base, type: "user", uuid: "u1", message: { role: "user", content: `use ${key}` } })}\n`,
    );
    appendFileSync(
      f,
      `${JSON.stringify({ ...base, type: "assistant", uuid: "a1", message: { id: "m1", model: "claude", content: [{ type: "tool_use", id: "t1", name: "Bash", input: { command: `curl -H 'Authorization: Bearer ${"x".repeat(30)}'` } }], usage: { input_tokens: 1, output_tokens: 1 } } })}\n`,
    );
    const { adapter } = await openStore("files", { home: home.path, fsync: "never" });
    await importSources({
      agent: "claude",
      paths: [f],
      adapter,
      home: home.path,
      fsync: false,
      redact: true,
    });
    const { messages } = await adapter.readMessages("claude-s1");
    const events: unknown[] = [];
    for await (const r of adapter.readEvents("claude-s1")) events.push(r.event);
    await adapter.close();
    const all = JSON.stringify({ messages, events });
    expect(all).not.toContain(key);
    expect(all).not.toContain("x".repeat(30));
    expect(all).toContain("[REDACTED]");
    // Imported again without --redact (a CI step that left the flag off): it says what that does.
    const again = await openStore("files", { home: home.path, fsync: "never" });
    const plain = await importSources({
      agent: "claude",
      paths: [f],
      adapter: again.adapter,
      home: home.path,
    });
    await again.adapter.close();
    expect(plain.sources[0]!.warnings.map((w) => w.message)).toEqual([
      expect.stringContaining("imported before with --redact: read again without it"),
    ]);
  });
});

describe("a transcript whose times go backwards", () => {
  test("gives its session the same createdAt read in two goes as read at once", async () => {
    // A clock set back mid-session: a later line is timed before the first one.
    const lines = readFileSync(SRC, "utf8").split("\n").filter(Boolean);
    const at = lines.length - 3;
    const earliest = Math.min(...lines.map((l) => Date.parse(JSON.parse(l).timestamp ?? "")).filter(Boolean));
    const back = new Date(earliest - 3_600_000).toISOString();
    lines[at] = JSON.stringify({ ...JSON.parse(lines[at]!), timestamp: back });
    await using dir = await tempDir();
    const file = join(dir.path, "t.jsonl");
    writeFileSync(file, `${lines.slice(0, at).join("\n")}\n`);
    await using grown = await tempHome();
    await run(grown.path, [file]);
    writeFileSync(file, `${lines.join("\n")}\n`);
    const twice = await run(grown.path, [file]);
    await using home = await tempHome();
    const once = await run(home.path, [file]);
    expect(once.meta?.createdAt).toBe(Date.parse(back));
    expect(twice.meta?.createdAt).toBe(once.meta?.createdAt);
  });
});

describe("a session deleted while it is imported", () => {
  test("is left deleted, not made again from the rest of the transcript; the next import makes it whole", async () => {
    await using home = await tempHome();
    await using dir = await tempDir();
    const file = join(dir.path, "t.jsonl");
    copyFileSync(SRC, file);
    const whole = await run(home.path, [SRC]);
    await using home2 = await tempHome();
    const { adapter } = await openStore("files", { home: home2.path, fsync: "never" });
    // The store, with a `session delete --purge` landing between two parts of the import (as
    // another process's purge or gc did): after the first part's messages are written.
    let appends = 0;
    const racing = new Proxy(adapter, {
      get(target, key, receiver) {
        const value = Reflect.get(target, key, receiver);
        if (key !== "appendMessages" && key !== "createSession") return value;
        return async (...args: unknown[]) => {
          const out = await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
          if (++appends === 1) await target.purgeSession(ID);
          return out;
        };
      },
    });
    try {
      const report = await importSources({
        agent: "claude",
        paths: [file],
        adapter: racing,
        home: home2.path,
        fsync: false,
        writeEveryBytes: 20_000,
      });
      expect(report.sources[0]!.warnings.map((w) => w.message)).toEqual([
        `session ${ID} was deleted while it was imported: the rest was not written (the next import makes it again, whole)`,
      ]);
      expect(await adapter.getMeta(ID)).toBeUndefined();
    } finally {
      await adapter.close();
    }
    // The file did not change: the next import still finds the session missing and reads it all.
    const again = await run(home2.path, [file]);
    expect(again.s.sessions.created).toBe(1);
    expect(again.messages).toEqual(whole.messages);
    expect(again.tally).toEqual(whole.tally);
    expect(again.meta?.tokens).toEqual(whole.meta?.tokens);
  });
});
