/**
 * Regressions found by fuzzing the corpus (one `describe` per bug), on corpus files damaged here:
 * - a JSON line that is not an object (`null`, `42`) in an OpenCode row dump or a Gemini JSONL
 *   recording threw a TypeError and lost the whole source; a session row without an id, or a row of
 *   `42`, was dropped without a word; a byte-order mark cost the dump its first session;
 * - detection looked past a damaged first line only within the first 16 KiB (not the 1 MiB it
 *   meant): a Claude transcript whose second line is long was not found at all;
 * - a Gemini recording whose metadata line is torn or lost, or a legacy `.json` without its
 *   `projectHash`, was not found at all.
 */
import { describe, expect, test } from "bun:test";
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { detectFile } from "../../src/import/discover.ts";
import { readOpencodeRows } from "../../src/import/opencode-source.ts";
import type { EntryCounts, ImportWarning } from "../../src/import/types.ts";
import { CORPUS, tempDir, tempHome } from "../_helpers.ts";
import { importOne } from "./_corpus.ts";
import { imported } from "./_store.ts";

const ROWS = join(CORPUS, "opencode", "richardaiand_aiand-portfolio-web", "rows");
const ROW_FILES = ["session.jsonl", "message.jsonl", "part.jsonl"];
const CLAUDE = join(CORPUS, "claude", "drmaciver_claude-reliability", "coverage-test-fix.transcript.jsonl");
const CODEX = join(CORPUS, "codex", "rollout-2026-04-10T09-55-11-019d781a-be34-7041-abb1-577f9360b907.jsonl");
const OPENCODE_EXPORT = join(
  CORPUS,
  "opencode",
  "richardaiand_aiand-portfolio-web",
  "reconstructed_export",
  "ses_1279fce82ffeZOJhNwml1w1Fu4.json",
);
const GEMINI_NAME = "session-2026-03-28T21-32-c4c43609";
const GEMINI = join(CORPUS, "gemini", `${GEMINI_NAME}.json`);

type Obj = Record<string, unknown>;
const linesOf = (path: string) => readFileSync(path, "utf8").split("\n").filter(Boolean);
/** `lines` with `extra` put in before line `at` (1-based), written as a JSONL file. */
const withLines = (lines: string[], at: number, ...extra: string[]) =>
  `${[...lines.slice(0, at - 1), ...extra, ...lines.slice(at - 1)].join("\n")}\n`;

/** Import `path` as `agent` into a fresh store; the one source's summary. */
async function importSummary(agent: Parameters<typeof importOne>[1], path: string) {
  await using home = await tempHome();
  const { adapter, report } = await importOne(home.path, agent, path);
  await adapter.close();
  return report.sources[0]!;
}

/** The warnings that name a line, as `file:line message`. */
const lineWarnings = (warnings: ImportWarning[]) =>
  warnings.filter((w) => w.line !== undefined).map((w) => `${w.file}:${w.line} ${w.message}`);

describe("bug 1: a JSON line that is not an object costs its line, not the source", () => {
  /** The corpus row dump copied into `dir`, each file through `damage`. */
  const dump = (dir: string, damage: Partial<Record<string, (lines: string[]) => string>> = {}) => {
    for (const f of ROW_FILES) {
      const lines = linesOf(join(ROWS, f));
      writeFileSync(join(dir, f), damage[f]?.(lines) ?? `${lines.join("\n")}\n`);
    }
    return dir;
  };

  test("OpenCode rows: `null`, `42` and `[]` rows are reported with file and line, the rest imports", async () => {
    await using clean = await tempDir();
    await using bad = await tempDir();
    const want = await importSummary("opencode", dump(clean.path));
    const got = await importSummary(
      "opencode",
      dump(bad.path, {
        "session.jsonl": (l) => withLines(l, 2, "null"),
        "message.jsonl": (l) => withLines(l, 5, "42"),
        "part.jsonl": (l) => withLines(l, 1, "[]"),
      }),
    );
    expect(got.files.failed).toBe(0);
    expect(got.sessions.created).toBe(want.sessions.created);
    expect(got.sessions.created).toBe(3);
    expect(got.entries.imported).toBe(want.entries.imported);
    expect(got.entries.skipped).toEqual({ ...want.entries.skipped, "(malformed line)": 3 });
    expect(lineWarnings(got.warnings)).toEqual([
      `${join(bad.path, "session.jsonl")}:2 line is not a JSON object`,
      `${join(bad.path, "message.jsonl")}:5 line is not a JSON object`,
      `${join(bad.path, "part.jsonl")}:1 line is not a JSON object`,
    ]);
  });

  test("OpenCode rows: a row given twice is read once (the later copy), its calls logged once", async () => {
    await using clean = await tempDir();
    await using bad = await tempDir();
    await using cleanHome = await tempHome();
    await using badHome = await tempHome();
    const want = await imported(cleanHome.path, "opencode", dump(clean.path));
    const got = await imported(
      badHome.path,
      "opencode",
      dump(bad.path, { "message.jsonl": (l) => withLines(l, l.length + 1, l[2]!) }),
    );
    const shape = (r: typeof want) => r.sessions.map((s) => ({ messages: s.messages, events: s.events }));
    // Both kept, the second as `<id>+2`, and its parts' calls and outputs logged again.
    expect(shape(got)).toEqual(shape(want));
    expect(got.summary.entries.skipped).toEqual({ ...want.summary.entries.skipped, "(replayed entry)": 1 });
    const id = (JSON.parse(linesOf(join(ROWS, "message.jsonl"))[2]!) as Obj).id;
    expect(lineWarnings(got.summary.warnings)).toEqual([
      `${join(bad.path, "message.jsonl")}:${linesOf(join(ROWS, "message.jsonl")).length + 1} row ${id} given again: the later one kept`,
    ]);
  });

  test("OpenCode export: a message listed twice is read once (the later copy), its calls logged once", async () => {
    await using dir = await tempDir();
    await using cleanHome = await tempHome();
    await using badHome = await tempHome();
    const doc = JSON.parse(readFileSync(OPENCODE_EXPORT, "utf8")) as Obj & { messages: Obj[] };
    const cleanPath = join(dir.path, "clean.json");
    const badPath = join(dir.path, "bad.json");
    writeFileSync(cleanPath, JSON.stringify(doc));
    writeFileSync(badPath, JSON.stringify({ ...doc, messages: [...doc.messages, doc.messages[1]] }));
    const want = await imported(cleanHome.path, "opencode", cleanPath);
    const got = await imported(badHome.path, "opencode", badPath);
    const shape = (r: typeof want) => r.sessions.map((s) => ({ messages: s.messages, events: s.events }));
    expect(shape(got)).toEqual(shape(want));
    expect(got.summary.entries.skipped).toEqual({ ...want.summary.entries.skipped, "(replayed entry)": 1 });
    const id = (doc.messages[1]!.info as Obj).id;
    expect(got.summary.warnings.map((w) => w.message)).toContain(
      `message ${id} given again: the later one kept`,
    );
  });

  test("OpenCode rows: a session row without an id is reported, not dropped silently", async () => {
    await using clean = await tempDir();
    await using bad = await tempDir();
    const want = await importSummary("opencode", dump(clean.path));
    const noId = (l: string[]) => {
      const row = JSON.parse(l[0]!) as Obj;
      delete row.id;
      return withLines(l, 4, JSON.stringify(row));
    };
    const got = await importSummary("opencode", dump(bad.path, { "session.jsonl": noId }));
    expect(got.sessions.created).toBe(want.sessions.created);
    expect(lineWarnings(got.warnings)).toEqual([
      `${join(bad.path, "session.jsonl")}:4 session row without an id: skipped`,
    ]);
  });

  test("OpenCode rows: a byte-order mark keeps the first session", async () => {
    await using clean = await tempDir();
    await using bad = await tempDir();
    const want = await importSummary("opencode", dump(clean.path));
    const bom = (l: string[]) => `\uFEFF${l.join("\n")}\n`;
    const got = await importSummary("opencode", dump(bad.path, { "session.jsonl": bom }));
    expect(got.warnings).toEqual(want.warnings);
    expect(got.sessions.created).toBe(want.sessions.created);
    expect(got.entries.imported).toBe(want.entries.imported);
  });

  test("OpenCode rows: damaged rows are counted as malformed lines", async () => {
    await using bad = await tempDir();
    dump(bad.path, {
      "session.jsonl": (l) => withLines(l, 1, "null", "{not json"),
      "message.jsonl": (l) => withLines(l, 1, "42"),
    });
    const warnings: ImportWarning[] = [];
    const counts: EntryCounts = { imported: 0, skipped: {} };
    const bundles = readOpencodeRows(bad.path, warnings, counts);
    expect(bundles.map((b) => b.session.id).sort()).toEqual(
      linesOf(join(ROWS, "session.jsonl"))
        .map((l) => String((JSON.parse(l) as Obj).id))
        .sort(),
    );
    expect(counts.skipped).toEqual({ "(malformed line)": 3 });
    expect(warnings.map((w) => w.line)).toEqual([1, 2, 1]);
  });

  test("Gemini JSONL: `null`, `42` and `[]` lines are reported and counted, the recording imports", async () => {
    await using dir = await tempDir();
    const doc = JSON.parse(readFileSync(GEMINI, "utf8")) as Obj & { messages: Obj[] };
    const { messages, ...meta } = doc;
    const lines = [JSON.stringify(meta), ...messages.map((m) => JSON.stringify(m))];
    const cleanPath = join(dir.path, "clean", `${GEMINI_NAME}.jsonl`);
    const badPath = join(dir.path, "bad", `${GEMINI_NAME}.jsonl`);
    mkdirSync(join(dir.path, "clean"));
    mkdirSync(join(dir.path, "bad"));
    writeFileSync(cleanPath, `${lines.join("\n")}\n`);
    writeFileSync(badPath, `${[lines[0], "[]", lines[1], "null", "42", ...lines.slice(2)].join("\n")}\n`);
    const want = await importSummary("gemini", cleanPath);
    const got = await importSummary("gemini", badPath);
    expect(want.entries.imported).toBeGreaterThan(0);
    expect(got.files.failed).toBe(0);
    expect(got.sessions.created).toBe(1);
    expect(got.entries.imported).toBe(want.entries.imported);
    expect(got.entries.skipped).toEqual({ ...want.entries.skipped, "(malformed line)": 3 });
    expect(lineWarnings(got.warnings)).toEqual([
      `${badPath}:2 line is not a JSON object`,
      `${badPath}:4 line is not a JSON object`,
      `${badPath}:5 line is not a JSON object`,
    ]);
  });
});

describe("bug 2: detection looks past a damaged first line as far as it means to", () => {
  /** The corpus transcript with a 17 KB prompt pasted in its second line (a user's log), line 1 cut short. */
  const longSecondLine = (cutFirst: boolean) => {
    const lines = linesOf(CLAUDE);
    const prompt = JSON.parse(lines[1]!) as Obj & { message: { content: string } };
    prompt.message.content += `\n${"npm ERR! a line of the log the user pasted\n".repeat(400)}`;
    lines[1] = JSON.stringify(prompt);
    if (cutFirst) lines[0] = lines[0]!.slice(0, 40);
    expect(lines[0]!.length + lines[1]!.length).toBeGreaterThan(16 * 1024);
    return `${lines.join("\n")}\n`;
  };

  test("a Claude transcript whose first line is cut and whose second is long is found and imported", async () => {
    await using dir = await tempDir();
    const path = join(dir.path, "c64cc478-3430-40fe-8e9c-4ee9986e9754.jsonl");
    writeFileSync(path, longSecondLine(true));
    expect(detectFile(path)?.agent).toBe("claude");
    const got = await importSummary("claude", dir.path);
    expect(got.files.found).toBe(1);
    expect(got.sessions.created).toBe(1);
    expect(got.entries.skipped["(malformed line)"]).toBe(1);
    expect(lineWarnings(got.warnings)).toEqual([expect.stringMatching(/:1 malformed JSON/)]);

    // The same transcript undamaged imports the same entries.
    await using whole = await tempDir();
    writeFileSync(join(whole.path, "c64cc478-3430-40fe-8e9c-4ee9986e9754.jsonl"), longSecondLine(false));
    expect((await importSummary("claude", whole.path)).entries.imported).toBe(got.entries.imported);
  });

  test("the look-ahead still stops after 8 lines", async () => {
    await using dir = await tempDir();
    const path = join(dir.path, "notes.jsonl");
    const lines = linesOf(CLAUDE);
    writeFileSync(path, withLines(lines.slice(1), 1, "{cut", ...Array(8).fill('{"note":"x"}')));
    expect(detectFile(path)).toBeUndefined();
  });
});

test("Gemini: a message without an id is reported and counted, in a recording and in a legacy .json", async () => {
  await using dir = await tempDir();
  const doc = JSON.parse(readFileSync(GEMINI, "utf8")) as Obj & { messages: Obj[] };
  const clean = await importSummary("gemini", GEMINI);
  // The second message's id a number: it was dropped without a word.
  const broken = { ...doc, messages: doc.messages.map((m, i) => (i === 1 ? { ...m, id: 7 } : m)) };
  const jsonPath = join(dir.path, `${GEMINI_NAME}.json`);
  writeFileSync(jsonPath, JSON.stringify(broken));
  const legacy = await importSummary("gemini", jsonPath);
  expect(legacy.entries.skipped).toEqual({ ...clean.entries.skipped, "(unreadable entry)": 1 });
  expect(legacy.warnings.map((w) => w.message)).toContain("message 2 of the recording has no id: skipped");
  const { messages, ...meta } = broken;
  const jsonlPath = join(dir.path, `${GEMINI_NAME}.jsonl`);
  writeFileSync(jsonlPath, `${[meta, ...messages].map((r) => JSON.stringify(r)).join("\n")}\n`);
  const recording = await importSummary("gemini", jsonlPath);
  expect(recording.entries.skipped["(unreadable entry)"]).toBe(1);
  expect(lineWarnings(recording.warnings)).toEqual([
    `${jsonlPath}:3 ${String(messages[1]!.type)} message without an id: skipped`,
  ]);
});

describe("bug 3: a Gemini recording in Gemini's chats folder is found without its metadata", () => {
  const doc = () => JSON.parse(readFileSync(GEMINI, "utf8")) as Obj & { messages: Obj[] };
  /** The corpus recording as JSONL (metadata line, then messages), its metadata line through `meta`. */
  const jsonl = (meta: (line: string) => string[]) => {
    const { messages, ...head } = doc();
    return `${[...meta(JSON.stringify(head)), ...messages.map((m) => JSON.stringify(m))].join("\n")}\n`;
  };
  /** `text` written where Gemini CLI keeps chats under `root`; the chats folder. */
  const place = (root: string, name: string, text: string) => {
    const chats = join(root, "tmp", "f528f00f72f2", "chats");
    mkdirSync(chats, { recursive: true });
    writeFileSync(join(chats, name), text);
    return chats;
  };

  test("a JSONL recording whose metadata line is torn, or lost, is found and its messages imported", async () => {
    await using clean = await tempDir();
    await using torn = await tempDir();
    await using lost = await tempDir();
    const name = `${GEMINI_NAME}.jsonl`;
    const want = await importSummary(
      "gemini",
      place(
        clean.path,
        name,
        jsonl((m) => [m]),
      ),
    );
    const tornChats = place(
      torn.path,
      name,
      jsonl((m) => [m.slice(0, 60)]),
    );
    const lostChats = place(
      lost.path,
      name,
      jsonl(() => []),
    );
    expect(detectFile(join(tornChats, name))?.agent).toBe("gemini");
    expect(detectFile(join(lostChats, name))?.agent).toBe("gemini");
    const gotTorn = await importSummary("gemini", tornChats);
    expect(gotTorn.files.found).toBe(1);
    expect(gotTorn.sessions.created).toBe(1);
    expect(gotTorn.entries.imported).toBe(want.entries.imported);
    expect(lineWarnings(gotTorn.warnings)).toEqual([expect.stringMatching(/:1 malformed JSON/)]);
    const gotLost = await importSummary("gemini", lostChats);
    expect(gotLost.files.found).toBe(1);
    expect(gotLost.entries.imported).toBe(want.entries.imported);
  });

  test("a legacy .json recording without its projectHash is found and imported", async () => {
    await using clean = await tempDir();
    await using bad = await tempDir();
    const name = `${GEMINI_NAME}.json`;
    const want = await importSummary("gemini", place(clean.path, name, readFileSync(GEMINI, "utf8")));
    const { projectHash: _, ...rest } = doc();
    const chats = place(bad.path, name, JSON.stringify(rest, null, 2));
    expect(detectFile(join(chats, name))?.agent).toBe("gemini");
    const got = await importSummary("gemini", chats);
    expect(got.files.found).toBe(1);
    expect(got.sessions.created).toBe(1);
    expect(got.entries.imported).toBe(want.entries.imported);
  });

  test("other agents' files, and other JSONL, named like Gemini's chats are not taken for Gemini's", async () => {
    await using dir = await tempDir();
    const chats = join(dir.path, "tmp", "f528f00f72f2", "chats");
    mkdirSync(join(chats, "parent"), { recursive: true });
    const at = (name: string, src: string) => {
      copyFileSync(src, join(chats, name));
      return detectFile(join(chats, name))?.agent;
    };
    expect(at("session-a.jsonl", CLAUDE)).toBe("claude");
    expect(at("session-b.jsonl", CODEX)).toBe("codex");
    expect(at("session-c.json", OPENCODE_EXPORT)).toBe("opencode");
    expect(at("session-d.jsonl", join(ROWS, "message.jsonl"))).toBeUndefined();
    expect(at("parent/e.jsonl", join(ROWS, "part.jsonl"))).toBeUndefined();
    // A Claude transcript with its first line cut is still Claude's.
    writeFileSync(join(chats, "session-f.jsonl"), withLines(linesOf(CLAUDE).slice(1), 1, "{cut"));
    expect(detectFile(join(chats, "session-f.jsonl"))?.agent).toBe("claude");
  });
});

describe("a line holding bytes that are not UTF-8", () => {
  test("regression: imported with U+FFFD in their place, but said with file and line (it was silent)", async () => {
    await using home = await tempHome();
    await using dir = await tempDir();
    const bytes = readFileSync(CODEX);
    // A bad byte inside a message's text: the line still reads.
    const at = bytes.indexOf('"text":"') + 8;
    const lineNo = bytes.subarray(0, at).toString("latin1").split("\n").length;
    const file = join(dir.path, "x.jsonl");
    writeFileSync(file, Buffer.concat([bytes.subarray(0, at), Buffer.from([0xff]), bytes.subarray(at)]));
    const { adapter, report } = await importOne(home.path, "codex", file);
    const said = report.sources[0]!.warnings.filter((w) => w.message.startsWith("invalid UTF-8"));
    expect(said).toEqual([
      {
        file,
        line: lineNo,
        message: `invalid UTF-8 at byte ${at - bytes.lastIndexOf(10, at) - 1} of the line: imported with U+FFFD in its place`,
      },
    ]);
    await adapter.close();
  });
});
