import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { FreecodeError } from "../../src/errors.ts";
import { loadCases } from "../../src/eval/load-cases.ts";
import { tempDir } from "../_helpers.ts";

/** Write a case file and return the error its loading raises. */
async function errorOf(name: string, text: string): Promise<FreecodeError> {
  await using dir = await tempDir();
  const file = join(dir.path, name);
  writeFileSync(file, text);
  try {
    loadCases([file]);
  } catch (error) {
    if (error instanceof FreecodeError) return error;
    throw error;
  }
  throw new Error("expected a bad_input error");
}

describe("case files", () => {
  test("YAML, multi-document, with lines for each case and expectation", async () => {
    await using dir = await tempDir();
    const file = join(dir.path, "a.yaml");
    writeFileSync(
      file,
      "id: one\nexpect:\n  - expectTool: read\n  - noHung: true\n---\nid: two\nexpectTool: edit\nexpectInArgs:\n  path: src\n",
    );
    const [one, two] = loadCases([dir.path]);
    expect(one!.id).toBe("one");
    expect(one!.line).toBe(1);
    expect(one!.expectations.map((e) => [e.name, e.line])).toEqual([
      ["expectTool", 3],
      ["noHung", 4],
    ]);
    expect(two!.line).toBe(6);
    expect(two!.expectations.map((e) => [e.name, e.line, e.label])).toEqual([
      ["expectTool", 7, "expectTool edit"],
      ["expectInArgs", 8, 'expectInArgs {"tool":"edit","args":{"path":"src"}}'],
    ]);
  });
  test("JSON lists, {cases: []} and JSONL", async () => {
    await using dir = await tempDir();
    writeFileSync(
      join(dir.path, "a.json"),
      JSON.stringify(
        {
          cases: [
            { id: "a", expectMaxTurns: 3 },
            { id: "b", expectTool: null },
          ],
        },
        null,
        2,
      ),
    );
    writeFileSync(
      join(dir.path, "b.jsonl"),
      '{"id":"c","forbidTools":["bash"]}\n\n{"id":"d","skip":"later"}\n',
    );
    const cases = loadCases([dir.path]);
    expect(cases.map((c) => [c.id, c.line])).toEqual([
      ["a", 4],
      ["b", 8],
      ["c", 1],
      ["d", 3],
    ]);
    expect(cases[1]!.expectations[0]!.name).toBe("expectNoTools");
  });
  test("a wrong field names file, line and field (YAML)", async () => {
    const e = await errorOf(
      "bad.yaml",
      "id: x\nexpect:\n  - expectTool: read\n  - expectSequence:\n      mode: inorder\n      steps: [read]\n",
    );
    expect(e.code).toBe("bad_input");
    expect(e.source).toMatchObject({ line: 5, field: "expect.1.expectSequence.mode" });
    expect(e.oneLine).toMatch(
      /bad\.yaml:5: invalid expectSequence: Invalid type: Expected .*"strict".*"inorder".*\(field expect\.1\.expectSequence\.mode\)/,
    );
  });
  test("regression: a wrong field inside a flow-style list or mapping names its own line (it named the line of `expect:`)", async () => {
    const cases: [string, number, string][] = [
      [
        "expect: [\n  { expectTool: { name: bash } },\n  { expectTool: { name: read, count: { min: -1 } } }\n]\n",
        4,
        "expect.1.expectTool.count.min",
      ],
      [
        "expect:\n  - expectTool: { name: bash }\n  - expectTool: {\n      name: read,   # the reader, {not: this}\n      count: { 'min': 2, max: -1 }\n    }\n",
        6,
        "expect.1.expectTool.count.max",
      ],
      [
        'expect:\n  [ {expectTool: {name: "a,b"}},\n    {expectTool: {name: x, count: {min: -3}}} ]\n',
        4,
        "expect.1.expectTool.count.min",
      ],
    ];
    // Single quotes (`''` a quote inside), anchors and tags before a collection.
    cases.push(
      [
        "expect:\n  - expectTool: {name: 'edit',\n     count: {min: -1}}\n",
        4,
        "expect.0.expectTool.count.min",
      ],
      [
        "expect: [\n  {forbidBashMatches: ['it''s', 'rm']},\n  {expectTool: {name: edit,\n     count: {min: -1}}}\n]\n",
        5,
        "expect.1.expectTool.count.min",
      ],
      [
        "expect: !!seq [\n  &t {expectTool: {name: edit,\n     count: {min: -1}}}\n]\n",
        4,
        "expect.0.expectTool.count.min",
      ],
    );
    for (const [body, line, field] of cases) {
      const e = await errorOf("flow.yaml", `id: x\n${body}`);
      expect([body, e.source]).toMatchObject([body, { line, field }]);
    }
    // A document on its `---` line, a stream of them, and one behind a tag or an anchor.
    const onMarker =
      '--- {"id": "a",\n "expect": [\n  {"expectTool": {"name": "edit",\n     "count": {"min": -1}}}]}\n--- {"id": "b", "expect": [{"noHung": true}]}\n';
    expect((await errorOf("m.yaml", onMarker)).source).toMatchObject({
      line: 4,
      field: "expect.0.expectTool.count.min",
    });
    // A marker's tag alone: the document starts on the next line (every field pointed at line 1).
    const tagged = "--- !!map\nid: b\nexpect:\n  - noHung: true\n  - ttft: { max: -1 }\n";
    expect((await errorOf("t.yaml", tagged)).source).toMatchObject({ line: 5 });
    for (const prop of ["!!map", "&doc"]) {
      const text = `${prop} {"id": "a",\n "expect": [\n  {"expectTool": {"name": "edit",\n     "count": {"min": -1}}}]}\n`;
      expect((await errorOf("p.yaml", text)).source).toMatchObject({ line: 4 });
    }
    // A document that is itself one flow mapping (JSON text in a .yaml file).
    const json =
      '{"id": "a",\n "expect": [\n  {"expectTool": {"name": "edit",\n     "count": {"min": -1}}}]}\n';
    expect((await errorOf("doc.yaml", json)).source).toMatchObject({
      line: 4,
      field: "expect.0.expectTool.count.min",
    });
  });
  test("a wrong field names file, line and field (JSON and JSONL)", async () => {
    const j = await errorOf(
      "bad.json",
      '[\n  {"id": "a", "expectMaxTurns": 3},\n  {"id": "b",\n   "expect": [{"expectTool": {"name": "x", "count": {"min": -1}}}]}\n]',
    );
    expect(j.source).toMatchObject({ line: 4, field: "1.expect.0.expectTool.count.min" });
    const l = await errorOf("bad.jsonl", '{"id":"a","expectMaxTurns":3}\n{"id":"b","expectMaxTurns":"3"}\n');
    expect(l.source).toMatchObject({ line: 2, field: "expectMaxTurns" });
  });
  test("a {cases} document whose cases are not a list is bad input, not a crash", async () => {
    for (const [name, text] of [
      ["a.json", '{"cases": {"id": "x"}}'],
      ["b.yaml", "cases: 3\n"],
    ]) {
      const e = await errorOf(name!, text!);
      expect([e.code, e.message, e.source?.field]).toEqual(["bad_input", "cases must be a list", "cases"]);
    }
  });
  test("regression: a misspelt key is named as the misspelling, not as the missing key it is", async () => {
    const e = await errorOf(
      "c.yaml",
      "id: x\nsessions: all\nprices: {m: {input: 1, outptu: 2}}\nexpect:\n  - noHung: true\n",
    );
    expect(e.message).toBe('invalid case: unknown field "outptu" (did you mean output?)');
    // Inside an assertion that takes a string or an object (a union): the same.
    const inUnion = await errorOf("d.yaml", "id: x\nsessions: all\nexpect:\n  - expectTool: {nmae: read}\n");
    expect(inUnion.message).toBe('invalid expectTool: unknown field "nmae" (did you mean name?)');
  });

  test("regression: a label that is not a non-empty string is refused with its line (it was dropped unsaid)", async () => {
    for (const value of ["[not, a, string]", "42", '""', "null"]) {
      const e = await errorOf(
        "l.yaml",
        `id: x\nsessions: all\nexpect:\n  - label: ${value}\n    noHung: true\n`,
      );
      expect([
        e.code,
        e.message.startsWith("label must be a non-empty string"),
        e.source?.line,
        e.source?.field,
      ]).toEqual(["bad_input", true, 4, "expect.0.label"]);
    }
  });

  test("syntax errors carry the line", async () => {
    expect((await errorOf("s.json", '{\n "id": "a",\n "expect": [,]\n}')).source?.line).toBe(3);
    expect(
      (await errorOf("s.yaml", "id: a\nexpect:\n  - noHung: true\n  - x: [1,\n")).source?.line,
    ).toBeGreaterThanOrEqual(4);
  });
  test("an unknown field is named as such, with the closest known one, at the top and inside an assertion", async () => {
    const top = await errorOf("t.yaml", "id: a\nsesions: [s1]\nexpect:\n  - noHung: true\n");
    expect([top.message, top.source?.line, top.source?.field]).toEqual([
      'invalid case: unknown field "sesions" (did you mean sessions?)',
      2,
      "sesions",
    ]);
    const inner = await errorOf("i.yaml", "id: a\nexpect:\n  - expectTool: { name: read, cuont: 1 }\n");
    expect(inner.message).toBe('invalid expectTool: unknown field "cuont" (did you mean count?)');
    const far = await errorOf("f.yaml", "id: a\nzzzzzzzz: 1\nexpect:\n  - noHung: true\n");
    expect(far.message).toBe('invalid case: unknown field "zzzzzzzz"');
  });
  test("unknown assertions get a suggestion; rerun fields and bad regexes are refused", async () => {
    const u = await errorOf("u.yaml", "id: a\nexpect:\n  - expectTools: read\n");
    expect(u.message).toBe('unknown assertion "expectTools" (did you mean expectTool?)');
    expect(u.source?.line).toBe(3);
    const r = await errorOf("r.jsonl", '{"id":"a","prompt":"fix it","verify":"npm test"}\n');
    expect(r.message).toContain("needs the agent re-run");
    const x = await errorOf("x.yaml", "id: a\nexpect:\n  - forbidBashMatches: ['rm (']\n");
    expect(x.message).toContain("invalid regular expression");
    expect(x.source?.line).toBe(3);
    const two = await errorOf("t.yaml", "id: a\nexpect:\n  - noHung: true\n    noInFlight: true\n");
    expect(two.message).toContain("exactly one assertion");
  });
  test("regression: a misspelled $-operator in args was read as an argument name (exit 1, not 2)", async () => {
    const refused: [args: string, message: string][] = [
      [
        "{ path: { $regx: login } }",
        "args path: unknown operator $regx (known: $eq, $regex, $flags, $exists;",
      ],
      ["{ opts: [1, { $subset: {} }] }", "args opts.1: unknown operator $subset"],
      ["{ p: { $regex: x, $eq: y } }", "args p: $regex cannot be combined with $eq"],
      ["{ p: { $regex: x, $flags: q } }", "args p: $flags must be regular expression flags"],
      ["{ p: { $flags: i } }", "args p: $flags goes with $regex"],
    ];
    for (const [args, message] of refused) {
      const e = await errorOf("a.yaml", `id: a\nexpect:\n  - expectTool: { name: e, args: ${args} }\n`);
      expect(e.code).toBe("bad_input");
      expect(e.message).toContain(message);
    }
    await using dir = await tempDir();
    writeFileSync(
      join(dir.path, "ok.yaml"),
      "id: a\nexpect:\n  - expectTool: { name: e, args: { p: { $regex: x, $flags: ms }, q: { $eq: { $ref: 1 } }, r: { $exists: true } } }\n",
    );
    expect(loadCases([dir.path])).toHaveLength(1);
  });
  test("regression: a top-level tags was accepted and ignored, so the case ran on every session", async () => {
    const e = await errorOf("t.yaml", "id: a\ntags: [no-such-tag]\nexpect:\n  - noHung: true\n");
    expect(e.code).toBe("bad_input");
    expect(e.source).toMatchObject({ line: 2, field: "tags" });
    expect(e.message).toContain("sessions: { tags: [...] }");
    await using dir = await tempDir();
    writeFileSync(join(dir.path, "ok.yaml"), "id: a\nsessions: { tags: [ci] }\nexpect:\n  - noHung: true\n");
    expect(loadCases([dir.path])[0]!.input.sessions).toEqual({ tags: ["ci"] });
  });
  test("duplicate ids across files are refused; a missing path is bad input", async () => {
    await using dir = await tempDir();
    writeFileSync(join(dir.path, "a.yaml"), "id: same\nexpectMaxTurns: 3\n");
    writeFileSync(join(dir.path, "b.yaml"), "id: same\nexpectMaxTurns: 3\n");
    expect(() => loadCases([dir.path])).toThrow(/duplicate case id "same"/);
    expect(() => loadCases([join(dir.path, "nope.yaml")])).toThrow(/no such case file/);
  });
});

describe("cases that cannot fail, or cannot pass, are refused at load", () => {
  const refused: [string, string, string, string][] = [
    // what, the case's lines after `id: x`, the message, the field
    [
      "a regex flag that remembers",
      'expect:\n  - expectTool: { name: edit, args: { path: { $regex: "a", $flags: "g" } } }',
      "flags g and y make a pattern remember",
      "expect.0.expectTool.args",
    ],
    [
      "flags no pattern takes",
      'expect:\n  - expectTool: { name: edit, args: { path: { $regex: "a", $flags: "ii" } } }',
      "invalid regular expression",
      "expect.0.expectTool.args",
    ],
    [
      "a pattern invalid only under its flags",
      'expect:\n  - expectTool: { name: edit, args: { path: { $regex: "\\\\-", $flags: "u" } } }',
      "invalid regular expression",
      "expect.0.expectTool.args",
    ],
    [
      "a title regex that does not compile",
      'sessions: { title: "/login(/" }\nexpect:\n  - noHung: true',
      "invalid regular expression",
      "sessions.title",
    ],
    [
      "a session listed twice",
      "sessions: [a, b, a]\nexpect:\n  - noHung: true",
      "session a is listed twice",
      "sessions",
    ],
    [
      "a time Date.parse cannot read",
      'sessions: { until: "2026-07-01T00:00:00+02" }\nexpect:\n  - noHung: true',
      "write the offset as +02:00",
      "sessions.until",
    ],
    [
      "a tool duration without of: tool",
      "expect:\n  - duration: { tool: bash, max: 10 }",
      "tool goes with of: tool",
      "expect.0.duration",
    ],
    ["bounds with none given", "expect:\n  - ttft: {}", "give `max` or `p95`", "expect.0.ttft"],
    [
      "token bounds with none given",
      "expect:\n  - tokens: {}",
      "with none this checks nothing",
      "expect.0.tokens",
    ],
    [
      "a count with min above max",
      "expect:\n  - toolCalls: { min: 5, max: 1 }",
      "min is above max",
      "expect.0.toolCalls",
    ],
    ["a case with no expectations", "sessions: all", 'case "x" checks nothing', "expect"],
    // Checks that can never fail (eval review 4): they passed every session.
    ["a flag set false", "expect:\n  - noHung: false", "false checks nothing", "expect.0.noHung"],
    [
      "forbidDenied: false",
      "expect:\n  - forbidDenied: false",
      "false checks nothing",
      "expect.0.forbidDenied",
    ],
    [
      "an empty pattern list",
      "expect:\n  - expectBashMatches: []",
      "an empty list checks nothing",
      "expect.0.expectBashMatches",
    ],
    [
      "an empty include list",
      "expect:\n  - changedFiles: {include: []}",
      "an empty list checks nothing",
      "expect.0.changedFiles.include",
    ],
    [
      "a sequence of no steps",
      "expect:\n  - expectSequence: {mode: in_order, steps: []}",
      "an empty list checks nothing",
      "expect.0.expectSequence.steps",
    ],
    [
      "forbidDenied excepting every source",
      "expect:\n  - forbidDenied: {except: [hook, mode, rule, permission, permission-hook, user, role]}",
      "except lists every source",
      "expect.0.forbidDenied",
    ],
    ["a count of min 0 alone", "expect:\n  - toolCalls: {min: 0}", "min 0 with no max", "expect.0.toolCalls"],
    [
      "an infinite bound",
      "expect:\n  - ttft: {max: .inf}",
      "an infinite bound checks nothing",
      "expect.0.ttft.max",
    ],
    [
      "an infinite budget",
      "expect:\n  - cost: {maxUsd: .inf}",
      "an infinite bound checks nothing",
      "expect.0.cost.maxUsd",
    ],
    ["passRate: 0", "passRate: 0\nexpect:\n  - noHung: true", "0 lets every session fail", "passRate"],
    [
      "a top-level flag set false",
      "expectParallelTools: false\nexpect:\n  - noHung: true",
      "false checks nothing",
      "expectParallelTools",
    ],
    [
      "all: false (it selected every session)",
      "sessions: { all: false }\nexpect:\n  - noHung: true",
      "all may only be true",
      "sessions.all",
    ],
  ];
  test("a %YAML directive before the first --- is the document's, not a document of its own", async () => {
    await using dir = await tempDir();
    const file = join(dir.path, "d.yaml");
    writeFileSync(file, "%YAML 1.2\n---\nid: x\nexpect:\n  - noHung: true\n");
    const [c] = loadCases([file]);
    expect([c!.id, c!.line, c!.expectations[0]!.line]).toEqual(["x", 3, 5]);
  });

  test("expectCompaction: false is a check (no compaction may happen), in expect and at the top", async () => {
    await using dir = await tempDir();
    for (const body of ["expect:\n  - expectCompaction: false", "expectCompaction: false"]) {
      const file = join(dir.path, "c.yaml");
      writeFileSync(file, `id: x\n${body}\n`);
      const [c] = loadCases([file]);
      expect(c!.expectations.map((e) => [e.name, e.value])).toEqual([["expectCompaction", false]]);
    }
  });

  for (const [what, body, message, field] of refused)
    test(what, async () => {
      const e = await errorOf("c.yaml", `id: x\n${body}\n`);
      expect(e.code).toBe("bad_input");
      expect(e.message).toContain(message);
      expect(e.source?.field).toBe(field);
    });

  test("a key given twice is refused with its line (the parsers kept the last one silently)", async () => {
    const y = await errorOf("d.yaml", "id: x\nexpect:\n  - noHung: true\nexpect:\n  - noStalls: true\n");
    expect(y.message).toBe('duplicate key "expect" (the first one would be dropped)');
    expect(y.source?.line).toBe(4);
    const j = await errorOf("d.json", '{"id": "a",\n "id": "b", "expectMaxTurns": 3}');
    expect([j.message, j.source?.line]).toEqual(['duplicate key "id" (the first one would be dropped)', 2]);
    const l = await errorOf(
      "d.jsonl",
      '{"id": "a", "expectMaxTurns": 3}\n{"id": "b", "expectMaxTurns": 3, "expectMaxTurns": 4}\n',
    );
    expect(l.source?.line).toBe(2);
  });

  test("fields beside `cases` are refused; a byte-order mark is not text", async () => {
    const e = await errorOf(
      "c.json",
      '{"cases": [{"id": "a", "expectMaxTurns": 3}], "expect": [{"noHung": true}]}',
    );
    expect(e.message).toContain('unknown field "expect" beside cases');
    await using dir = await tempDir();
    for (const name of ["bom.json", "bom.jsonl", "bom.yaml"])
      writeFileSync(join(dir.path, name), `\uFEFF{"id": "${name}", "expectMaxTurns": 3}\n`);
    expect(loadCases([dir.path]).map((c) => c.id)).toEqual(["bom.json", "bom.jsonl", "bom.yaml"]);
  });

  test("no case found is bad input; extensions in capitals and skipped cases count", async () => {
    await using dir = await tempDir();
    writeFileSync(join(dir.path, "README.md"), "notes\n");
    expect(() => loadCases([dir.path])).toThrow(/no cases found in/);
    writeFileSync(join(dir.path, "A.YAML"), "id: upper\nexpectMaxTurns: 3\n");
    writeFileSync(join(dir.path, "later.yml"), "id: later\nskip: not yet\n");
    expect(loadCases([dir.path]).map((c) => c.id)).toEqual(["upper", "later"]);
  });
});

test("regression: a lone CR breaks a line, as YAML counts it, and CRLF is one break (a CR-only file put every error on line 1)", async () => {
  const lf = "id: x\nsessions: [a]\nexpect:\n  - expectTool:\n      name: edit\n      count: {min: -1}\n";
  for (const eol of ["\r", "\r\n"]) {
    const e = await errorOf("cr.yaml", lf.replaceAll("\n", eol));
    expect([JSON.stringify(eol), e.source]).toMatchObject([
      JSON.stringify(eol),
      { line: 6, field: "expect.0.expectTool.count.min" },
    ]);
  }
  // In JSON too, and a JSONL file's lines are its cases.
  const json = '{"id": "x",\r"expect": [\r{"expectTool": {"name": "edit", "count": {"min": -1}}}]}';
  expect((await errorOf("cr.json", json)).source).toMatchObject({ line: 3 });
  expect(
    (await errorOf("cr.jsonl", '{"id": "a", "expect": [{"noHung": true}]}\r{"id": "b", "expect": []}'))
      .source,
  ).toMatchObject({ line: 2 });
});
