/**
 * The block line reader yields exactly the lines of a plain reference split (whole file in memory,
 * split on \n, each line decoded by `TextDecoder`): the same text, numbers and byte offsets, on
 * every real JSONL transcript of the corpus and on the edge cases (blank and CRLF lines, byte-order
 * marks, a torn last line, lines longer than a block, a start in the middle of the file, invalid
 * UTF-8); lines past `maxLineBytes` are skipped unread.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type Line, lines, readLines } from "../../src/util/lines.ts";
import { CORPUS, tempDir } from "../_helpers.ts";

const jsonlLines = (path: string, fromOffset = 0, firstLineNo = 1) =>
  lines(path, { fromOffset, firstLineNo });

/** The reference: the whole file's bytes split on \n, blank and \r-only lines skipped. */
async function streamed(path: string, fromOffset = 0, firstLineNo = 1): Promise<Line[]> {
  const bytes = new Uint8Array(await Bun.file(path).arrayBuffer());
  const decoder = new TextDecoder();
  const out: Line[] = [];
  let lineNo = firstLineNo - 1;
  let start = fromOffset;
  while (start < bytes.length) {
    const nl = bytes.indexOf(10, start);
    const end = nl === -1 ? bytes.length : nl;
    lineNo++;
    const blank = end === start || (end === start + 1 && bytes[start] === 13);
    if (!blank || nl === -1) {
      const text = decoder.decode(bytes.subarray(start, end));
      out.push({ text, lineNo, start, end: nl === -1 ? end : end + 1, torn: nl === -1 });
    }
    start = end + 1;
  }
  return out;
}

function jsonlFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".jsonl"))
    .map((f) => join(dir, f))
    .filter((f) => statSync(f).isFile());
}

describe("line reader", () => {
  test("same lines as the reference split on every corpus transcript", async () => {
    const files = jsonlFiles(CORPUS);
    expect(files.length).toBeGreaterThanOrEqual(10);
    for (const f of files) expect([...jsonlLines(f)]).toEqual(await streamed(f));
  });

  test("edge cases: blank, CRLF, BOM, invalid UTF-8, long lines, a torn tail, a start offset", async () => {
    await using dir = await tempDir();
    const long = `{"x":"${"é→".repeat(700_000)}"}`; // ~3.5 MB: longer than a read block
    const text = [
      '\uFEFF{"a":1}',
      "",
      '{"b":2}\r',
      "\r",
      long,
      '\uFEFF{"c":"\uFEFF"}',
      '{"d":"ok"}',
      '{"torn":',
    ].join("\n");
    const path = join(dir.path, "edge.jsonl");
    const bytes = Buffer.concat([Buffer.from(text), Buffer.from([0x7b, 0xc3, 0x28, 0xff])]);
    writeFileSync(path, bytes);
    const all = [...jsonlLines(path)];
    expect(all).toEqual(await streamed(path));
    expect(all.map((l) => l.lineNo)).toEqual([1, 3, 5, 6, 7, 8]);
    expect(all.at(-1)!.torn).toBe(true);
    expect(all.at(-1)!.end).toBe(bytes.length);
    for (const from of all) {
      expect([...jsonlLines(path, from.start, from.lineNo)]).toEqual(
        await streamed(path, from.start, from.lineNo),
      );
    }
    expect([...jsonlLines(path, bytes.length)]).toEqual([]);
  });

  test("two reads at the same time do not share the kept buffer", async () => {
    await using dir = await tempDir();
    const a = join(dir.path, "a.jsonl");
    const b = join(dir.path, "b.jsonl");
    writeFileSync(
      a,
      Array.from({ length: 3000 }, (_, i) => `{"a":${i},"pad":"${"x".repeat(900)}"}\n`).join(""),
    );
    writeFileSync(
      b,
      Array.from({ length: 3000 }, (_, i) => `{"b":${i},"pad":"${"y".repeat(700)}"}\n`).join(""),
    );
    for (const _ of jsonlLines(a)) break; // leaves a buffer to reuse
    const ga = jsonlLines(a);
    const gb = jsonlLines(b);
    const seen: string[] = [];
    for (;;) {
      const x = ga.next();
      const y = gb.next();
      if (x.done && y.done) break;
      if (!x.done) seen.push(x.value.text);
      if (!y.done) seen.push(y.value.text);
    }
    const expected = [...(await streamed(a)), ...(await streamed(b))].map((l) => l.text).sort();
    expect(seen.sort()).toEqual(expected);
  });

  test("breaking out of the loop closes the file", async () => {
    await using dir = await tempDir();
    const path = join(dir.path, "many.jsonl");
    writeFileSync(path, '{"n":1}\n'.repeat(1000));
    const before = readdirSync("/proc/self/fd").length;
    for (let i = 0; i < 50; i++) for (const _ of jsonlLines(path)) break;
    expect(readdirSync("/proc/self/fd").length).toBeLessThanOrEqual(before);
  });

  test("a line past maxLineBytes is yielded as tooLong without its text; the rest reads on", async () => {
    await using dir = await tempDir();
    const path = join(dir.path, "long.jsonl");
    const huge = `{"x":"${"y".repeat(3 * 1024 * 1024)}"}`;
    writeFileSync(path, `{"a":1}\n${huge}\n{"b":2}\n${huge}`);
    const got = [...lines(path, { maxLineBytes: 2 * 1024 * 1024 })];
    expect(
      got.map((l) => [l.lineNo, l.text.length > 100 ? "long" : l.text, l.tooLong ?? false, l.torn]),
    ).toEqual([
      [1, '{"a":1}', false, false],
      [2, "", true, false],
      [3, '{"b":2}', false, false],
      [4, "", true, true],
    ]);
    expect(got[1]!.start).toBe(8);
    expect(got[1]!.end).toBe(8 + huge.length + 1);
    expect(got[2]!.start).toBe(got[1]!.end);
    const all: Line[] = [];
    for await (const l of readLines(path)) all.push(l);
    expect(all.map((l) => l.text.length)).toEqual([7, huge.length, 7, huge.length]);
  });
});
