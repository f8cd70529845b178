/**
 * Regressions from the CLI review of copies (`session fork`, `export`, `import`), through the CLI:
 * 3. a copy whose import was cut off was exported as if whole (after the `--repair` its own error
 *    advised), and importing that document dropped its "incomplete" mark;
 * 4. `fork` of a log with an unreadable middle line left the line out silently;
 * 6. `fork --title` took titles `create` and `rename` refuse (over 500 characters, blank, multi-line).
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
