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
  });
  test("a value that is not a Trace is refused", () => {
    expect(() => expect({}).toHaveCalledTool("x")).toThrow("expected a freecode Trace");
  });
});
