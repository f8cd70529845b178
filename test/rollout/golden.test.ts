/**
 * Golden: the fixture's trace JSON and OTLP export against committed snapshots (a change to either is
 * a visible diff in review). The OTLP document is also loaded back and checked against the OTLP/JSON
 * encoding rules (hex ids, integer enums, 64-bit integers as decimal strings, parents that exist).
 */
import { describe, expect, test } from "bun:test";
import { traceToOtlp, writeOtlpJson } from "../../src/rollout/otlp.ts";
import { renderWaterfall } from "../../src/rollout/waterfall.ts";
import { FIXTURE_SOURCE, loadTrace } from "./_events.ts";

describe("golden", () => {
  test("trace JSON of the fixture log", async () => {
    // The plain JSON form (what `trace --json` prints): the Trace's spans are views over rows.
    expect(JSON.parse(JSON.stringify(await loadTrace(FIXTURE_SOURCE)))).toMatchSnapshot();
  });

  test("waterfall of the fixture log (no colour, 100 columns)", async () => {
    expect(renderWaterfall(await loadTrace(FIXTURE_SOURCE), { width: 100 })).toMatchSnapshot();
  });

  test("OTLP/JSON: snapshot, and valid when loaded back", async () => {
    const trace = await loadTrace(FIXTURE_SOURCE);
    const text = JSON.stringify(traceToOtlp(trace, { version: "test" }));
    // What `trace --otlp` writes a span at a time is the same text.
    const pieces: string[] = [];
    expect(writeOtlpJson(trace, (t) => pieces.push(t), { version: "test" })).toBe(
      JSON.parse(text).resourceSpans[0].scopeSpans[0].spans.length,
    );
    expect(pieces.join("")).toBe(text);
    const doc = JSON.parse(text);
    expect(doc).toMatchSnapshot();
    const spans: Record<string, unknown>[] = doc.resourceSpans[0].scopeSpans[0].spans;
    const ids = new Set(spans.map((s) => s.spanId));
    for (const s of spans) {
      expect(s.traceId).toMatch(/^[0-9a-f]{32}$/);
      expect(s.spanId).toMatch(/^[0-9a-f]{16}$/);
      if (s.parentSpanId !== undefined) expect(ids.has(s.parentSpanId)).toBe(true);
      expect(s.startTimeUnixNano).toMatch(/^\d+$/);
      expect(BigInt(s.endTimeUnixNano as string) >= BigInt(s.startTimeUnixNano as string)).toBe(true);
      expect([1, 3]).toContain(s.kind as number);
      expect([0, 1, 2]).toContain((s.status as { code: number }).code);
      for (const a of s.attributes as { key: string; value: Record<string, unknown> }[]) {
        const [kind] = Object.keys(a.value);
        expect(["stringValue", "intValue", "doubleValue", "boolValue"]).toContain(kind!);
        if (kind === "intValue") expect(a.value.intValue).toMatch(/^-?\d+$/);
      }
    }
    expect(ids.size).toBe(spans.length);
    const names = spans.map((s) => s.name);
    expect(names).toContain("invoke_agent freecode");
    expect(names.filter((n) => (n as string).startsWith("chat "))).toHaveLength(4);
    const denied = spans.find((s) =>
      (s.attributes as { key: string }[]).some(
        (a) => a.key === "error.type" && JSON.stringify(a).includes("denied"),
      ),
    )!;
    expect(denied.name).toBe("execute_tool Write");
    const attr = (s: Record<string, unknown>, key: string) =>
      (s.attributes as { key: string; value: Record<string, unknown> }[]).find((a) => a.key === key)?.value;
    expect(attr(denied, "rollout.denied.source")).toEqual({ stringValue: "mode" });
    const first = spans.find((s) => s.name === "chat claude-sonnet-4")!;
    expect(attr(first, "gen_ai.response.time_to_first_chunk")).toEqual({ doubleValue: 0.4 });
    // OTel's input tokens include cached ones: 1000 input + 5000 cache reads + 100 cache writes.
    expect(attr(first, "gen_ai.usage.input_tokens")).toEqual({ intValue: "6100" });
    // Success is left Unset (0), never OK; the unanswered Bash call is exported, open, as ERROR.
    expect(spans.filter((s) => (s.status as { code: number }).code === 1)).toEqual([]);
    const open = spans.filter((s) => attr(s, "rollout.incomplete") !== undefined).map((s) => s.name);
    expect(open).toEqual(["chat gpt-5", "execute_tool Bash"]);
  });
});
