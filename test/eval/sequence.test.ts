import { describe, expect, test } from "bun:test";
import { expectSequence, SEQUENCE_MODES, type SequenceMode } from "../../src/eval/assertions/sequence.ts";
import { trace } from "./_trace.ts";

const run = (mode: SequenceMode, steps: string[], tools: string[]) =>
  expectSequence(trace({ tools }), { mode, steps });

describe("sequence modes", () => {
  test("an empty expected list against an empty trajectory passes in every mode", () => {
    for (const mode of SEQUENCE_MODES) expect(run(mode, [], []).verdict).toBe("pass");
  });
  test("empty expected list, non-empty trajectory: strict/unordered/subset fail, in_order/superset pass", () => {
    const v = Object.fromEntries(SEQUENCE_MODES.map((m) => [m, run(m, [], ["read"]).verdict]));
    expect(v).toEqual({
      strict: "fail",
      in_order: "pass",
      unordered: "fail",
      subset: "fail",
      superset: "pass",
    });
  });
  test("strict reports the first diverging step with its seq", () => {
    const r = run("strict", ["read", "edit", "bash"], ["read", "bash", "edit"]);
    expect(r.verdict).toBe("fail");
    expect(r.step).toBe(1);
    expect(r.callIndex).toBe(1);
    expect(r.message).toMatch(/^strict: step 1 diverges: expected edit, got call #1 bash \(seq \d+\)$/);
    expect(run("strict", ["read"], ["read", "bash"]).message).toContain("unexpected extra call #1 bash");
    expect(run("strict", ["read", "edit"], ["read"]).message).toContain("step 1 edit missing");
  });
  test("in_order allows calls between steps but not reordering", () => {
    expect(run("in_order", ["read", "edit"], ["read", "grep", "edit", "bash"]).verdict).toBe("pass");
    const r = run("in_order", ["edit", "read"], ["read", "edit"]);
    expect(r.verdict).toBe("fail");
    expect(r.step).toBe(1);
    expect(r.message).toContain("step 1 read not found after call #1 edit");
  });
  test("repeated steps need repeated calls (by position, never deduplicated)", () => {
    expect(run("in_order", ["read", "read"], ["read"]).verdict).toBe("fail");
    expect(run("in_order", ["read", "read"], ["read", "edit", "read"]).verdict).toBe("pass");
    expect(run("unordered", ["read", "read", "edit"], ["read", "edit"]).verdict).toBe("fail");
    expect(run("superset", ["read", "edit", "edit"], ["read", "edit"]).step).toBe(2);
  });
  test("unordered is multiset equality", () => {
    expect(run("unordered", ["edit", "read"], ["read", "edit"]).verdict).toBe("pass");
    expect(run("unordered", ["edit", "read"], ["read", "edit", "read"]).message).toMatch(
      /call #2 read \(seq \d+\) is not among/,
    );
  });
  test("subset: every recorded call is one of the steps (documented example)", () => {
    expect(run("subset", ["read", "edit", "bash"], ["read", "edit"]).verdict).toBe("pass");
    const r = run("subset", ["read", "edit"], ["read", "edit", "bash"]);
    expect(r.verdict).toBe("fail");
    expect(r.callIndex).toBe(2);
  });
  test("superset: every step has its own call (documented example)", () => {
    expect(run("superset", ["read", "edit"], ["read", "bash", "edit"]).verdict).toBe("pass");
    expect(run("superset", ["read", "edit", "edit"], ["read", "edit"]).verdict).toBe("fail");
  });
  test("matching is a real assignment: a glob step cannot steal the only call a named step needs", () => {
    expect(run("superset", ["*", "read"], ["read", "edit"]).verdict).toBe("pass");
  });
  test("steps with args show the differing path of the nearest call", () => {
    const t = trace({ tools: [["edit", { path: "b.ts" }]] });
    const r = expectSequence(t, { mode: "in_order", steps: [{ name: "edit", args: { path: "a.ts" } }] });
    expect(r.message).toContain('path: expected contains "a.ts", got "b.ts"');
    expect(r.callIndex).toBe(0);
  });
});
