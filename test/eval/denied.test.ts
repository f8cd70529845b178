import { describe, expect, test } from "bun:test";
import {
  deniedNeverRan,
  expectDenied,
  forbidDenied,
  noRetryAfterDenial,
} from "../../src/eval/assertions/denied.ts";
import { trace } from "./_trace.ts";

describe("denied calls", () => {
  const t = trace({
    denied: [
      { tool: "bash", source: "permission", args: { command: "rm -rf /" }, seq: 5 },
      { tool: "write", source: "user", seq: 9 },
    ],
  });
  test("expectDenied by tool and source, default at least one", () => {
    expect(expectDenied(t, { tool: "bash", source: "permission" }).verdict).toBe("pass");
    expect(expectDenied(t, { tool: "bash", source: "hook" }).message).toBe(
      "expected at least 1 denied bash (source hook), got 0; denials: bash (source=permission) at seq 5, write (source=user) at seq 9",
    );
    expect(expectDenied(t, { count: 2 }).verdict).toBe("pass");
    expect(expectDenied(trace()).message).toContain("nothing was denied");
  });
  test("forbidDenied with except", () => {
    expect(forbidDenied(t, { except: ["user", "permission"] }).verdict).toBe("pass");
    const r = forbidDenied(t, { except: ["user"] });
    expect(r.verdict).toBe("fail");
    expect(r.seq).toBe(5);
    expect(r.message).toBe("1 denied call: bash (source=permission) at seq 5");
    expect(forbidDenied(trace()).verdict).toBe("pass");
  });
  test("a denied call never ran: pairing by callId", () => {
    const ran = trace({
      denied: [{ tool: "bash", source: "hook", callId: "c1", seq: 3 }],
      tools: [{ tool: "bash", callId: "c1", callSeq: 2, outputSeq: 4 }],
    });
    const r = deniedNeverRan(ran);
    expect(r.verdict).toBe("fail");
    expect(r.seq).toBe(4);
    const other = trace({
      denied: [{ tool: "bash", source: "hook", callId: "c1", seq: 3 }],
      tools: [{ tool: "bash", callId: "c2", callSeq: 6, outputSeq: 7 }],
    });
    expect(deniedNeverRan(other).verdict).toBe("pass");
  });
  test("a denied call never ran: without callId, an output after the denial for the same call", () => {
    const ran = trace({
      denied: [{ tool: "bash", source: "mode", args: { command: "ls" }, seq: 3 }],
      tools: [{ tool: "bash", args: { command: "ls" }, callSeq: 2, outputSeq: 4 }],
    });
    expect(deniedNeverRan(ran).verdict).toBe("fail");
  });
  test("no retry loop after a denial: retries counted by position", () => {
    const loop = trace({
      denied: [
        { tool: "bash", source: "permission", args: { command: "rm x" }, seq: 2 },
        { tool: "bash", source: "permission", args: { command: "rm x" }, seq: 4 },
        { tool: "bash", source: "permission", args: { command: "rm x" }, seq: 6 },
      ],
    });
    const r = noRetryAfterDenial(loop);
    expect(r.verdict).toBe("fail");
    expect(r.message).toContain("tried again 2 times (seq 4, 6); at most 1 allowed");
    expect(r.seq).toBe(6);
    expect(noRetryAfterDenial(loop, { maxRetries: 2 }).verdict).toBe("pass");
    // A different command after the denial is not a retry.
    const moved = trace({
      denied: [{ tool: "bash", source: "permission", args: { command: "rm x" }, seq: 2 }],
      tools: [{ tool: "bash", args: { command: "ls" }, callSeq: 3 }],
    });
    expect(noRetryAfterDenial(moved, { maxRetries: 0 }).verdict).toBe("pass");
  });
});
