/** Reading a line back by its offset: any order, long lines, a byte-order mark, a replaced or gone file. */
import { afterAll, expect, test } from "bun:test";
import { appendFileSync, mkdtempSync, renameSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FreecodeError } from "../../src/errors.ts";
import { LineAt } from "../../src/util/line-at.ts";
import { lines } from "../../src/util/lines.ts";

const dir = mkdtempSync(join(tmpdir(), "freecode-line-at-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A file of `texts` (one per line), and the offset each line starts at, as the line reader gives it. */
function fileOf(name: string, texts: string[], trailingNewline = true) {
  const path = join(dir, name);
  writeFileSync(path, texts.join("\n") + (trailingNewline ? "\n" : ""));
  return { path, offsets: [...lines(path)].map((l) => l.start) };
}

test("every line reads back by its offset, in any order, across blocks and past a long line", () => {
  const texts = Array.from({ length: 3000 }, (_, i) => `{"n":${i},"text":"${"é✓".repeat(i % 97)}"}`);
  texts[1234] = `{"long":"${"x".repeat(700 * 1024)}"}`; // longer than a block
  const { path, offsets } = fileOf("many.jsonl", texts);
  const at = new LineAt(path);
  const order = offsets.map((_, i) => i);
  for (const i of order) expect(at.at(offsets[i]!)).toBe(texts[i]!);
  for (const i of order.reverse()) expect(at.at(offsets[i]!)).toBe(texts[i]!);
  for (const i of [2999, 0, 1234, 17, 1235]) expect(at.at(offsets[i]!)).toBe(texts[i]!);
});

test("a last line without a newline, a byte-order mark and a carriage return read as the line reader reads them", () => {
  const { path, offsets } = fileOf("edges.jsonl", ['\ufeff{"a":1}', '{"b":2}\r', '{"c":3}'], false);
  const at = new LineAt(path);
  expect(JSON.parse(at.at(offsets[0]!))).toEqual({ a: 1 });
  expect(JSON.parse(at.at(offsets[1]!))).toEqual({ b: 2 });
  expect(at.at(offsets[2]!)).toBe('{"c":3}');
});

test("lines appended after are no matter; a file replaced or removed is an error, never another line", () => {
  const { path, offsets } = fileOf("log.jsonl", ['{"seq":1}', '{"seq":2}']);
  const at = new LineAt(path);
  appendFileSync(path, '{"seq":3}\n');
  expect(at.at(offsets[1]!)).toBe('{"seq":2}');
  // An atomic rewrite puts another file at the path.
  writeFileSync(`${path}.tmp`, '{"seq":9}\n{"seq":8}\n');
  renameSync(`${path}.tmp`, path);
  const replaced = new LineAt(path); // made after: reads the new file
  expect(replaced.at(offsets[1]!)).toBe('{"seq":8}');
  const fresh = () => new LineAt(path).at(0);
  expect(fresh()).toBe('{"seq":9}');
  expect(() => at.at(offsets[0]! + 1_000_000)).toThrow(/another file is at its path now/);
  try {
    at.at(offsets[0]!);
    throw new Error("read a replaced file");
  } catch (error) {
    expect(error).toBeInstanceOf(FreecodeError);
    expect((error as FreecodeError).code).toBe("conflict");
  }
  unlinkSync(path);
  expect(() => replaced.at(0)).toThrow(/is gone now/);
});

test("readers of different files take turns with the one block", () => {
  const a = fileOf("turn-a.jsonl", ["a0", "a1", "a2"]);
  const b = fileOf("turn-b.jsonl", ["b0", "b1"]);
  const [ra, rb] = [new LineAt(a.path), new LineAt(b.path)];
  const got = [ra.at(a.offsets[1]!), rb.at(b.offsets[1]!), ra.at(a.offsets[2]!), rb.at(b.offsets[0]!)];
  expect(got).toEqual(["a1", "b1", "a2", "b0"]);
});

test("bytes a reader just read seed the block: their lines read back without the file; a large block is not kept", () => {
  const texts = Array.from({ length: 50 }, (_, i) => `{"n":${i},"s":"${"ü".repeat(i)}"}`);
  const { path, offsets } = fileOf("seeded.jsonl", texts);
  const at = new LineAt(path);
  const seen: [Buffer, number][] = [];
  for (const _ of lines(path, { onBlock: (bytes, offset) => seen.push([Buffer.from(bytes), offset]) }));
  expect(seen.map(([, offset]) => offset)).toEqual([0]);
  at.seed(seen[0]![0], 0);
  unlinkSync(path); // the block holds what was read: no read of the file is needed
  for (const i of [49, 0, 17]) expect(at.at(offsets[i]!)).toBe(texts[i]!);

  const big = fileOf("unseeded.jsonl", [`{"x":"${"y".repeat(300 * 1024)}"}`, '{"n":1}']);
  const other = new LineAt(big.path);
  other.seed(Buffer.alloc(300 * 1024, 32), 0); // larger than a block: ignored, read from the file
  expect(other.at(big.offsets[1]!)).toBe('{"n":1}');
});
