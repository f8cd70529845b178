/**
 * The library's public API, end to end through `src/index.ts` only: an agent loop persists a session,
 * records its rollout, and a test asserts over the trace with the eval functions and matchers.
 */
import { describe, expect, test } from "bun:test";
import * as freecode from "../src/index.ts";
import { tempHome } from "./_helpers.ts";

expect.extend(freecode.traceMatchers);

describe("freecode as a library", () => {
  test("store a session, record its rollout, assert over its trace", async () => {
    await using home = await tempHome();
    const { adapter } = await freecode.openStore("files", { home: home.path, fsync: "never" });
    const meta = await freecode.createSession(
      adapter,
      { projectPath: home.path, provider: "anthropic", model: "claude-x" },
      freecode.toStoredMessages([{ role: "user", parts: [{ type: "text", content: "fix the login bug" }] }]),
    );
    expect(meta.title).toBe("fix the login bug");

    const rec = freecode.createRecorder({ adapter, sessionId: meta.id, enabled: true });
    rec.record({ type: "turn.started", turnId: "turn-0" });
    await rec.recordNow({
      type: "model.request",
      turnId: "turn-0",
      provider: "anthropic",
      model: "claude-x",
    });
    rec.record({ type: "model.first_token", turnId: "turn-0", ttft_ms: 120 });
    rec.record({
      type: "model.response",
      turnId: "turn-0",
      provider: "anthropic",
      model: "claude-x",
      duration_ms: 900,
      inputTokens: 1000,
      outputTokens: 50,
      toolCalls: ["edit", "bash"],
    });
    rec.record({
      type: "function.call",
      turnId: "turn-0",
      tool: "edit",
      callId: "c1",
      args: { path: "src/login.ts" },
    });
    rec.record({ type: "function.output", turnId: "turn-0", tool: "edit", callId: "c1", duration_ms: 5 });
    rec.denyToolCall(
      { tool: "bash", args: { command: "rm -rf /" }, callId: "c2", turnId: "turn-0" },
      "mode",
      "plan mode",
    );
    await rec.close();

    const trace = await freecode.loadTrace({ adapter, sessionId: meta.id });
    expect(trace.toolSpans.map((s) => s.tool)).toEqual(["edit"]);
    expect(trace.deniedSpans).toHaveLength(1);
    expect(trace.changedFiles).toEqual(["src/login.ts"]);
    expect(trace.inputTokens).toBe(1000);

    expect(freecode.expectTool(trace, { name: "edit", args: { path: "login" } }).verdict).toBe("pass");
    expect(freecode.expectTool(trace, "bash").verdict).toBe("fail");
    expect(freecode.expectDenied(trace, { tool: "bash", source: "mode" }).verdict).toBe("pass");
    expect(trace).toHaveCalledTool("edit");
    expect(trace).toHaveDenied({ tool: "bash" });

    // Big outputs in pieces: the same text as the one-string forms.
    const collect = (run: (write: (text: string) => void) => unknown) => {
      const parts: string[] = [];
      run((text) => parts.push(text));
      return parts.join("");
    };
    expect(collect((w) => freecode.writeJson(trace, w))).toBe(JSON.stringify(trace, null, 2));
    expect(collect((w) => freecode.writeOtlpJson(trace, w))).toBe(
      JSON.stringify(freecode.traceToOtlp(trace)),
    );
    expect(collect((w) => freecode.writeWaterfall(trace, (line) => w(`${line}\n`)))).toBe(
      freecode.renderWaterfall(trace),
    );

    const events: string[] = [];
    for await (const item of adapter.readEvents(meta.id))
      if (item.event) events.push(`${item.event.seq}:${item.event.type}`);
    expect(events[0]).toBe("1:turn.started");
    expect(events).toHaveLength(7);
    await adapter.close();
  });
});
