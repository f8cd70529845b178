/**
 * Leaving fields out before parsing (`util/json-skip.ts`): a run parsed with a skip gives what a
 * plain parse gives, except that each skipped string reads as `""` — on edge cases (escaped quotes
 * and backslashes, a key nested inside another field, lines in another order, a value cut short)
 * and on random files (JSON_SKIP_SEEDS) — and the reader's buffer is left exactly as it was read.
 */
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { type JsonLineSink, parseRun } from "../../src/util/json-lines.ts";
import { FieldSkip, MIN_LINE_BYTES } from "../../src/util/json-skip.ts";
import { lineRuns } from "../../src/util/lines.ts";
import { tempDir } from "../_helpers.ts";
import { seeded } from "../_random.ts";

const OUTPUTS = new FieldSkip([{ lineStart: '{"type":"function.output",', field: "output" }]);

type Seen = { line: number; value?: unknown; error?: boolean };

/** What a read of `text` sees, with or without the skip; checks the buffer is put back. */
function read(dir: string, text: string, skip?: FieldSkip, runBytes = 16 * 1024): Seen[] {
  const path = join(dir, `log-${Math.random().toString(36).slice(2)}.jsonl`);
  writeFileSync(path, text);
  const out: Seen[] = [];
  const sink: JsonLineSink = {
    value: (value, line) => out.push({ line, value }),
    invalid: (_error, _text, line) => out.push({ line, error: true }),
  };
  for (const item of lineRuns(path, { runBytes })) {
    if (item.kind !== "run") continue;
    const before = Buffer.from(item.buf.subarray(item.start - 1, item.nls[item.count - 1]! + 1));
    parseRun(item, sink, false, skip);
    expect(item.buf.subarray(item.start - 1, item.nls[item.count - 1]! + 1).equals(before)).toBe(true);
  }
  return out;
}

/** Where the JSON string opening at `open` of `text` ends (its closing quote), or -1. */
function stringEnd(text: string, open: number): number {
  for (let i = open + 1; i < text.length; i++) {
    if (text[i] === "\\") i++;
    else if (text[i] === '"') return i;
  }
  return -1;
}

/** Where the object or array opening at `open` of `text` ends (its closing bracket), or -1. */
function bracketEnd(text: string, open: number): number {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      i = stringEnd(text, i);
      if (i < 0) return -1;
    } else if (c === "{" || c === "[") depth++;
    else if ((c === "}" || c === "]") && --depth === 0) return i;
  }
  return -1;
}

/**
 * What a skipping read must give, worked out on the text: in each line that starts with the rule's
 * start and is at least MIN_LINE_BYTES long, the first `,"output":` from there has its value (a
 * string, object or array) made empty, and the line is parsed; other lines as a plain read saw them.
 */
function expected(plain: Seen[], lines: string[]): Seen[] {
  const START = '{"type":"function.output",';
  return plain.map((s) => {
    const raw = lines[s.line - 1]!;
    if (s.error || !raw.startsWith(START) || Buffer.byteLength(raw) < MIN_LINE_BYTES) return s;
    const at = raw.indexOf(',"output":', START.length - 1);
    if (at < 0) return s;
    const open = at + ',"output":'.length;
    const first = raw[open];
    const end =
      first === '"' ? stringEnd(raw, open) : first === "{" || first === "[" ? bracketEnd(raw, open) : -1;
    if (end < 0) return s;
    const empty = first === '"' ? '""' : first === "{" ? "{}" : "[]";
    return { ...s, value: JSON.parse(`${raw.slice(0, open)}${empty}${raw.slice(end + 1)}`) };
  });
}

/** A function.output line, long enough to be looked at unless `short`. */
const ev = (fields: Record<string, unknown>, short = false) =>
  JSON.stringify({
    type: "function.output",
    seq: 1,
    ...fields,
    ...(short ? {} : { pad: "p".repeat(MIN_LINE_BYTES) }),
  });

describe("skipping fields before the parse", () => {
  test("outputs read as empty strings; everything else as parsed; the bytes put back", async () => {
    await using dir = await tempDir();
    const tricky = [
      "plain text",
      'a "quoted" word',
      "ends in a backslash \\",
      'backslash then quote \\"',
      'three backslashes \\\\\\" and more',
      "unicode ✓ é 日本 \u0001 control, escaped",
      "",
      ',"output":"looks like a key',
    ];
    const lines = [
      ...tricky.map((output, i) => ev({ callId: `c${i}`, output, failed: i % 2 === 0, duration_ms: i })),
      JSON.stringify({ type: "function.call", seq: 2, tool: "Bash", args: { output: "kept" } }),
      JSON.stringify({ seq: 3, type: "function.output", output: "type not first: parsed whole" }),
      JSON.stringify({
        type: "function.output",
        output: "right after the type",
        seq: 4,
        pad: "p".repeat(600),
      }),
      ev({ output: { not: "a string" }, callId: "obj" }),
      ev({ meta: { output: "nested first" }, output: "then the field" }),
      ev({ output: "a short line: parsed whole" }, true),
    ];
    // Enough lines for one run to be parsed in one call (and line by line with tiny runs).
    const text = `${[...lines, ...lines].join("\n")}\n`;
    for (const runBytes of [1, 16 * 1024]) {
      const plain = read(dir.path, text);
      const skipped = read(dir.path, text, OUTPUTS, runBytes);
      if (runBytes === 1)
        expect(skipped).toEqual(plain); // runs of one line are parsed whole
      else expect(skipped).toEqual(expected(plain, text.split("\n")));
    }
    const { pad: _, ...first } = read(dir.path, text, OUTPUTS)[2]!.value as Record<string, unknown>;
    expect(first).toEqual({
      type: "function.output",
      seq: 1,
      callId: "c2",
      output: "",
      failed: true,
      duration_ms: 2,
    });
  });

  test("a value that does not end in its line is left alone (and the line's error is a plain parse's)", async () => {
    await using dir = await tempDir();
    const good = ev({ output: "fine", callId: "a" });
    const cut = '{"type":"function.output","seq":1,"output":"no end';
    const text = `${[good, good, good, good, cut, good, good, good, good].join("\n")}\n`;
    expect(read(dir.path, text, OUTPUTS)).toEqual(read(dir.path, text));
  });

  test("blank twice without a restore is refused", async () => {
    await using dir = await tempDir();
    const path = join(dir.path, "twice.jsonl");
    writeFileSync(path, `${ev({ output: "x" })}\n`);
    const skip = new FieldSkip([{ lineStart: '{"type":"function.output",', field: "output" }]);
    for (const item of lineRuns(path, { runBytes: 1024 })) {
      if (item.kind !== "run") continue;
      expect(skip.blank(item)).toBe(true);
      expect(() => skip.blank(item)).toThrow("before restore");
      skip.restore();
      expect(item.buf.toString("utf8", item.start, item.nls[0])).toBe(ev({ output: "x" }));
    }
  });

  test("a rule held back by another field, or switched off", async () => {
    await using dir = await tempDir();
    const tools = new Set(["Write"]);
    let on = true;
    const skip = new FieldSkip([
      {
        lineStart: '{"type":"function.call",',
        field: "args",
        unless: { field: "tool", values: tools },
        active: () => on,
      },
    ]);
    const call = (head: Record<string, unknown>, tail: Record<string, unknown> = {}) =>
      JSON.stringify({
        type: "function.call",
        seq: 1,
        ...head,
        args: { content: "c".repeat(600), n: [1, { d: "}" }] },
        ...tail,
      });
    const lines = [
      call({ tool: "Bash" }), // blanked
      call({ tool: "Write" }), // a listed tool: whole
      call({}, { tool: "Bash" }), // the tool after the arguments: whole
      call({ meta: { tool: "Bash" }, tool: "Write" }), // the first "tool" is nested: whole
      call({ tool: "W\u0072ite" }), // an escaped name: whole
      call({ tool: "Bash", x: "y" }), // blanked
      call({ tool: "Read" }), // blanked
      call({ tool: "Write" }), // whole
    ];
    const text = `${lines.join("\n")}\n`;
    const argsOf = (seen: Seen[]) =>
      seen.map((x) => JSON.stringify((x.value as { args: unknown }).args).length);
    const whole = argsOf(read(dir.path, text));
    expect(argsOf(read(dir.path, text, skip))).toEqual(whole.map((n, i) => ([0, 5, 6].includes(i) ? 2 : n)));
    on = false;
    expect(argsOf(read(dir.path, text, skip))).toEqual(whole);
  });

  test("random files (JSON_SKIP_SEEDS, default 100): a skipping read = a plain one with outputs emptied", async () => {
    await using dir = await tempDir();
    const seeds = Number(process.env.JSON_SKIP_SEEDS) || 100;
    const alphabet = ['"', "\\", "a", " ", ",", ":", "{", "}", "é", "✓", "\n", "\u0000", "😀", "output"];
    for (let seed = 1; seed <= seeds; seed++) {
      const r = seeded(seed);
      const str = () => Array.from({ length: r.int(12) }, () => r.pick(alphabet)).join("");
      // Half the files hold a line cut short: its run is then parsed line by line, unskipped.
      const cut = seed % 2 === 0;
      const lines: string[] = [];
      for (let i = 0, n = 8 + r.int(60); i < n; i++) {
        const kind = r.int(cut ? 6 : 5);
        if (kind === 0) lines.push(JSON.stringify({ type: "model.request", seq: i, model: str() }));
        else if (kind === 1) lines.push(JSON.stringify({ seq: i, type: "function.output", output: str() }));
        else if (kind === 2) lines.push(ev({ output: str(), extra: { output: str() }, tail: str() }));
        else if (kind === 3)
          lines.push(ev({ output: { [str()]: [str(), { k: str() }], n: r.int(9) }, after: str() }));
        else if (kind === 5) lines.push(ev({ output: str() }).slice(0, 1 + r.int(40)));
        else
          lines.push(ev({ callId: str(), output: r.chance(0.1) ? r.int(9) : str(), failed: r.chance(0.5) }));
      }
      const text = `${lines.join("\n")}\n`;
      const plain = read(dir.path, text);
      const want = expected(plain, lines);
      // One run holds the whole file: with no bad line it is parsed in one call, skipping.
      const seen = read(dir.path, text, OUTPUTS, 1024 * 1024);
      if (!plain.some((x) => x.error)) expect({ seed, seen }).toEqual({ seed, seen: want });
      else expect({ seed, seen }).toEqual({ seed, seen: plain });
      // Small runs: each run skips or not, as a whole; every line reads one way or the other.
      const small = read(dir.path, text, OUTPUTS, 1 + r.int(2000));
      expect(small.length).toBe(plain.length);
      for (const [i, x] of small.entries()) expect([plain[i], want[i]]).toContainEqual(x);
    }
  });
});
