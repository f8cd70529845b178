/**
 * A file the import state knows, unchanged since, is read again the way it was read the first time.
 * A Gemini recording in `.jsonl` is a whole document; taken by its name for a transcript, it went to
 * the Codex parser and nothing was imported: a `--redact` re-read left its secrets unmasked, and a
 * purged session was never made again (review).
 */
import { expect, test } from "bun:test";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CORPUS, parseJson, runCli, tempDir, tempHome } from "../_helpers.ts";

test("an unchanged Gemini .jsonl recording is read again as a document: --redact and a purge", async () => {
  await using home = await tempHome();
  await using dir = await tempDir();
  const doc = JSON.parse(
    readFileSync(join(CORPUS, "gemini", "session-2026-03-28T21-32-c4c43609.json"), "utf8"),
  );
  const { messages, ...head } = doc;
  messages[0].content[0].text = "use key sk-proj-AbCdEf1234567890AbCdEf1234567890XyZ please";
  const chats = join(dir.path, "abc123", "chats");
  mkdirSync(chats, { recursive: true });
  const file = join(chats, "session-2026-03-28T21-32-c4c43609.jsonl");
  writeFileSync(file, [head, ...messages].map((m) => `${JSON.stringify(m)}\n`).join(""));
  const cli = (...args: string[]) => runCli(args, { home: home.path });
  const run = (...args: string[]) =>
    parseJson<{ sources: { sessions: { created: number; updated: number } }[] }>(cli(...args, "--json"));

  expect(run("import", "gemini", dir.path).sources[0]!.sessions.created).toBe(1);
  const id = parseJson<{ items: { id: string }[] }>(cli("session", "list", "--json")).items[0]!.id;
  expect(cli("session", "show", id).stdout).toContain("sk-proj-AbCdEf");

  expect(run("import", "gemini", dir.path, "--redact").sources[0]!.sessions.updated).toBe(1);
  const masked = cli("session", "show", id).stdout;
  expect(masked).not.toContain("sk-proj-AbCdEf");
  expect(masked).toContain("[REDACTED]");

  expect(cli("session", "delete", id, "--purge").code).toBe(0);
  expect(run("import", "gemini", dir.path, "--redact").sources[0]!.sessions.created).toBe(1);
  expect(cli("session", "show", id).code).toBe(0);
});

test("a session two files of one source feed is counted once (OpenCode rows beside an export)", async () => {
  await using home = await tempHome();
  const root = join(CORPUS, "opencode");
  const run = () =>
    parseJson<{ sources: { sessions: { created: number; updated: number; unchanged: number } }[] }>(
      runCli(["import", "opencode", root, "--json"], { home: home.path }),
    ).sources[0]!.sessions;
  const first = run();
  const stored = parseJson<{ total: number }>(
    runCli(["session", "list", "--all", "--json"], { home: home.path }),
  ).total;
  expect(first.created + first.updated + first.unchanged).toBe(stored);
  expect(run()).toEqual({ created: 0, updated: 0, unchanged: stored });
});

test("a transcript gone from a folder is forgotten by the next import of it; its session stays", async () => {
  await using home = await tempHome();
  await using dir = await tempDir();
  const src = join(CORPUS, "claude", "drmaciver_claude-reliability", "coverage-test-fix.transcript.jsonl");
  const keep = join(dir.path, "keep.jsonl");
  const gone = join(dir.path, "gone.jsonl");
  const text = readFileSync(src, "utf8");
  writeFileSync(keep, text);
  // The same session under another id, so the two files make two sessions.
  writeFileSync(
    gone,
    text.replaceAll("c64cc478-3430-40fe-8e9c-4ee9986e9754", "c64cc478-3430-40fe-8e9c-000000000001"),
  );
  const cli = (...args: string[]) => runCli(args, { home: home.path });
  const state = () =>
    Object.keys(JSON.parse(readFileSync(join(home.path, "state", "imports.json"), "utf8")).files);
  expect(cli("import", "claude", dir.path).code).toBe(0);
  expect(state().sort()).toEqual([gone, keep]);
  rmSync(gone);
  // Another folder's import leaves this folder's entries alone.
  await using other = await tempDir();
  expect(cli("import", "claude", other.path).code).toBe(0);
  expect(state().sort()).toEqual([gone, keep]);
  expect(cli("import", "claude", dir.path).code).toBe(0);
  expect(state()).toEqual([keep]);
  expect(parseJson<{ items: unknown[] }>(cli("session", "list", "--json")).items).toHaveLength(2);
});
