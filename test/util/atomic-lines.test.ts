import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { writeFileAtomic, writeFileAtomicWith } from "../../src/util/atomic.ts";
import { type Line, readLines, splitLines } from "../../src/util/lines.ts";
import { tempDir } from "../_helpers.ts";

async function collect(path: string, fromOffset?: number): Promise<Line[]> {
  const out: Line[] = [];
  for await (const line of readLines(path, { fromOffset })) out.push(line);
  return out;
}

describe("writeFileAtomic", () => {
  test("replaces the file, leaves no temp file, creates it 0600 in a 0700 directory", async () => {
    await using dir = await tempDir();
    const path = join(dir.path, "sub", "f.json");
    writeFileAtomic(path, "one");
    writeFileAtomic(path, "two");
    expect(readFileSync(path, "utf8")).toBe("two");
    expect(readdirSync(join(dir.path, "sub"))).toEqual(["f.json"]);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir.path, "sub")).mode & 0o777).toBe(0o700);
  });

  test("a file written in pieces: text of any size and bytes, as one string would be", async () => {
    await using dir = await tempDir();
    const path = join(dir.path, "big.txt");
    const pieces: (string | Uint8Array)[] = [];
    for (let i = 0; i < 5000; i++) pieces.push(i % 97 === 0 ? "é✓🚀".repeat(i) : `${i},`);
    pieces.push("x".repeat(700_000), new Uint8Array([104, 105]), "z".repeat(2_000_000), "end");
    writeFileAtomicWith(path, (write) => {
      for (const p of pieces) write(p);
    });
    const expected = Buffer.concat(pieces.map((p) => (typeof p === "string" ? Buffer.from(p) : p)));
    expect(readFileSync(path).equals(expected)).toBe(true);
  });

  test("a producer that throws leaves the old file as it was, and no temp file", async () => {
    await using dir = await tempDir();
    const path = join(dir.path, "f.json");
    writeFileAtomic(path, "old");
    expect(() =>
      writeFileAtomicWith(path, (write) => {
        write("x".repeat(3_000_000)); // past a gathered MiB: some of it reached the temp file
        throw new Error("boom");
      }),
    ).toThrow("boom");
    expect(readFileSync(path, "utf8")).toBe("old");
    expect(readdirSync(dir.path)).toEqual(["f.json"]);
  });
});

describe("readLines", () => {
  test("yields lines with numbers and byte offsets; a final line without newline is torn", async () => {
    await using dir = await tempDir();
    const path = join(dir.path, "a.jsonl");
    writeFileSync(path, '{"a":1}\n\n{"b":"é"}\n{"c":');
    const lines = await collect(path);
    expect(lines.map((l) => [l.text, l.lineNo, l.torn])).toEqual([
      ['{"a":1}', 1, false],
      ['{"b":"é"}', 3, false],
      ['{"c":', 4, true],
    ]);
    expect(lines[1]!.start).toBe(9);
    expect(lines[1]!.end).toBe(9 + Buffer.byteLength('{"b":"é"}\n'));
    const tail = await collect(path, lines[1]!.end);
    expect(tail.map((l) => l.text)).toEqual(['{"c":']);
  });

  test("lines spanning stream chunks are joined (multi-MB file)", async () => {
    await using dir = await tempDir();
    const path = join(dir.path, "big.jsonl");
    const row = (i: number) => JSON.stringify({ i, pad: "x".repeat(i % 1000), u: "✓" });
    const rows = Array.from({ length: 5000 }, (_, i) => row(i));
    writeFileSync(path, `${rows.join("\n")}\n`);
    const lines = await collect(path);
    expect(lines.length).toBe(5000);
    expect(lines.every((l, i) => l.text === rows[i] && !l.torn)).toBe(true);
  });

  test("splitLines handles CRLF and a missing final newline", () => {
    expect(splitLines("a\r\nb\n\nc").map((l) => [l.text, l.lineNo, l.torn])).toEqual([
      ["a", 1, false],
      ["b", 2, false],
      ["c", 4, true],
    ]);
  });
});
