/**
 * Audit findings on discovery and import state, one regression test each:
 * - one unreadable folder or file aborted the whole import (and stopped `--watch`);
 * - a folder symlink back up (`x/up -> ..`) imported the same transcript until ELOOP;
 * - Gemini's location override is `GEMINI_CLI_HOME` (Gemini CLI's own variable);
 * - `--redact` was not part of the import state: a plain import then `--redact` masked nothing;
 * - a watch kept its cache of stored event ids across passes: a plain import run meanwhile made
 *   it write those events again.
 * Tests run as root, so permission errors cannot be made with chmod: a symlink to /proc/self/mem
 * (a regular file whose read at offset 0 fails with EIO) stands for an unreadable transcript, and
 * a failing folder listing is injected through `discover`'s file-system parameter.
 */
import { describe, expect, test } from "bun:test";
import {
  appendFileSync,
  copyFileSync,
  mkdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { defaultRoots, detectFile, discover, isCredentialFile } from "../../src/import/discover.ts";
import { importSources } from "../../src/import/import.ts";
import type { ImportWarning } from "../../src/import/types.ts";
import { watchSources } from "../../src/import/watch.ts";
import type { Known } from "../../src/import/write.ts";
import { openStore } from "../../src/storage/select.ts";
import { CORPUS, runCli, tempDir, tempHome } from "../_helpers.ts";

const SRC = join(CORPUS, "claude", "drmaciver_claude-reliability", "coverage-test-fix.transcript.jsonl");
const ID = "claude-c64cc478-3430-40fe-8e9c-4ee9986e9754";

async function importOnce(home: string, paths: string[], extra: { redact?: boolean; final?: boolean } = {}) {
  const { adapter } = await openStore("files", { home, fsync: "never" });
  try {
    return await importSources({ agent: "claude", paths, adapter, home, fsync: false, ...extra });
  } finally {
    await adapter.close();
  }
}

/** `import claude <path> --watch` into the files store at `home`, a pass a millisecond, until `onPass` stops it. */
async function watchFor(
  home: string,
  path: string,
  onPass: (stop: AbortController, report: Awaited<ReturnType<typeof importSources>>, pass: number) => void,
): Promise<number> {
  const { adapter } = await openStore("files", { home, fsync: "never" });
  const stop = new AbortController();
  try {
    return await watchSources({
      agent: "claude",
      paths: [path],
      adapter,
      home,
      fsync: false,
      intervalMs: 1,
      signal: stop.signal,
      onPass: (report, pass) => onPass(stop, report, pass),
    });
  } finally {
    await adapter.close();
  }
}

async function storedEventIds(home: string, id: string): Promise<string[]> {
  const { adapter } = await openStore("files", { home, fsync: "never" });
  try {
    const ids: string[] = [];
    for await (const r of adapter.readEvents(id)) if (r.event) ids.push(r.event.id);
    return ids;
  } finally {
    await adapter.close();
  }
}

const importsJson = (home: string) =>
  JSON.parse(readFileSync(join(home, "state", "imports.json"), "utf8")) as { files: Record<string, unknown> };

describe("an unreadable entry is a warning, not the end of the import", () => {
  test("a folder that cannot be listed: the others are still found", async () => {
    await using dir = await tempDir();
    mkdirSync(join(dir.path, "a-locked"));
    mkdirSync(join(dir.path, "b-open"));
    copyFileSync(SRC, join(dir.path, "b-open", "t.jsonl"));
    const warnings: ImportWarning[] = [];
    const denied = Object.assign(new Error("EACCES: permission denied, scandir 'x'"), { code: "EACCES" });
    const found = discover(dir.path, "claude", warnings, {
      readdir: (path) => {
        if (path.endsWith("a-locked")) throw denied;
        return require("node:fs").readdirSync(path) as string[];
      },
      detect: detectFile,
    });
    expect(found.map((c) => c.path)).toEqual([join(dir.path, "b-open", "t.jsonl")]);
    expect(warnings).toEqual([
      { file: join(dir.path, "a-locked"), message: "cannot list: permission denied" },
    ]);
  });

  test("a transcript that cannot be read: the rest is imported", async () => {
    await using home = await tempHome();
    await using dir = await tempDir();
    copyFileSync(SRC, join(dir.path, "good.jsonl"));
    symlinkSync("/proc/self/mem", join(dir.path, "bad.jsonl"));
    const report = await importOnce(home.path, [dir.path]);
    const s = report.sources[0]!;
    expect(s.sessions.created).toBe(1);
    expect(s.warnings).toContainEqual({
      file: join(dir.path, "bad.jsonl"),
      message: "cannot read: i/o error",
    });
  });

  test("the CLI warns and exits 0 (was: `[error] cannot read …`, exit 74, nothing imported)", async () => {
    await using home = await tempHome();
    await using dir = await tempDir();
    copyFileSync(SRC, join(dir.path, "good.jsonl"));
    symlinkSync("/proc/self/mem", join(dir.path, "bad.jsonl"));
    const r = runCli(["import", "claude", dir.path, "--json"], { home: home.path });
    expect(r.code).toBe(0);
    expect((JSON.parse(r.stdout) as { totals: { created: number } }).totals.created).toBe(1);
    expect(r.stderr).toContain("bad.jsonl");
  });

  test("a file that vanishes between the listing and the sniff is a warning", async () => {
    await using dir = await tempDir();
    copyFileSync(SRC, join(dir.path, "a.jsonl"));
    copyFileSync(SRC, join(dir.path, "b.jsonl"));
    const warnings: ImportWarning[] = [];
    const gone = Object.assign(new Error("ENOENT: no such file or directory, open 'a.jsonl'"), {
      code: "ENOENT",
    });
    const found = discover(dir.path, "auto", warnings, {
      readdir: (path) => require("node:fs").readdirSync(path) as string[],
      detect: (path) => {
        if (path.endsWith("a.jsonl")) throw gone;
        return detectFile(path);
      },
    });
    expect(found.map((c) => c.path)).toEqual([join(dir.path, "b.jsonl")]);
    expect(warnings[0]?.message).toBe("cannot read: no such file or directory");
  });

  test("--watch keeps running past an unreadable transcript", async () => {
    await using home = await tempHome();
    await using dir = await tempDir();
    copyFileSync(SRC, join(dir.path, "good.jsonl"));
    symlinkSync("/proc/self/mem", join(dir.path, "bad.jsonl"));
    const created: number[] = [];
    const passes = await watchFor(home.path, dir.path, (stop, report, pass) => {
      created.push(report.sources[0]!.sessions.created);
      if (pass === 2) stop.abort();
    });
    expect(passes).toBe(2);
    expect(created).toEqual([1, 0]);
  });
});

test("regression: a store that cannot be written (a full disk) stops the import with that error, not a warning per transcript (exit 0, or exit 2 calling a readable file unreadable)", async () => {
  await using home = await tempHome();
  await using dir = await tempDir();
  copyFileSync(SRC, join(dir.path, "t.jsonl"));
  const { adapter } = await openStore("files", { home: home.path, fsync: "never" });
  // The disk fills: every write the store makes fails as the runtime reports it (no path).
  const full = Object.assign(new Error("ENOSPC: no space left on device, write"), {
    code: "ENOSPC",
    syscall: "write",
  });
  const filled = {
    ...adapter,
    createSession: () => Promise.reject(full),
    appendMessages: () => Promise.reject(full),
  };
  try {
    for (const paths of [[dir.path], [join(dir.path, "t.jsonl")]])
      await expect(
        importSources({ agent: "claude", paths, adapter: filled, home: home.path, fsync: false }),
      ).rejects.toBe(full);
  } finally {
    await adapter.close();
  }
});

test("regression: a watch leaves no listener on its stop signal per pass (one each kept its wait alive: the watcher grew by the pass)", async () => {
  const { getEventListeners } = await import("node:events");
  await using home = await tempHome();
  await using dir = await tempDir();
  const listening: number[] = [];
  await watchFor(home.path, dir.path, (stop, _, pass) => {
    listening.push(getEventListeners(stop.signal, "abort").length);
    if (pass === 20) stop.abort();
  });
  expect(Math.max(...listening)).toBeLessThanOrEqual(1);
});

test("a folder symlink back up is walked once (was: the same transcript imported until ELOOP)", async () => {
  await using home = await tempHome();
  await using dir = await tempDir();
  copyFileSync(SRC, join(dir.path, "t.jsonl"));
  mkdirSync(join(dir.path, "x"));
  symlinkSync("..", join(dir.path, "x", "up"));
  // A second name for the same file is one transcript too.
  symlinkSync(join(dir.path, "t.jsonl"), join(dir.path, "x", "same.jsonl"));
  expect(discover(dir.path, "claude", []).length).toBe(1);
  const report = await importOnce(home.path, [dir.path]);
  expect(report.sources[0]!.files.found).toBe(1);
  expect(Object.keys(importsJson(home.path).files)).toEqual([join(dir.path, "t.jsonl")]);
});

test("Gemini's location moves with GEMINI_CLI_HOME (Gemini CLI's variable), not GEMINI_DIR", () => {
  expect(defaultRoots("gemini", { HOME: "/h", GEMINI_CLI_HOME: "/g" })).toEqual(["/g/.gemini/tmp"]);
  expect(defaultRoots("gemini", { HOME: "/h", GEMINI_DIR: "/d" })).toEqual(["/h/.gemini/tmp"]);
});

test("--redact after a plain import reads the file again, masks messages and says what stays", async () => {
  await using home = await tempHome();
  await using dir = await tempDir();
  const f = join(dir.path, "secret.jsonl");
  const key = `sk-ant-api03-${"A".repeat(40)}`;
  const base = { sessionId: "s1", cwd: "/p", timestamp: "2026-01-01T00:00:00.000Z" };
  const user = { ...base, type: "user", uuid: "u1", message: { role: "user", content: `use ${key}` } };
  writeFileSync(f, `${JSON.stringify(user)}\n`);
  await importOnce(home.path, [f]);
  const again = (await importOnce(home.path, [f], { redact: true })).sources[0]!;
  expect(again.files).toEqual({ found: 1, read: 1, unchanged: 0, open: 0, skipped: 0, failed: 0 });
  expect(again.warnings.map((w) => w.message).join("\n")).toContain("freecode session delete <id> --purge");
  const { adapter } = await openStore("files", { home: home.path, fsync: "never" });
  const { messages } = await adapter.readMessages("claude-s1");
  await adapter.close();
  expect(JSON.stringify(messages)).not.toContain(key);
  // Remembered: the same flag again changes nothing.
  const third = (await importOnce(home.path, [f], { redact: true })).sources[0]!;
  expect(third.files.unchanged).toBe(1);
  expect(third.warnings).toEqual([]);
});

test("a watch pass after a separate plain import writes no duplicate event ids", async () => {
  await using home = await tempHome();
  await using dir = await tempDir();
  const live = join(dir.path, "live.jsonl");
  const lines = readFileSync(SRC, "utf8").split("\n").filter(Boolean);
  writeFileSync(live, `${lines.slice(0, 20).join("\n")}\n`);
  const cache = new Map<string, Known>();
  const watchPass = async () => {
    const { adapter } = await openStore("files", { home: home.path, fsync: "never" });
    try {
      await importSources({
        agent: "claude",
        paths: [live],
        adapter,
        home: home.path,
        fsync: false,
        final: false,
        cache,
      });
    } finally {
      await adapter.close();
    }
  };
  await watchPass();
  appendFileSync(live, `${lines.slice(20, 40).join("\n")}\n`);
  // Meanwhile a plain import reads the same transcript under another name (its own state entry).
  const alias = join(dir.path, "alias.jsonl");
  symlinkSync(live, alias);
  await importOnce(home.path, [alias]);
  await watchPass();
  const ids = await storedEventIds(home.path, ID);
  expect(ids.length).toBeGreaterThan(0);
  expect(ids.length - new Set(ids).size).toBe(0);
});

describe("a file the import state knows, unchanged, is not sniffed again", () => {
  test("known by size and mtime: no read of its head; changed: read again", async () => {
    await using dir = await tempDir();
    const path = join(dir.path, "t.jsonl");
    copyFileSync(SRC, path);
    const sniffed: string[] = [];
    const fs = {
      readdir: (p: string) => require("node:fs").readdirSync(p) as string[],
      detect: (p: string) => {
        sniffed.push(p);
        return detectFile(p);
      },
    };
    const first = discover(dir.path, "claude", [], fs);
    expect(sniffed).toEqual([path]);
    const st = statSync(path);
    const known = (p: string, size: number, mtimeMs: number) =>
      p === path && size === st.size && mtimeMs === st.mtimeMs ? first[0] : undefined;
    sniffed.length = 0;
    expect(discover(dir.path, "claude", [], fs, known)).toEqual(first);
    expect(sniffed).toEqual([]);
    appendFileSync(path, "\n");
    discover(dir.path, "claude", [], fs, known);
    expect(sniffed).toEqual([path]);
  });
});

test("regression: a named transcript whose first line is still being written is waited for, not called another agent's (exit 2, advising `import auto`)", async () => {
  await using dir = await tempDir();
  await using home = await tempHome();
  const src = join(
    CORPUS,
    "claude/laf-us_idaho-vault/c--Users-loganf-Documents-IDAHO-VAULT/ad723d79-d1aa-4c89-9a82-926c1918e7ee/subagents/agent-a7ca5b34b59e4a24b.jsonl",
  );
  const path = join(dir.path, "agent-a7ca5b34b59e4a24b.jsonl");
  const whole = readFileSync(src);
  writeFileSync(path, whole.subarray(0, 1000));
  const h = { home: home.path };
  const torn = runCli(["import", "claude", path, "--json"], h);
  expect([torn.code, torn.stderr]).toEqual([0, ""]);
  const auto = runCli(["import", "auto", path], h);
  expect([auto.code, auto.stderr]).toEqual([
    0,
    expect.stringContaining("its first line is not written whole yet"),
  ]);
  writeFileSync(path, whole);
  const done = JSON.parse(runCli(["import", "claude", path, "--json"], h).stdout);
  expect(done.totals.created).toBe(1);
});

test("a named transcript not begun yet (empty: the agent made the file first) is waited for too (import audit 5)", async () => {
  await using dir = await tempDir();
  await using home = await tempHome();
  const path = join(dir.path, "c64cc478-3430-40fe-8e9c-4ee9986e9754.jsonl");
  writeFileSync(path, "");
  const h = { home: home.path };
  await using other = await tempHome();
  const auto = runCli(["import", "auto", path], { home: other.path });
  expect([auto.code, auto.stderr]).toEqual([
    0,
    expect.stringContaining("its first line is not written whole yet"),
  ]);
  const empty = runCli(["import", "claude", path], h);
  expect([empty.code, empty.stderr]).toEqual([0, ""]);
  copyFileSync(SRC, path);
  const done = JSON.parse(runCli(["import", "claude", path, "--json"], h).stdout);
  expect(done.totals.created).toBe(1);
});

test("a named transcript left empty for five minutes is not waited for: exit 2 (misc review 3)", async () => {
  await using dir = await tempDir();
  await using home = await tempHome();
  const path = join(dir.path, "c64cc478-3430-40fe-8e9c-4ee9986e9754.jsonl");
  writeFileSync(path, "");
  const old = new Date(Date.now() - 600_000);
  utimesSync(path, old, old);
  const r = runCli(["import", "claude", path], { home: home.path });
  expect(r.code).toBe(2);
  expect(r.stderr).toContain("not a transcript this importer knows");
});

test("a named document that does not parse and is no longer written, or a named credential file, is exit 2 (import audit 2, 5)", async () => {
  await using dir = await tempDir();
  await using home = await tempHome();
  const h = { home: home.path };
  const recording = readFileSync(join(CORPUS, "gemini", "session-2026-03-28T21-32-c4c43609.json"));
  const cut = join(dir.path, "session-2026-03-28T21-32-c4c43609.json");
  writeFileSync(cut, recording.subarray(0, 3000));
  const hourAgo = new Date(Date.now() - 3_600_000);
  utimesSync(cut, hourAgo, hourAgo);
  const broken = runCli(["import", "gemini", cut, "--json"], h);
  expect(broken.code).toBe(2);
  expect(broken.stderr).toContain("1 path given is not readable (see the warning): not imported");
  // Said as what it is: cut off (the engine's own message named no place: `Expected '}'`).
  expect(broken.stderr).toMatch(
    /not valid JSON: it stops at line \d+ before the document is complete \(cut off\?\)/,
  );
  // Not read: it failed (it was counted read and failed at once).
  expect(JSON.parse(broken.stdout).sources[0].files).toMatchObject({ found: 1, read: 0, failed: 1 });
  // Still being written (Gemini rewrites a recording whole): read again next time, exit 0.
  utimesSync(cut, new Date(), new Date());
  expect(runCli(["import", "gemini", cut], h).code).toBe(0);
  // In a folder it is one file among others: a warning, exit 0.
  utimesSync(cut, hourAgo, hourAgo);
  expect(runCli(["import", "gemini", dir.path], h).code).toBe(0);
  const credentials = join(dir.path, "auth.json");
  writeFileSync(credentials, "{}");
  const named = runCli(["import", "codex", credentials, "--json"], h);
  expect(named.code).toBe(2);
  expect(named.stderr).toContain("credential file: not read");
  expect(JSON.parse(named.stdout).sources[0].files.skipped).toBe(1);
});

test("regression: a named path that cannot be opened, or is no file at all, is the command's failure, exit 2 (it was a warning alone, exit 0, nothing read)", async () => {
  await using dir = await tempDir();
  await using home = await tempHome();
  const h = { home: home.path };
  const unreadable = join(dir.path, "bad.jsonl");
  symlinkSync("/proc/self/mem", unreadable); // an i/o error on read, even for root
  for (const [agent, path] of [
    ["claude", unreadable],
    ["auto", unreadable],
    ["codex", unreadable],
  ] as const) {
    const r = runCli(["import", agent, path, "--json"], h);
    expect([agent, r.code]).toEqual([agent, 2]);
    expect(r.stderr).toContain(`${path}: cannot read`);
    expect(JSON.parse(r.stdout).sources[0].files).toMatchObject({ found: 0, read: 0, failed: 1 });
  }
  const fifo = join(dir.path, "pipe.jsonl");
  Bun.spawnSync(["mkfifo", fifo]);
  const r = runCli(["import", "claude", fifo, "--json"], h);
  expect([r.code, JSON.parse(r.stdout).sources[0].files.skipped]).toEqual([2, 1]);
  expect(r.stderr).toContain("not a file or a folder: not read");
});

test("a credential file is not opened under a link's name or a name the rule missed (redact review 4)", async () => {
  await using dir = await tempDir();
  const gemini = '{"sessionId":"s","projectHash":"h","messages":[]}';
  const at = (...parts: string[]) => join(dir.path, ...parts);
  mkdirSync(at(".claude", "projects", "-p"), { recursive: true });
  mkdirSync(at(".codex"), { recursive: true });
  mkdirSync(at(".docker"), { recursive: true });
  mkdirSync(at(".azure"), { recursive: true });
  mkdirSync(at("backup"), { recursive: true });
  // Each holds what would be imported if it were read.
  copyFileSync(SRC, at(".claude", ".credentials.json"));
  copyFileSync(SRC, at(".codex", "auth.json"));
  symlinkSync("../../.credentials.json", at(".claude", "projects", "-p", "c64cc478.jsonl"));
  symlinkSync(at(".codex", "auth.json"), at("rollout-2026-01-01T00-00-00-x.jsonl"));
  // A link to a link to the credentials: judged at each hop.
  symlinkSync(at("rollout-2026-01-01T00-00-00-x.jsonl"), at("again.jsonl"));
  for (const file of [
    at(".claude.json"),
    at(".docker", "config.json"),
    at(".azure", "accessTokens.json"),
    at("backup", "auth copy.json"),
    at("backup", "mcpAuth.json"),
  ])
    writeFileSync(file, gemini);
  // Through a linked folder, the file is judged in its real folder.
  symlinkSync(at(".docker"), at("dock"));
  // Not credentials: found as before.
  writeFileSync(at("backup", "author.json"), gemini);
  writeFileSync(at("backup", "tokenizer.json"), gemini);
  expect(detectFile(at("backup", "auth copy.json"))?.agent).toBe("gemini");
  expect(detectFile(at("again.jsonl"))?.agent).toBe("claude");

  const warnings: ImportWarning[] = [];
  const found = discover(dir.path, "auto", warnings).map((c) => c.path.slice(dir.path.length + 1));
  expect(found.sort()).toEqual(["backup/author.json", "backup/tokenizer.json"]);
  expect(warnings).toEqual([]);
  for (const named of [
    "again.jsonl",
    "rollout-2026-01-01T00-00-00-x.jsonl",
    ".claude.json",
    "dock/config.json",
  ]) {
    const named_warnings: ImportWarning[] = [];
    expect(discover(at(named), "auto", named_warnings)).toEqual([]);
    expect(named_warnings).toEqual([{ file: at(named), message: "credential file: not read" }]);
  }
});

test("regression: a project folder whose name says credential, auth or tokens is walked: only files are judged by their names (a Claude project folder -home-me-credential-service was skipped whole, its transcripts never imported)", async () => {
  await using home = await tempHome();
  await using dir = await tempDir();
  for (const folder of ["-home-me-credential-service", "-home-me-auth", "secrets.json"]) {
    mkdirSync(join(dir.path, folder));
    copyFileSync(SRC, join(dir.path, folder, `${folder.length}-t.jsonl`));
  }
  // The files themselves are still judged by name.
  copyFileSync(SRC, join(dir.path, "-home-me-auth", "credentials.json"));
  expect(
    discover(dir.path, "claude", [])
      .map((c) => c.path.slice(dir.path.length + 1))
      .sort(),
  ).toEqual([
    "-home-me-auth/13-t.jsonl",
    "-home-me-credential-service/27-t.jsonl",
    "secrets.json/12-t.jsonl",
  ]);
});

describe("credential files by name and folder, transcripts never among them (second redact review, 8, 9)", () => {
  const credentials = [
    ".config/github-copilot/apps.json",
    ".config/github-copilot/hosts.json",
    ".config/configstore/firebase-tools.json",
    ".mcp.json",
    ".cursor/mcp.json",
    "project/.vscode/mcp.json",
    ".claude/settings.json",
    ".claude/settings.local.json",
    "project/.claude/settings.local.json",
    ".gemini/settings.json",
    // Known names the narrower camelCase rule still knows.
    ".azure/accessTokens.json",
    "backup/mcpAuth.json",
    "backup/mcp-auth.json",
    "backup/tokens.json",
    "backup/oauth_creds.json",
    "backup/client_secret_1234.apps.googleusercontent.com.json",
    "backup/my-secrets.json",
    "backup/auth copy.json",
    // Google Cloud service-account keys (third redact review).
    "gcp/service-account.json",
    "gcp/serviceAccountKey.json",
    "gcp/my-project-firebase-adminsdk-ab12c-0123456789.json",
  ];
  const transcripts = [
    ".claude/projects/-home-me-p/c64cc478-3430-40fe-8e9c-4ee9986e9754.jsonl",
    ".claude/projects/-home-me-p/c64cc478/subagents/agent-a1b2.jsonl",
    ".codex/sessions/2026/04/19/rollout-2026-04-19T22-10-31-019da915.jsonl",
    ".local/share/opencode/storage/session/global/ses_1278abc.json",
    ".local/share/opencode/storage/message/ses_1278abc/msg_1.json",
    ".local/share/opencode/storage/part/msg_1/prt_1.json",
    "dump/session.jsonl",
    "dump/message.jsonl",
    "dump/part.jsonl",
    ".gemini/tmp/9f8e7d6c5b4a/chats/session-2026-03-28T21-32-c4c43609.json",
    ".gemini/tmp/9f8e7d6c5b4a/logs.json",
    // OpenCode exports a user named: a word holding Token or Auth is not a credential's name.
    "exports/maxTokens-sweep.json",
    "exports/fix auth flow.json",
    "exports/designTokens.json",
    "exports/refreshTokenFix.json",
    "exports/jwtAuth.json",
    "exports/settings.json",
  ];
  test("told apart by name", () => {
    expect(credentials.filter((p) => !isCredentialFile(`/home/me/${p}`))).toEqual([]);
    expect(transcripts.filter((p) => isCredentialFile(`/home/me/${p}`))).toEqual([]);
  });

  test("Claude Code's settings in a $CLAUDE_CONFIG_DIR named otherwise (third redact review)", () => {
    const before = process.env.CLAUDE_CONFIG_DIR;
    try {
      process.env.CLAUDE_CONFIG_DIR = "/home/me/claude-work/";
      expect(isCredentialFile("/home/me/claude-work/settings.json")).toBe(true);
      expect(isCredentialFile("/home/me/claude-work/settings.local.json")).toBe(true);
      expect(isCredentialFile("/home/me/claude-work/projects/-p/settings.json")).toBe(false);
      delete process.env.CLAUDE_CONFIG_DIR;
      expect(isCredentialFile("/home/me/claude-work/settings.json")).toBe(false);
    } finally {
      if (before === undefined) delete process.env.CLAUDE_CONFIG_DIR;
      else process.env.CLAUDE_CONFIG_DIR = before;
    }
  });

  test("a walk skips them unread, and one named is a warning", async () => {
    await using dir = await tempDir();
    const at = (path: string) => join(dir.path, path);
    const opencode = '{"info":{"id":"ses_1"},"messages":[]}';
    for (const path of credentials) {
      mkdirSync(dirname(at(path)), { recursive: true });
      // Unreadable: opening one would be a warning.
      writeFileSync(at(path), opencode, { mode: 0o000 });
    }
    mkdirSync(at("exports"), { recursive: true });
    for (const name of ["maxTokens-sweep.json", "fix auth flow.json", "jwtAuth.json"])
      writeFileSync(at(`exports/${name}`), opencode);
    const warnings: ImportWarning[] = [];
    const found = discover(dir.path, "auto", warnings).map((c) => c.path.slice(dir.path.length + 1));
    expect(found.sort()).toEqual([
      "exports/fix auth flow.json",
      "exports/jwtAuth.json",
      "exports/maxTokens-sweep.json",
    ]);
    expect(warnings).toEqual([]);
    for (const path of [".mcp.json", ".claude/settings.json", ".config/github-copilot/hosts.json"]) {
      const named: ImportWarning[] = [];
      expect(discover(at(path), "auto", named)).toEqual([]);
      expect(named).toEqual([{ file: at(path), message: "credential file: not read" }]);
    }
  });
});
