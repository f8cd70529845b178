/** Keys written twice in a case file: found (with their line), and nothing valid refused. */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { duplicateJsonKey, duplicateYamlKey } from "../../src/util/duplicate-keys.ts";
import { ROOT } from "../_helpers.ts";

describe("JSON", () => {
  test("a repeated key at any depth, with its line", () => {
    expect(duplicateJsonKey('{"id": "a", "id": "b"}')).toEqual({ key: "id", line: 1 });
    expect(duplicateJsonKey('{"a": {\n"x": 1,\n"x": 2}}')).toEqual({ key: "x", line: 3 });
    expect(duplicateJsonKey('[{"expectTool": {"name": "w", "name": "e"}}]')).toEqual({
      key: "name",
      line: 1,
    });
  });
  test("alike keys in sibling objects, keys inside strings, escapes: none", () => {
    expect(duplicateJsonKey('[{"a": 1}, {"a": 1}]')).toBeUndefined();
    expect(duplicateJsonKey('{"a": "\\"a\\": 1", "b": {"a": 2}, "c": ["a", "a"]}')).toBeUndefined();
    expect(duplicateJsonKey('{"a\\u0062": 1, "ab2": 2}')).toBeUndefined();
    expect(duplicateJsonKey('{"a\\u0062": 1, "ab": 2}')).toEqual({ key: "ab", line: 1 });
  });
});

describe("YAML", () => {
  test("a repeated key of one mapping, with its line", () => {
    expect(duplicateYamlKey("id: a\nexpect:\n  - noHung: true\nexpect:\n  - x: 1\n")).toEqual({
      key: "expect",
      line: 4,
    });
    expect(duplicateYamlKey("expect:\n  - expectTool:\n      name: w\n      name: e\n", 10)).toEqual({
      key: "name",
      line: 13,
    });
    expect(duplicateYamlKey('a: 1\n"a": 2\n')).toEqual({ key: "a", line: 2 });
    expect(duplicateYamlKey("- id: x\n  id: y\n")).toEqual({ key: "id", line: 2 });
  });
  test("a repeated key of a flow mapping, on one line or several, at any depth (eval review 2)", () => {
    expect(duplicateYamlKey("expect:\n  - expectTool: {name: bash, name: read}\n")).toEqual({
      key: "name",
      line: 2,
    });
    expect(duplicateYamlKey("{id: a, sessions: [x], expect: [], id: b}")).toEqual({ key: "id", line: 1 });
    expect(duplicateYamlKey("a: {x: 1,\n  y: {z: 1, 'z': 2}}\n")).toEqual({ key: "z", line: 2 });
    expect(duplicateYamlKey("a: {x: 1,\n  y: 2,\n  x: 3}\n")).toEqual({ key: "x", line: 3 });
    expect(duplicateYamlKey("a: {msg: it's fine, b: 1, msg: 3}\n")).toEqual({ key: "msg", line: 1 });
  });
  test("list items, nesting, block scalars, sibling flow mappings and comments are not repeats", () => {
    const ok = [
      "expect:\n  - noHung: true\n  - noHung: true\n",
      "expect:\n- a: 1\n- a: 2\nother: 3\n",
      "a:\n  x: 1\nb:\n  x: 2\n",
      "prompt: |\n  id: 1\n  id: 2\nid: x\n",
      "prompt: >-\n  a: 1\n\n  a: 2\nb: 1\n",
      "x: {a: 1, b: 2}\ny: [\n  {a: 1},\n  {a: 1}\n]\nz: 1\n",
      // Flow values with quotes, colons and commas inside their scalars.
      "a: {url: \"http://h:1/x\", msg: it's fine, q: 'x, y', k: a:b}\n",
      "# a: 1\na: 1 # a: 2\n",
      "- - a: 1\n  - a: 2\n",
      // Found by the final read: block scalars after an anchor or tag, or as a list item; quoted
      // text over lines; keys this does not read (it stops looking rather than guess).
      "prompt: &task |\n  Constraint: a\n  Constraint: b\nother: 1\n",
      "a: !!str |\n  x: 1\n  x: 2\n",
      "steps:\n  - |\n    k: 1\n    k: 2\n",
      'a: "line one\n  k: 1\n  k: 2 still quoted"\nb: 1\n',
      "a: 'it''s\n  k: 1\n  k: 2'\nb: 1\n",
      "a#b:\n  x: 1\nc#d:\n  x: 2\n",
      "&x k:\n  y: 1\n&z k2:\n  y: 2\n",
    ];
    for (const text of ok) expect([text, duplicateYamlKey(text)]).toEqual([text, undefined]);
  });
  test("no case file of the repository is refused", () => {
    const files = [
      ...new Bun.Glob("{examples,test}/**/*.{yaml,yml}").scanSync({ cwd: ROOT, onlyFiles: true }),
    ];
    expect(files.length).toBeGreaterThan(0);
    for (const f of files)
      for (const doc of readFileSync(join(ROOT, f), "utf8").split(/^---\s*$/m))
        expect([f, duplicateYamlKey(doc)]).toEqual([f, undefined]);
  });
});
