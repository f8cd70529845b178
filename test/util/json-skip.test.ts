/**
 * Leaving fields out before parsing (`util/json-skip.ts`): a run parsed with a skip gives what a
 * plain parse gives, except that each skipped value reads empty (`""`, `{}`, `[]`) — on edge cases
 * (escaped quotes and backslashes, a key nested inside another field, lines in another order, a
 * value cut short, members kept by another field, a rule switched off) and on random files and
 * calls (JSON_SKIP_SEEDS) — and the reader's buffer is left exactly as it was read.
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

  test("another field decides what of a value to keep; a rule switched off", async () => {
    await using dir = await tempDir();
    let on = true;
    const keep = new Map<string, ReadonlySet<string> | "all">([
      ["Write", new Set(["file_path"])],
      ["Patch", "all"],
    ]);
    const skip = new FieldSkip([
      {
        lineStart: '{"type":"function.call",',
        field: "args",
        keep: { field: "tool", by: (tool) => keep.get(tool) },
        active: () => on,
      },
    ]);
    const args = {
      file_path: "f.ts",
      content: "c".repeat(600),
      n: [1, { d: "}" }],
      ok: true,
      x: null,
      e: {},
    };
    const call = (head: Record<string, unknown>, tail: Record<string, unknown> = {}) =>
      JSON.stringify({ type: "function.call", seq: 1, ...head, args, ...tail });
    const membersOnly = { file_path: "f.ts", content: "", n: [], ok: true, x: null, e: {} };
    const cases: [string, unknown][] = [
      [call({ tool: "Bash" }), {}], // not listed: the whole value
      [call({ tool: "Write" }), membersOnly], // listed: its path kept, the rest left out
      [call({ tool: "Patch" }), args], // "all": whole
      [call({}, { tool: "Bash" }), args], // the deciding field after the value: whole
      [call({ meta: { a: 1, tool: "Bash" }, tool: "Write" }), args], // the first "tool" nested: whole
      [call({ tool: "W\\u0072ite" }), args], // an escaped name: whole
      [
        JSON.stringify({ type: "function.call", tool: "Write", args: ["a", "b".repeat(600)] }),
        ["a", "b".repeat(600)],
      ],
      [
        '{"type":"function.call","tool":"Write","args":{ "file_path" : "g.ts" , "content" : "' +
          "z".repeat(600) +
          '" , "k" : 12 }}',
        { file_path: "g.ts", content: "", k: 12 },
      ],
    ];
    const text = `${cases.map(([line]) => line).join("\n")}\n`;
    const argsOf = (seen: Seen[]) => seen.map((x) => (x.value as { args: unknown }).args);
    expect(argsOf(read(dir.path, text, skip))).toEqual(cases.map(([, want]) => want));
    on = false;
    expect(argsOf(read(dir.path, text, skip))).toEqual(argsOf(read(dir.path, text)));
  });

  test("random calls (JSON_SKIP_SEEDS): the kept members as parsed, the others empty, the rest of the line as parsed", async () => {
    await using dir = await tempDir();
    const keep = new Map<string, ReadonlySet<string> | "all">([
      ["Write", new Set(["file_path", "path"])],
      ["Patch", "all"],
    ]);
    const skip = new FieldSkip([
      {
        lineStart: '{"type":"function.call",',
        field: "args",
        keep: { field: "tool", by: (t) => keep.get(t) },
      },
    ]);
    const empty = (v: unknown) =>
      v === "" ||
      (Array.isArray(v)
        ? v.length === 0
        : typeof v === "object" && v !== null && Object.keys(v).length === 0);
    const seeds = Number(process.env.JSON_SKIP_SEEDS) || 100;
    const alphabet = ['"', "\\", "a", " ", ",", ":", "{", "}", "[", "]", "é", "😀", "path"];
    for (let seed = 1; seed <= seeds; seed++) {
      const r = seeded(seed);
      const str = () => Array.from({ length: r.int(10) }, () => r.pick(alphabet)).join("");
      const value = (depth: number): unknown => {
        const k = r.int(depth > 1 ? 4 : 6);
        if (k === 0) return r.int(100);
        if (k === 1) return r.pick([true, false, null]);
        if (k < 4) return str();
        if (k === 4) return Array.from({ length: r.int(3) }, () => value(depth + 1));
        return Object.fromEntries(Array.from({ length: r.int(3) }, () => [str(), value(depth + 1)]));
      };
      const lines: string[] = [];
      for (let i = 0, n = 8 + r.int(20); i < n; i++) {
        const args = Object.fromEntries(
          Array.from({ length: 1 + r.int(5) }, () => [
            r.pick(["file_path", "path", "content", str()]),
            value(0),
          ]),
        );
        lines.push(
          JSON.stringify({
            type: "function.call",
            tool: r.pick(["Write", "Bash", "Patch", str()]),
            args,
            pad: "p".repeat(MIN_LINE_BYTES),
          }),
        );
      }
      const text = `${lines.join("\n")}\n`;
      const plain = read(dir.path, text);
      const seen = read(dir.path, text, skip, 1024 * 1024);
      for (const [i, x] of seen.entries()) {
        const want = plain[i]!.value as { tool: string; args: Record<string, unknown> };
        const got = x.value as typeof want;
        const { args: a, ...rest } = got;
        const { args: b, ...wantRest } = want;
        expect({ seed, i, rest }).toEqual({ seed, i, rest: wantRest });
        // A tool name written with an escape decides nothing: the line is parsed whole.
        const rule = JSON.stringify(want.tool).includes("\\") ? "all" : keep.get(want.tool);
        if (rule === "all") expect(a).toEqual(b);
        else if (rule === undefined) expect(empty(a)).toBe(true);
        else
          for (const [k, v] of Object.entries(b)) {
            // A key written with an escape is kept (it may spell a kept one).
            const kept = rule.has(k) || JSON.stringify(k).includes("\\");
            if (kept || typeof v !== "object" || v === null) {
              if (typeof v !== "string" || kept) expect({ seed, i, k, v: a[k] }).toEqual({ seed, i, k, v });
              else expect({ seed, i, k, empty: a[k] === "" }).toEqual({ seed, i, k, empty: true });
            } else expect({ seed, i, k, empty: empty(a[k]) }).toEqual({ seed, i, k, empty: true });
          }
      }
    }
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
