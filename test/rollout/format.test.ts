/** The waterfall's numbers: rounded first, so a value just under a unit's edge carries over. */
import { expect, test } from "bun:test";
import { buildTrace } from "../../src/rollout/folds/trace.ts";
import { fmtMs, fmtTokens, renderWaterfall } from "../../src/rollout/waterfall.ts";

test("durations carry into the next unit instead of showing 60 of the last", () => {
  const cases: [number, string][] = [
    [0, "0ms"],
    [999.4, "999ms"],
    [999.6, "1.00s"],
    [1500, "1.50s"],
    [59_994, "59.99s"],
    [59_996, "1m00.0s"],
    [119_960, "2m00.0s"],
    [125_000, "2m05.0s"],
    [3_599_990, "1h00m"],
    [3_725_000, "1h02m"],
  ];
  expect(cases.map(([ms]) => [ms, fmtMs(ms)])).toEqual(cases);
});

test("token counts carry from k to M", () => {
  const cases: [number, string][] = [
    [999, "999"],
    [1000, "1.0k"],
    [999_949, "999.9k"],
    [999_960, "1.0M"],
    [3_400_000, "3.4M"],
  ];
  expect(cases.map(([n]) => [n, fmtTokens(n)])).toEqual(cases);
});

test("an empty log says it has no events rather than starting in 1970", () => {
  const text = renderWaterfall(buildTrace("empty", []), { width: 100, color: false });
  expect(text.split("\n")[0]).toBe("session empty  (no events)  open (no session.ended)");
});
