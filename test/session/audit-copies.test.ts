/**
 * Regressions from the CLI review of copies (`session fork`, `export`, `import`), through the CLI:
 * 3. a copy whose import was cut off was exported as if whole (after the `--repair` its own error
 *    advised), and importing that document dropped its "incomplete" mark;
 * 4. `fork` of a log with an unreadable middle line left the line out silently;
 * 5. `append` took token counts that are not counts (-5, 1.5, 1e300): exported, `import` refused them;
 * 6. `fork --title` took titles `create` and `rename` refuse (over 500 characters, blank, multi-line);
 * 8. `store migrate` advised `store verify --repair` for a bad middle line, which it never repairs;
 * 11. `session import` took an empty title.
 */
import { expect, test } from "bun:test";
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { openStore } from "../../src/storage/select.ts";
import { parseJson, runCli, tempHome } from "../_helpers.ts";

/** The messages log of session `id` in a files home. */
function messagesLog(home: string, id: string): string {
  const sessions = join(home, "sessions");
  for (const project of readdirSync(sessions)) {
    const log = join(sessions, project, id, "messages.jsonl");
    if (statSync(log, { throwIfNoEntry: false })) return log;
  }
  throw new Error(`no log for ${id}`);
}

const append = (home: string, id: string, texts: string[]) =>
  runCli(["session", "append", id], {
    home,
    stdin: texts
      .map((t) => JSON.stringify({ role: "user", parts: [{ type: "text", content: t }] }))
      .join("\n"),
  });

test("an incomplete import is not exported, and a document of one is not imported", async () => {
  await using home = await tempHome();
  expect(runCli(["session", "create", "--id", "s1", "--prompt", "p"], { home: home.path }).code).toBe(0);
  const { adapter } = await openStore("files", { home: home.path });
  // What a killed `session import` leaves: the copy marked incomplete, by a process now dead.
  await adapter.updateMeta("s1", (m) => ({
    ...m,
    copiedFrom: {
      id: "orig",
      exportedAt: 1,
      incomplete: true,
      by: { pid: 2 ** 22 + 7, start: 1, host: "h" },
    },
  }));
  await adapter.close();
  const r = runCli(["session", "export", "s1", "--rollout"], { home: home.path });
  expect([r.code, r.stderr]).toEqual([
    1,
    expect.stringContaining("session s1 is an import of session orig that was stopped half way"),
  ]);
  // A document an older version exported from such a copy.
  expect(runCli(["session", "create", "--id", "s2", "--prompt", "p"], { home: home.path }).code).toBe(0);
  const out = join(home.path, "s2.json");
  expect(runCli(["session", "export", "s2", "--out", out], { home: home.path }).code).toBe(0);
  const doc = JSON.parse(readFileSync(out, "utf8"));
  doc.meta.copiedFrom = { id: "orig", exportedAt: 1, incomplete: true };
  writeFileSync(out, JSON.stringify(doc));
  const imp = runCli(["session", "import", out, "--id", "s3"], { home: home.path });
  expect([imp.code, imp.stderr]).toEqual([1, expect.stringContaining("it lacks part of its log")]);
  expect(imp.stderr).toContain("s2.json");
  expect(runCli(["session", "show", "s3"], { home: home.path }).code).toBe(3);
});

test("fork refuses a log with an unreadable middle line, as export does; a full copy or none", async () => {
  await using home = await tempHome();
  expect(runCli(["session", "create", "--id", "s1", "--prompt", "p"], { home: home.path }).code).toBe(0);
  expect(append(home.path, "s1", ["one", "two"]).code).toBe(0);
  const log = messagesLog(home.path, "s1");
  const lines = readFileSync(log, "utf8").split("\n");
  lines[1] = lines[1]!.slice(0, -1); // line 2 no longer a JSON value; lines after it read
  writeFileSync(log, lines.join("\n"));
  const r = runCli(["session", "fork", "s1"], { home: home.path });
  expect([r.code, r.stderr]).toEqual([
    1,
    expect.stringContaining("session s1 has 1 unreadable message line(s)"),
  ]);
  expect(r.stderr).toContain(`${log}:2`);
  expect(parseJson<{ total: number }>(runCli(["session", "list", "--json"], { home: home.path })).total).toBe(
    1,
  );
});

test("fork --title follows the title rules of create and rename; the default fork title fits", async () => {
  await using home = await tempHome();
  const long = "x".repeat(495);
  expect(
    runCli(["session", "create", "--id", "s1", "--prompt", "p", "--title", long], { home: home.path }).code,
  ).toBe(0);
  const tooLong = runCli(["session", "fork", "s1", "--title", "y".repeat(600)], { home: home.path });
  expect([tooLong.code, tooLong.stderr]).toEqual([
    2,
    expect.stringContaining("title must be at most 500 characters"),
  ]);
  expect(runCli(["session", "fork", "s1", "--title", "   "], { home: home.path }).code).toBe(2);
  const lines = parseJson<{ title: string; titleSource: string }>(
    runCli(["session", "fork", "s1", "--title", "a\nb", "--json"], { home: home.path }),
  );
  expect([lines.title, lines.titleSource]).toEqual(["a b", "user"]);
  const dflt = parseJson<{ title: string }>(runCli(["session", "fork", "s1", "--json"], { home: home.path }));
  expect(dflt.title.length).toBeLessThanOrEqual(500);
  expect(dflt.title.endsWith(" (fork)")).toBe(true);
});

test("token counts are whole numbers ≥ 0 where callers give messages; one stored before still reads", async () => {
  await using home = await tempHome();
  expect(runCli(["session", "create", "--id", "s1", "--prompt", "p"], { home: home.path }).code).toBe(0);
  const withUsage = (usage: object) =>
    runCli(["session", "append", "s1"], {
      home: home.path,
      stdin: JSON.stringify({ role: "assistant", parts: [{ type: "text", content: "hi" }], usage }),
    });
  for (const [usage, field] of [
    [{ inputTokens: -5 }, "usage.inputTokens"],
    [{ outputTokens: 1.5 }, "usage.outputTokens"],
    [{ cacheReadInputTokens: 1e300 }, "usage.cacheReadInputTokens"],
  ] as const) {
    const r = withUsage(usage);
    expect([r.code, r.stderr]).toEqual([
      2,
      expect.stringContaining(`a token count must be a whole number ≥ 0`),
    ]);
    expect(r.stderr).toContain(`(field ${field})`);
  }
  // Other numbers in usage are not token counts: kept as they are.
  expect(withUsage({ inputTokens: 10, costUsd: 0.25 }).code).toBe(0);
  // A line an older version stored with a fractional count still reads.
  const log = messagesLog(home.path, "s1");
  const old = {
    id: "old1",
    role: "assistant",
    parts: [{ type: "text", content: "x" }],
    timestamp: 1,
    usage: { outputTokens: 1.5 },
  };
  writeFileSync(log, `${readFileSync(log, "utf8")}${JSON.stringify(old)}\n`);
  const shown = parseJson<{ messages: { id: string }[] }>(
    runCli(["session", "show", "s1", "--json"], { home: home.path }),
  );
  expect(shown.messages.map((m) => m.id)).toContain("old1");
  // And is still copied: store migrate rewrites every message, and must not refuse what it did not
  // let in itself (storage review 2).
  const migrated = runCli(["store", "migrate", "--to", "sqlite"], { home: home.path });
  expect([migrated.code, migrated.stderr]).toEqual([0, expect.any(String)]);
  const copied = parseJson<{ messages: { id: string }[] }>(
    runCli(["session", "show", "s1", "--json", "--store", "sqlite"], { home: home.path }),
  );
  expect(copied.messages.map((m) => m.id)).toContain("old1");
  // And what is exported imports.
  expect(runCli(["session", "create", "--id", "s2", "--prompt", "p"], { home: home.path }).code).toBe(0);
  expect(
    runCli(["session", "append", "s2"], {
      home: home.path,
      stdin: JSON.stringify({
        role: "assistant",
        parts: [{ type: "text", content: "hi" }],
        usage: { inputTokens: 7 },
      }),
    }).code,
  ).toBe(0);
  const out = join(home.path, "s2.json");
  expect(runCli(["session", "export", "s2", "--out", out], { home: home.path }).code).toBe(0);
  expect(runCli(["session", "import", out], { home: home.path }).code).toBe(0);
});

test("migrate, export and fork give the same advice for an unreadable line: --repair only for a torn tail", async () => {
  await using home = await tempHome();
  expect(runCli(["session", "create", "--id", "s1", "--prompt", "p"], { home: home.path }).code).toBe(0);
  expect(append(home.path, "s1", ["one", "two"]).code).toBe(0);
  const log = messagesLog(home.path, "s1");
  const lines = readFileSync(log, "utf8").split("\n");
  lines[1] = `XX${lines[1]}`;
  writeFileSync(log, lines.join("\n"));
  for (const args of [
    ["store", "migrate", "--to", "sqlite"],
    ["session", "export", "s1"],
    ["session", "fork", "s1"],
  ]) {
    const r = runCli(args, { home: home.path });
    expect([r.code, r.stderr]).toEqual([
      1,
      expect.stringContaining(`${log}:2: session s1 has 1 unreadable message line(s)`),
    ]);
    expect(r.stderr).toContain("a bad line in the middle of a log is not repaired");
    expect(r.stderr).not.toContain("--repair");
  }
});

test("import refuses a blank title; a relative project (an earlier importer stored some) still imports", async () => {
  await using home = await tempHome();
  expect(runCli(["session", "create", "--id", "s1", "--prompt", "p"], { home: home.path }).code).toBe(0);
  const out = join(home.path, "s1.json");
  expect(runCli(["session", "export", "s1", "--out", out], { home: home.path }).code).toBe(0);
  const doc = JSON.parse(readFileSync(out, "utf8"));
  writeFileSync(out, JSON.stringify({ ...doc, meta: { ...doc.meta, title: "  " } }));
  const r = runCli(["session", "import", out], { home: home.path });
  expect([r.code, r.stderr]).toEqual([2, expect.stringContaining("(field meta.title)")]);
  writeFileSync(out, JSON.stringify({ ...doc, meta: { ...doc.meta, projectPath: "work/app" } }));
  expect(runCli(["session", "import", out], { home: home.path }).code).toBe(0);
  // A Windows project (an import from a Windows machine) is absolute too.
  writeFileSync(out, JSON.stringify({ ...doc, meta: { ...doc.meta, projectPath: "C:\\work\\app" } }));
  expect(runCli(["session", "import", out], { home: home.path }).code).toBe(0);
});
