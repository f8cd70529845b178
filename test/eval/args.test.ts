import { describe, expect, test } from "bun:test";
import { type ArgSpec, argsMatch, diffArgs } from "../../src/eval/match/args.ts";
import { nameMatches, pathMatches } from "../../src/eval/match/glob.ts";

describe("arg matchers", () => {
  const args = { path: "src/Login.ts", options: { mode: "fast", n: 3 }, argv: ["git", "push"] };

  test("a bare string is a case-insensitive substring", () => {
    expect(argsMatch(args, { path: "login" })).toBe(true);
    expect(argsMatch(args, { path: "logout" })).toBe(false);
  });
  test("a string against a non-string value matches its JSON text", () => {
    expect(argsMatch(args, { argv: "push" })).toBe(true);
  });
  test("$eq is deep equality, $regex defaults to the i flag, $exists", () => {
    expect(argsMatch(args, { options: { $eq: { mode: "fast", n: 3 } } })).toBe(true);
    expect(argsMatch(args, { options: { $eq: { mode: "fast" } } })).toBe(false);
    expect(argsMatch(args, { path: { $regex: "^SRC/.*\\.ts$" } })).toBe(true);
    expect(argsMatch(args, { path: { $regex: "^SRC", $flags: "" } })).toBe(false);
    expect(argsMatch(args, { missing: { $exists: false } })).toBe(true);
    expect(argsMatch(args, { path: { $exists: false } })).toBe(false);
  });
  test("regression: the top-level keys of args are argument names, $-named ones too (they were operators on the whole args)", () => {
    for (const spec of [{ $exists: true }, { $regex: "ls" }, { $eq: { command: "ls" } }] as ArgSpec[]) {
      expect(argsMatch({ command: "ls" }, spec)).toBe(false);
      expect(diffArgs({ command: "ls" }, spec)).toHaveLength(1);
    }
    expect(argsMatch({ $regex: "a.ts" }, { $regex: "a.ts" })).toBe(true);
  });
  test("keys are the arguments' own: constructor, toString and __proto__ are never inherited", () => {
    expect(argsMatch(args, { constructor: { $exists: false }, toString: { $exists: false } })).toBe(true);
    expect(argsMatch(args, { "options.constructor": { $exists: false } })).toBe(true);
    const odd = JSON.parse('{"constructor":"x","__proto__":{"a":1}}') as Record<string, unknown>;
    const spec = JSON.parse('{"constructor":"x","__proto__":{"$eq":{"a":1}}}') as ArgSpec;
    expect(argsMatch(odd, spec)).toBe(true);
    expect(argsMatch({ constructor: "x" }, spec)).toBe(false);
    expect(argsMatch({ n: 1 }, { n: { $eq: JSON.parse('{"constructor":1}') } })).toBe(false);
  });
  test("nested objects are partial; dotted paths reach inside", () => {
    expect(argsMatch(args, { options: { mode: "fast" } })).toBe(true);
    expect(argsMatch(args, { "options.n": 3 })).toBe(true);
    expect(argsMatch(args, { "argv.1": "push" })).toBe(true);
  });
  test("exact mode rejects keys the spec does not name", () => {
    const d = diffArgs({ a: 1, b: 2 }, { a: 1 }, "exact");
    expect(d).toEqual([{ path: "b", expected: "absent (exact args)", actual: "2" }]);
  });
  test("regression: exact mode with a dotted key never matched (the key's first segment was unnamed)", () => {
    expect(argsMatch({ options: { mode: "fast" } }, { "options.mode": "fast" }, "exact")).toBe(true);
    expect(diffArgs({ options: { mode: "fast" } }, { "options.mode": "fast" }, "exact")).toEqual([]);
  });
  test("exact mode with dotted keys means the nested spec: exact at every level the path passes", () => {
    const a = { options: { mode: "fast", n: 3 }, path: "a.ts" };
    expect(diffArgs(a, { "options.mode": "fast", path: "a" }, "exact")).toEqual([
      { path: "options.n", expected: "absent (exact args)", actual: "3" },
    ]);
    expect(diffArgs(a, { "options.mode": "fast", "options.n": 3 }, "exact")).toEqual([
      { path: "path", expected: "absent (exact args)", actual: '"a.ts"' },
    ]);
    expect(argsMatch(a, { "options.mode": "fast", "options.n": 3, path: "a" }, "exact")).toBe(true);
    const deep = { o: { p: { q: 1, r: 2 } }, argv: ["git", "push"], list: [{ x: 1, y: 2 }] };
    expect(diffArgs(deep, { "o.p.q": 1, "argv.1": "push", "list.0.x": 1 }, "exact")).toEqual([
      { path: "o.p.r", expected: "absent (exact args)", actual: "2" },
      { path: "list.0.y", expected: "absent (exact args)", actual: "2" },
    ]);
    // A key of the args that holds a dot names only itself.
    expect(argsMatch({ "a.b": 1, a: { b: 1 } }, { "a.b": 1 }, "exact")).toBe(false);
    expect(argsMatch({ "a.b": 1 }, { "a.b": 1 }, "exact")).toBe(true);
  });
  test("the differing paths are reported, missing args say so", () => {
    expect(diffArgs(args, { options: { mode: "slow" }, path: "src" })).toEqual([
      { path: "options.mode", expected: 'contains "slow"', actual: '"fast"' },
    ]);
    expect(diffArgs(undefined, { a: 1 })[0]!.actual).toBe("(no recorded args)");
    expect(diffArgs({}, { a: "x" })[0]).toEqual({ path: "a", expected: 'contains "x"', actual: "(missing)" });
  });
  test("the fast boolean path agrees with the diff path", () => {
    const specs: ArgSpec[] = [
      { path: "login" },
      { path: "logout" },
      { argv: "push" },
      { options: { $eq: { mode: "fast", n: 3 } } },
      { path: { $regex: "^SRC" } },
      { path: { $regex: "^SRC", $flags: "" } },
      { missing: { $exists: false } },
      { "options.n": 3 },
      { "options.n": 3, "options.mode": "fast", path: "src", argv: "git" },
      { "options.mode": "fast", path: "src", argv: "git" },
      { options: { mode: "slow" } },
      { argv: ["git", "push"] },
      { argv: ["git"] },
      { path: { nested: 1 } },
    ];
    for (const spec of specs) {
      for (const mode of ["partial", "exact"] as const) {
        expect(argsMatch(args, spec, mode)).toBe(diffArgs(args, spec, mode).length === 0);
      }
    }
    expect(argsMatch(undefined, { a: 1 })).toBe(false);
  });
  test("arrays match by length and position", () => {
    expect(argsMatch(args, { argv: ["git", "push"] })).toBe(true);
    expect(argsMatch(args, { argv: ["git"] })).toBe(false);
  });
});

describe("globs", () => {
  test("tool names: case-insensitive * and ?", () => {
    expect(nameMatches("mcp__*", "mcp__github__search")).toBe(true);
    expect(nameMatches("Read", "read")).toBe(true);
    expect(nameMatches("rea?", "read")).toBe(true);
    expect(nameMatches("read", "read_file")).toBe(false);
  });
  test("relative path globs also match the end of absolute paths", () => {
    expect(pathMatches("src/*.ts", "/home/u/app/src/a.ts")).toBe(true);
    expect(pathMatches("src/**", "/home/u/app/src/x/a.ts")).toBe(true);
    expect(pathMatches("/src/*.ts", "/home/u/app/src/a.ts")).toBe(false);
    expect(pathMatches("*.md", "/home/u/app/src/a.ts")).toBe(false);
  });
});
