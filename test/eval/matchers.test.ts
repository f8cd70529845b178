import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { expectTool } from "../../src/eval/assertions/tools.ts";
import { traceMatchers } from "../../src/eval/matchers.ts";
import { loadTrace } from "../../src/rollout/load.ts";
import { ROOT } from "../_helpers.ts";
import { trace } from "./_trace.ts";

expect.extend(traceMatchers);
const example = (id: string) => loadTrace({ file: join(ROOT, "examples", "rollouts", id, "events.jsonl") });

describe("bun:test matchers", () => {
  test("over a recorded session (loadTrace)", async () => {
    const t = await example("fix-login-1");
    expect(t).toHaveCalledTool({ name: "edit", args: { path: "src/login.ts" } });
    expect(t).toHaveToolSequence(["read", "edit", "bash"]);
    expect(t).toHaveChangedFiles(["src/login.ts"]);
    expect(t).not.toHaveDenied();
    expect(t).toHaveNoHungRequests();
    expect(t).toHaveRunShellMatching("npm test");
    const denied = await example("denied-rm");
    expect(denied).toHaveDenied({ tool: "bash", source: "permission" });
    expect(denied).toHaveNeverRunDeniedCalls();
    expect(await example("hung-request")).not.toHaveNoHungRequests();
    expect(await example("long-refactor")).toHaveCompactions({ min: 1 });
  });
  test("regression: toHaveForbiddenToolsAbsent takes the case file's includeDenied (a denied call of the tool then fails it)", async () => {
    const denied = trace({ tools: ["read"], denied: [{ tool: "Write", source: "mode" }] });
    expect(denied).toHaveForbiddenToolsAbsent(["Write"]);
    expect(denied).not.toHaveForbiddenToolsAbsent(["Write"], { includeDenied: true });
  });

  test("every case-file assertion has a matcher: counts, args, no tools, parallel calls, model calls, cost", async () => {
    const t = await example("fix-login-1");
    expect(t).toHaveToolCalls({ min: 3 });
    expect(t).not.toHaveToolCalls({ max: 1 });
    expect(t).toHaveCalledToolWithArgs("edit", { path: "src/login.ts" });
    expect(t).not.toHaveCalledToolWithArgs("edit", { path: "src/other.ts" });
    expect(t).not.toHaveCalledNoTools();
    expect(trace()).toHaveCalledNoTools();
    expect(t).toHaveModelCallsAtMost(t.modelSpans.length);
    expect(t).not.toHaveModelCallsAtMost(0);
    const price = { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 };
    expect(t).toCostAtMost(100, { "claude-*": price });
    expect(t).not.toCostAtMost(0, { "claude-*": price });
    // No price for the model: could not evaluate, in both directions.
    expect(() => expect(t).toCostAtMost(100, {})).toThrow("could not evaluate");
    expect(() => expect(t).not.toCostAtMost(100, {})).toThrow("could not evaluate");
    expect(trace({ models: [{ toolCalls: ["read", "grep"] }] })).toHaveParallelToolCalls();
    expect(trace({ models: [{ toolCalls: ["read"] }] })).not.toHaveParallelToolCalls();
    expect(trace({ models: [{ toolCalls: ["read", "grep"] }] })).not.toHaveParallelToolCalls(3);
  });
  test("a failing matcher throws the same message as the assertion", () => {
    const t = trace({ tools: ["bash"] });
    const message = expectTool(t, "edit").message;
    expect(() => expect(t).toHaveCalledTool("edit")).toThrow(message);
    expect(() => expect(t).not.toHaveCalledTool("bash")).toThrow("expected not: bash ran 1 time");
  });
  test("could not evaluate fails with and without .not", () => {
    const t = trace();
    expect(() => expect(t).toHaveTtftWithin({ p95: 100 })).toThrow("could not evaluate");
    expect(() => expect(t).not.toHaveTtftWithin({ p95: 100 })).toThrow("could not evaluate");
    // Regression: a bound over nothing measured (a misspelt tool, no first tokens) passed.
    const ran = trace({ tools: ["bash"], models: [{}] });
    expect(() => expect(ran).toHaveTtftWithin({ max: 1 })).toThrow("could not evaluate");
    expect(() => expect(ran).toHaveDurationWithin({ of: "tool", tool: "bsh", max: 1 })).toThrow(
      "could not evaluate",
    );
    expect(() => expect(ran).not.toHaveDurationWithin({ of: "tool", tool: "bsh", max: 1 })).toThrow(
      "could not evaluate",
    );
  });
  test("a log with an unreadable line is no evidence, in either direction", async () => {
    const t = await example("denied-rm");
    const damaged = { ...t, parseErrors: [{ line: 7, message: "not valid JSON", torn: false }] };
    expect(() => expect(damaged).not.toHaveDenied({ source: "permission" })).toThrow(
      "could not evaluate: corrupt rollout log: line 7: not valid JSON",
    );
    expect(() => expect(damaged).toHaveDenied({ source: "permission" })).toThrow("could not evaluate");
    // A torn last line alone is tolerated, as `freecode eval` tolerates it.
    const torn = { ...t, parseErrors: [{ message: "torn last line", torn: true }] };
    expect(torn).toHaveDenied({ source: "permission" });
  });
  test("a value that is not a Trace is refused", () => {
    expect(() => expect({}).toHaveCalledTool("x")).toThrow("expected a freecode Trace");
  });
});
