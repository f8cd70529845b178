/**
 * `oneLine` and the importers' `foldHead` fold only the head they need, and give exactly what
 * folding the whole string gives.
 */
import { expect, test } from "bun:test";
import { foldHead } from "../../src/import/text.ts";
import { clip, escapeLine, escapeText, oneLine } from "../../src/util/one-line.ts";
import { seeded } from "../_random.ts";

const naiveHead = (s: string, n: number) => s.replace(/\s+/g, " ").trim().slice(0, n);
const naive = (x: unknown, n: number) =>
  clip((typeof x === "string" ? x : (JSON.stringify(x) ?? "")).replace(/\s+/g, " "), n);

test("edge cases: whitespace runs across the cut, exact lengths, non-strings", () => {
  const cases: unknown[] = [
    "",
    "a",
    " ".repeat(500),
    `${"x".repeat(99)}${" \n\t".repeat(300)}y`,
    `${"x".repeat(100)}`,
    `${"x".repeat(101)}`,
    `${"ab \n".repeat(10_000)}`,
    { content: `line 1\n\n    line 2\t\t${"z".repeat(300)}` },
    undefined,
    [1, "two", { three: "  3  " }],
  ];
  for (const x of cases)
    for (const n of [1, 2, 80, 100, 200]) {
      expect(oneLine(x, n)).toBe(naive(x, n));
      if (typeof x === "string") expect(foldHead(x, n)).toBe(naiveHead(x, n));
    }
});

test("random strings of letters and whitespace runs give what folding the whole gives (ONE_LINE_SEEDS, default 200)", () => {
  const seeds = Number(process.env.ONE_LINE_SEEDS) || 200;
  for (let seed = 1; seed <= seeds; seed++) {
    const r = seeded(seed);
    let s = "";
    for (let i = 0, parts = r.int(400); i < parts; i++)
      s += r.chance(0.5)
        ? "w".repeat(1 + r.int(30))
        : r.pick([" ", "\n", "\t", "\r\n", "  "]).repeat(1 + r.int(40));
    const n = 1 + r.int(150);
    expect([seed, oneLine(s, n), foldHead(s, n)]).toEqual([seed, naive(s, n), naiveHead(s, n)]);
  }
});

test("regression: bidirectional overrides and isolates are escaped, so recorded text cannot reorder what the terminal shows (`invoice\\u202egnp.exe` read as `invoice…exe.png`)", () => {
  expect(escapeLine("open invoice\u202egnp.exe now")).toBe("open invoice\\u202egnp.exe now");
  expect(escapeText("a\u2066b\u2069\nc\u202ad")).toBe("a\\u2066b\\u2069\nc\\u202ad");
  // The marks right-to-left text uses move no runs: kept.
  expect(escapeLine("שלום\u200f abc\u200e")).toBe("שלום\u200f abc\u200e");
  expect(escapeLine("\x1b[2J")).toBe("\\x1b[2J");
});
