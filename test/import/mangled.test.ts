/**
 * Importers against mangled transcripts: every corpus file of every agent, with fields of random
 * entries deleted or replaced by values of the wrong type (seeded, so a failure repeats), and lines
 * cut short. An import never throws; what it stores reads back without a bad line, every event is
 * valid against the catalogue, and the trace and replay folds run on every session it made.
 */
import { afterAll, expect, test } from "bun:test";
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join, relative } from "node:path";
import * as v from "valibot";
import { importSources } from "../../src/import/import.ts";
import type { Agent } from "../../src/import/types.ts";
import { RolloutEventSchema } from "../../src/rollout/events.ts";
import { loadReplay, loadTrace } from "../../src/rollout/load.ts";
import { openStore } from "../../src/storage/select.ts";
import { CORPUS } from "../_helpers.ts";
import { seeded } from "../_random.ts";

const work = mkdtempSync(join(tmpdir(), "freecode-mangled-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const WRONG: unknown[] = [
  null,
  42,
  -1,
  1.5,
  "text",
  "",
  "a b/c",
  "__proto__",
  "constructor",
  [],
  {},
  true,
  [1, "a"],
  { type: 7 },
];

/** Every object or array inside `value` with the key or index that holds it (the root excluded). */
function slots(
  value: unknown,
  out: { parent: Record<string, unknown> | unknown[]; key: string | number }[] = [],
) {
  if (Array.isArray(value)) {
    value.forEach((item, i) => {
      out.push({ parent: value, key: i });
      slots(item, out);
    });
  } else if (value && typeof value === "object") {
    for (const [k, item] of Object.entries(value)) {
      out.push({ parent: value as Record<string, unknown>, key: k });
      slots(item, out);
    }
  }
  return out;
}

/** Mangle `value` in place: `n` random fields deleted or given a value of another type. */
function mangle(value: unknown, r: ReturnType<typeof seeded>, n: number): void {
  const all = slots(value);
  for (let i = 0; i < n && all.length > 0; i++) {
    const { parent, key } = all[r.int(all.length)]!;
    if (r.next() < 0.3 && !Array.isArray(parent)) delete (parent as Record<string, unknown>)[key as string];
    else (parent as Record<string | number, unknown>)[key] = structuredClone(WRONG[r.int(WRONG.length)]);
  }
}

/** The corpus files of each agent that an import reads (transcripts; OpenCode's exports and rows). */
function corpusFiles(): { agent: Agent; file: string }[] {
  const out: { agent: Agent; file: string }[] = [];
  for (const agent of ["claude", "codex", "gemini", "opencode"] as const) {
    const glob = new Bun.Glob(agent === "opencode" ? "**/reconstructed_export/*.json" : "**/*.json{,l}");
    for (const f of glob.scanSync(join(CORPUS, agent))) {
      if (!f.endsWith(".meta.json")) out.push({ agent, file: join(CORPUS, agent, f) });
    }
  }
  // OpenCode's row dump: a folder of JSONL tables, imported as one source.
  for (const f of new Bun.Glob("**/rows/session.jsonl").scanSync(join(CORPUS, "opencode")))
    out.push({ agent: "opencode", file: dirname(join(CORPUS, "opencode", f)) });
  return out.sort((a, b) => a.file.localeCompare(b.file));
}

/** A mangled copy of `file` under `dir` (same name and relative folders, so formats are told apart as before). */
function mangledCopy(agent: Agent, file: string, dir: string, seed: number): string {
  const r = seeded(seed);
  const out = join(dir, agent, relative(join(CORPUS, agent), file));
  if (statSync(file).isDirectory()) {
    // A row dump: every table mangled line by line, the folder imported as one source.
    for (const name of readdirSync(file)) mangleFile(join(file, name), join(out, name), r);
    return out;
  }
  mangleFile(file, out, r);
  return out;
}

/** Write a mangled copy of one transcript or document (a `.meta.json` beside it copied as it is). */
function mangleFile(file: string, out: string, r: ReturnType<typeof seeded>): void {
  mkdirSync(dirname(out), { recursive: true });
  const meta = file.replace(/\.jsonl$/, ".meta.json");
  if (meta !== file) {
    try {
      copyFileSync(meta, out.replace(/\.jsonl$/, ".meta.json"));
    } catch {}
  }
  const text = readFileSync(file, "utf8");
  if (file.endsWith(".jsonl")) {
    const lines = text.split("\n").filter(Boolean);
    const mangled = lines.map((line) => {
      const roll = r.next();
      if (roll < 0.03) return line.slice(0, r.int(line.length)); // cut short
      if (roll > 0.25) return line;
      const value = JSON.parse(line);
      mangle(value, r, 1 + r.int(3));
      return JSON.stringify(value);
    });
    writeFileSync(out, `${mangled.join("\n")}\n`);
  } else {
    const value = JSON.parse(text);
    mangle(value, r, 3 + r.int(12));
    writeFileSync(out, JSON.stringify(value));
  }
}

test("mangled transcripts of every agent import without throwing, and what they store is sound", async () => {
  const files = corpusFiles();
  expect(files.length).toBeGreaterThanOrEqual(12);
  let sessions = 0;
  for (let seed = 1; seed <= Number(process.env.MANGLE_SEEDS ?? 8); seed++) {
    for (const { agent, file } of files) {
      const where = `seed ${seed} ${agent} ${basename(file)}`;
      const dir = join(work, `${seed}-${sessions}`);
      const path = mangledCopy(
        agent,
        file,
        dir,
        seed * 1000 + files.indexOf(files.find((f) => f.file === file)!),
      );
      const home = join(dir, "home");
      const { adapter } = await openStore("memory", { home });
      let report: Awaited<ReturnType<typeof importSources>> | undefined;
      try {
        report = await importSources({ agent, paths: [path], adapter, home, fsync: false });
      } catch (error) {
        throw new Error(`${where}: import threw: ${(error as Error).stack}`);
      }
      expect([where, report.sources.length]).toEqual([where, 1]);
      // A key like `__proto__` in a transcript must never reach the prototype every object shares.
      expect([where, Object.keys(Object.prototype)]).toEqual([where, []]);
      // Bad entries are skipped and counted; a whole source is never lost to them.
      // (A whole document says what it is, and holds its messages, in a key or two: with those
      // mangled it may not be told, or hold nothing.)
      const unknownDocument = /not a transcript|not an OpenCode export/;
      const lost = report.sources[0]!.warnings.filter(
        (w) =>
          (/^not imported/.test(w.message) || unknownDocument.test(w.message)) &&
          !(file.endsWith(".json") && unknownDocument.test(w.message)),
      );
      expect([where, lost]).toEqual([where, []]);
      // A line-level mangle leaves most of a transcript; a whole document may lose its message list.
      if (file.endsWith(".jsonl"))
        expect([where, report.sources[0]!.sessions.created]).not.toEqual([where, 0]);
      const { items } = await adapter.listSessions({ all: true });
      for (const meta of items) {
        const id = meta.id;
        const messages = await adapter.readMessages(id);
        expect([where, id, messages.issues]).toEqual([where, id, []]);
        for await (const read of adapter.readEvents(id)) {
          expect([where, id, read.issue]).toEqual([where, id, undefined]);
          const valid = v.safeParse(RolloutEventSchema, read.event);
          expect([where, id, valid.success || v.summarize(valid.issues)]).toEqual([where, id, true]);
        }
        const trace = await loadTrace({ adapter, sessionId: id });
        const replay = await loadReplay({ adapter, sessionId: id });
        expect(() => JSON.stringify([trace, replay])).not.toThrow();
        sessions++;
      }
      await adapter.close();
    }
  }
  expect(sessions).toBeGreaterThan(50);
}, 120_000);

test("ids like __proto__ and constructor are ids like any other: paired, stored, and the shared prototype untouched", async () => {
  const dir = join(work, "proto");
  const path = join(dir, "claude", "proto.jsonl");
  mkdirSync(dirname(path), { recursive: true });
  const base = { sessionId: "5e2d9a52-5c3e-4c55-9a0b-7f2d0c5a1b11", cwd: "/w", version: "2.1.0" };
  const at = (s: number) => `2026-01-01T00:00:0${s}.000Z`;
  const lines = [
    { ...base, type: "user", uuid: "__proto__", timestamp: at(1), message: { role: "user", content: "go" } },
    ...["__proto__", "constructor", "toString"].map((id, i) => ({
      ...base,
      type: "assistant",
      uuid: `a${i}`,
      timestamp: at(2 + i),
      message: {
        id: `msg_${i}`,
        role: "assistant",
        model: "claude-x",
        content: [{ type: "tool_use", id, name: id, input: { file_path: "x" } }],
        usage: { input_tokens: 1, output_tokens: 1 },
      },
    })),
    ...["__proto__", "constructor", "toString"].map((id, i) => ({
      ...base,
      type: "user",
      uuid: `r${i}`,
      timestamp: at(5 + i),
      message: { role: "user", content: [{ type: "tool_result", tool_use_id: id, content: "ok" }] },
    })),
  ];
  writeFileSync(path, lines.map((l) => `${JSON.stringify(l)}\n`).join(""));
  const home = join(dir, "home");
  const { adapter } = await openStore("memory", { home });
  const report = await importSources({ agent: "claude", paths: [path], adapter, home, fsync: false });
  expect(Object.keys(Object.prototype)).toEqual([]);
  expect(report.sources[0]!.warnings).toEqual([]);
  const id = (await adapter.listSessions({ all: true })).items[0]!.id;
  const trace = await loadTrace({ adapter, sessionId: id });
  expect(trace.toolSpans.map((t) => [t.tool, t.callId, t.failed])).toEqual([
    ["__proto__", "__proto__", false],
    ["constructor", "constructor", false],
    ["toString", "toString", false],
  ]);
  expect(trace.pendingCalls).toEqual([]);
  const messages = (await adapter.readMessages(id)).messages;
  expect(messages[0]!.id).toBe("__proto__");
  await adapter.close();
});
