/** The batch JSONL reader: line numbers, bad and torn lines, chunk boundaries, offsets. */
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { readJsonl } from "../../src/rollout/_jsonl.ts";
import { splitLines } from "../../src/util/lines.ts";
import { tempDir } from "../_helpers.ts";

async function readAll(path: string, fromOffset?: number) {
  const values: unknown[] = [];
  const lines: number[] = [];
  const issues: { line?: number; torn: boolean; message: string }[] = [];
  const position = await readJsonl(
    path,
    { fromOffset },
    {
      value(v, line) {
        values.push(v);
        lines.push(line);
      },
      issue: (i) => issues.push(i),
    },
  );
  return { values, lines, issues, end: position.endOffset };
}

describe("readJsonl", () => {
  test("blank lines, a bad line, a value followed by garbage, a torn last line", async () => {
    await using dir = await tempDir();
    const file = join(dir.path, "e.jsonl");
    writeFileSync(file, '{"a":1}\n\n  \n{"b":"é"}\n{bad\n{"c":3} trailing\n[4]\r\n{"d":5}\n{"torn":');
    const r = await readAll(file);
    expect(r.values).toEqual([{ a: 1 }, { b: "é" }, [4], { d: 5 }]);
    expect(r.lines).toEqual([1, 4, 7, 8]);
    expect(r.issues.map((i) => [i.line, i.torn])).toEqual([
      [5, false],
      [6, false],
      [9, true],
    ]);
    expect(r.end).toBe(
      Buffer.byteLength('{"a":1}\n\n  \n{"b":"é"}\n{bad\n{"c":3} trailing\n[4]\r\n{"d":5}\n'),
    );
  });

  test("lines spanning 512 KiB chunk boundaries match a plain split, line numbers included", async () => {
    await using dir = await tempDir();
    const file = join(dir.path, "big.jsonl");
    const rows: string[] = [];
    for (let i = 0; i < 6000; i++) rows.push(JSON.stringify({ i, pad: "x".repeat((i * 37) % 900), u: "✓é" }));
    rows[3001] = "not json";
    const text = `${rows.join("\n")}\n`;
    writeFileSync(file, text);
    const r = await readAll(file);
    const expected = splitLines(text).filter((l) => l.text !== "not json");
    expect(r.values).toEqual(expected.map((l) => JSON.parse(l.text)));
    expect(r.lines).toEqual(expected.map((l) => l.lineNo));
    expect(r.issues.map((i) => i.line)).toEqual([3002]);
    expect(r.end).toBe(Buffer.byteLength(text));
  });

  test("ASCII chunks (parsed as bytes) and non-ASCII chunks (parsed as text) report alike", async () => {
    // Regions with a non-ASCII byte are decoded before parsing: error offsets are then UTF-16
    // units, and must still come out as the same line numbers, messages and byte offsets.
    await using dir = await tempDir();
    const lines = ['{"a":"X"}', "", '{"b":"XX"} junk', "{bad X", '{"c":"X"}', "[1]", '{"d":3}'];
    const read = async (x: string) => {
      const file = join(dir.path, `${x.length}-${x.charCodeAt(0)}.jsonl`);
      const text = `${lines.map((l) => l.replaceAll("X", x)).join("\n")}\n`;
      writeFileSync(file, text);
      const r = await readAll(file);
      expect(r.end).toBe(Buffer.byteLength(text));
      return { ...r, end: undefined, issues: r.issues.map((i) => [i.line, i.message]) };
    };
    const ascii = await read("x");
    expect(ascii.lines).toEqual([1, 5, 6, 7]);
    expect(ascii.issues.map(([line]) => line)).toEqual([3, 4]);
    for (const x of ["é", "✓", "😀"]) {
      const other = await read(x);
      expect(other.lines).toEqual(ascii.lines);
      expect(other.issues).toEqual(ascii.issues);
      expect(JSON.stringify(other.values).replaceAll(x, "x")).toBe(JSON.stringify(ascii.values));
    }
  });

  test("continues from an offset (how --follow reads only what was appended)", async () => {
    await using dir = await tempDir();
    const file = join(dir.path, "f.jsonl");
    writeFileSync(file, '{"a":1}\n{"b":2}\n{"c"');
    const first = await readAll(file);
    expect(first.values).toHaveLength(2);
    writeFileSync(file, '{"a":1}\n{"b":2}\n{"c":3}\n');
    const second = await readAll(file, first.end);
    expect(second.values).toEqual([{ c: 3 }]);
    expect(second.issues).toEqual([]);
  });
});
