/**
 * Parsing a run of lines in one call gives exactly what parsing each line on its own gives (the
 * values, the invalid lines with their text and error, line numbers and byte offsets), on every
 * corpus transcript, on edge cases, and on random files mixing good lines with blank, cut-short,
 * malformed and odd ones (JSON_LINES_SEEDS); the reader's buffer is left as it was read.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type JsonLineSink, parseRun } from "../../src/util/json-lines.ts";
import { lineRuns, lines } from "../../src/util/lines.ts";
import { CORPUS, tempDir } from "../_helpers.ts";
import { seeded } from "../_random.ts";

type Seen = { line: number; start: number; end: number; value?: unknown; text?: string; error?: string };

/** What a run-at-a-time read of `path` sees (`exact`: each line parsed on its own). */
function byRuns(path: string, runBytes: number, exact = false): Seen[] {
  const out: Seen[] = [];
  const sink: JsonLineSink = {
    value: (value, line, start, end) => out.push({ line, start, end, value }),
    invalid: (error, text, line, start, end) => out.push({ line, start, end, text, error: error.message }),
  };
  for (const item of lineRuns(path, { runBytes })) {
    if (item.kind !== "run") continue;
    const before = Buffer.from(item.buf.subarray(item.start - 1, item.nls[item.count - 1]! + 1));
    parseRun(item, sink, exact);
    expect(item.buf.subarray(item.start - 1, item.nls[item.count - 1]! + 1).equals(before)).toBe(true);
  }
  return out;
}

/** The reference: every complete line decoded and parsed on its own. */
function byLines(path: string): Seen[] {
  const out: Seen[] = [];
  for (const l of lines(path)) {
    if (l.torn) continue;
    try {
      out.push({ line: l.lineNo, start: l.start, end: l.end, value: JSON.parse(l.text) });
    } catch (e) {
      out.push({ line: l.lineNo, start: l.start, end: l.end, text: l.text, error: (e as Error).message });
    }
  }
  return out;
}

const RUN_SIZES = [1, 200, 32 * 1024, 1024 * 1024];

describe("parsing runs of lines", () => {
  test("every corpus transcript: the same as line by line, at every run size", () => {
    const files = readdirSync(CORPUS, { recursive: true, encoding: "utf8" })
      .filter((f) => f.endsWith(".jsonl"))
      .map((f) => join(CORPUS, f))
      .filter((f) => statSync(f).isFile());
    expect(files.length).toBeGreaterThanOrEqual(10);
    for (const f of files) {
      const want = byLines(f);
      for (const size of RUN_SIZES) expect(byRuns(f, size)).toEqual(want);
    }
  });

  test("edge cases: blank, CRLF and whitespace lines, BOMs, non-objects, a line cut short mid-file", async () => {
    await using dir = await tempDir();
    const path = join(dir.path, "edge.jsonl");
    const text = [
      '{"a":1}',
      '{"b":"x],[y"}\r',
      "",
      "   ",
      '\uFEFF{"c":2}',
      "[1,2]",
      '"str"',
      "null",
      '{"d":{"e":[1,{"f":"g"}]}}',
      '{"cut":"abc', // a write cut short, then more lines
      '{"after":true}',
      '{"h":1} ',
      "\r",
      '{"i":"\\u00e9\\n→"}',
      '{"torn":',
    ].join("\n");
    writeFileSync(path, text);
    const want = byLines(path);
    expect(want.filter((s) => s.error).map((s) => s.line)).toEqual([4, 10]);
    for (const size of RUN_SIZES) expect(byRuns(path, size)).toEqual(want);
  });

  test("random files: good lines mixed with blank, cut-short, malformed and odd ones (JSON_LINES_SEEDS, default 200)", async () => {
    await using dir = await tempDir();
    const seeds = Number(process.env.JSON_LINES_SEEDS) || 200;
    const good = () => ({ n: 1, s: 'é→\\"', list: [1, { x: null }], nested: { y: "],[" } });
    for (let seed = 1; seed <= seeds; seed++) {
      const r = seeded(seed);
      const out: string[] = [];
      for (let i = 0, n = 1 + r.int(60); i < n; i++) {
        const line = JSON.stringify({ ...good(), i, pad: "p".repeat(r.int(300)) });
        const kind = r.int(60); // a tenth odd: many runs of eight lines or more are all good
        if (kind === 0) out.push("");
        else if (kind === 1)
          out.push(line.slice(0, r.int(line.length))); // cut short
        else if (kind === 2) out.push(`${line}\r`);
        else if (kind === 3)
          out.push(r.pick(["  ", "\r", "}", "]", "{", ",", "[{", "1 2", '{"a":1},{"b":2}']));
        else if (kind === 4) out.push(`\uFEFF${line}`);
        else if (kind === 5) out.push(String(r.int(100)));
        else out.push(line);
      }
      const path = join(dir.path, `r${seed}.jsonl`);
      writeFileSync(path, out.join("\n") + (r.chance(0.5) ? "\n" : ""));
      const want = byLines(path);
      for (const size of [1, 1 + r.int(4000), 32 * 1024])
        expect({ seed, size, got: byRuns(path, size) }).toEqual({ seed, size, got: want });
    }
  });

  test("lines made to cancel out (one split, one joined) fool the one-call parse; exact reads each line", async () => {
    await using dir = await tempDir();
    const path = join(dir.path, "crafted.jsonl");
    const rest = Array.from({ length: 6 }, (_, i) => `{"d":${i}}`);
    writeFileSync(path, `${['{"a":[{}', "{}]}", '{"b":1},{"c":2}', ...rest].join("\n")}\n`);
    const want = byLines(path);
    expect(want.filter((s) => s.error).map((s) => s.line)).toEqual([1, 2, 3]);
    expect(byRuns(path, 1024, true)).toEqual(want);
    // The known limit, documented in util/json-lines.ts: a run of nine lines parsed in one call
    // gives nine values, none of them an error.
    expect(byRuns(path, 1024).filter((s) => s.error)).toEqual([]);
  });
});
