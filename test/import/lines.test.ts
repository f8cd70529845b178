/**
 * The importer's block reader yields exactly the lines of `util/lines.ts`'s streaming reader: the
 * same text, numbers and byte offsets, on every real JSONL transcript of the corpus and on the edge
 * cases (blank and CRLF lines, byte-order marks, a torn last line, lines longer than a block, a
 * start in the middle of the file, invalid UTF-8).
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { jsonlLines } from "../../src/import/lines.ts";
import { type Line, readLines } from "../../src/util/lines.ts";
import { CORPUS, tempDir } from "../_helpers.ts";

async function streamed(path: string, fromOffset = 0, firstLineNo = 1): Promise<Line[]> {
  const out: Line[] = [];
  for await (const line of readLines(path, { fromOffset, firstLineNo })) out.push(line);
  return out;
}

function jsonlFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".jsonl"))
    .map((f) => join(dir, f))
    .filter((f) => statSync(f).isFile());
}

describe("importer line reader", () => {
  test("same lines as readLines on every corpus transcript", async () => {
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
});
