/**
 * Regression: a case file holding bytes that are not UTF-8 was read with a non-fatal decoder, so a
 * bad byte passed as U+FFFD (into a case id or an expected string). It is bad input now (exit 2),
 * naming the file and the line of the first bad byte.
 */
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { FreecodeError } from "../../src/errors.ts";
import { loadCases } from "../../src/eval/load-cases.ts";
import { ROOT, runCli, tempDir, tempHome } from "../_helpers.ts";

const SESSION = join(ROOT, "examples", "rollouts", "fix-login-1");
const bytes = (...parts: (string | number[])[]) =>
  Buffer.concat(parts.map((p) => (typeof p === "string" ? Buffer.from(p) : Buffer.from(p))));

/** The error loading `content` as `name` raises (the test fails if there is none). */
async function errorOf(name: string, content: Uint8Array): Promise<FreecodeError> {
  await using dir = await tempDir();
  writeFileSync(join(dir.path, name), content);
  let error: unknown;
  try {
    loadCases([join(dir.path, name)]);
  } catch (e) {
    error = e;
  }
  expect(error).toBeInstanceOf(FreecodeError);
  return error as FreecodeError;
}

describe("case files that are not UTF-8", () => {
  test("YAML: bad_input naming the file and the line of the first bad byte", async () => {
    const e = await errorOf("a.yaml", bytes("id: one\nexpect:\n  - expectText: caf", [0xe9], "\n"));
    expect(e.code).toBe("bad_input");
    expect(e.source?.file).toEndWith("a.yaml");
    expect(e.source?.line).toBe(3);
    expect(e.message).toContain("not valid UTF-8");
  });

  test("JSON and JSONL: the first bad byte's line, not the first line", async () => {
    const json = await errorOf(
      "b.json",
      bytes('{\n  "cases": [\n    {"id": "x', [0xff, 0xfe], '"}\n  ]\n}\n'),
    );
    expect([json.code, json.source?.line]).toEqual(["bad_input", 3]);
    // A sequence cut short by a newline: the lead byte's line is named.
    const jsonl = await errorOf("c.jsonl", bytes('{"id":"a"}\n{"id":"b"}\n{"id":"c', [0xe2, 0x82], '\n"}\n'));
    expect([jsonl.code, jsonl.source?.line]).toEqual(["bad_input", 3]);
  });

  test("valid multi-byte text (and a real U+FFFD) still loads", async () => {
    await using dir = await tempDir();
    const file = join(dir.path, "ok.yaml");
    writeFileSync(file, "id: café-\uFFFD-✓\nexpectMaxTurns: 3\n");
    expect(loadCases([file]).map((c) => c.id)).toEqual(["café-\uFFFD-✓"]);
  });

  test("through the CLI: exit 2 and one line naming file:line", async () => {
    await using home = await tempHome();
    const file = join(home.path, "cases.yaml");
    writeFileSync(file, bytes("id: one\nexpectTool: ed", [0xc0, 0xaf], "\n"));
    const r = runCli(["eval", file, "--sessions", SESSION], { home: home.path });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("cases.yaml:2: not valid UTF-8 (byte 23)");
  });
});
