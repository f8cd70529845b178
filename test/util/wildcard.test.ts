/** Wildcards: the same verdicts as the regular expression they replace, without its backtracking. */
import { expect, test } from "bun:test";
import { nameMatches } from "../../src/eval/match/glob.ts";
import { priceFor } from "../../src/rollout/folds/usage.ts";
import { wildcard, wildcardMatches } from "../../src/util/wildcard.ts";
import { seeded } from "../_random.ts";

/** The rule written the obvious way: `*` as `.*`, `?` as `.`, a backslash escaping (dotAll). */
function asRegex(pattern: string): RegExp {
  let body = "";
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === "\\" && i + 1 < pattern.length) body += RegExp.escape(pattern[++i]!);
    else if (c === "*") body += ".*";
    else if (c === "?") body += ".";
    else body += RegExp.escape(c);
  }
  return new RegExp(`^${body}$`, "is");
}

test("agrees with the regular expression on random patterns and texts (WILDCARD_SEEDS)", () => {
  const seeds = Number(process.env.WILDCARD_SEEDS) || 3000;
  const letters = ["a", "b", "A", "*", "?", "\\", "é", "\n"];
  for (let seed = 1; seed <= seeds; seed++) {
    const r = seeded(seed);
    const pattern = Array.from({ length: r.int(7) }, () => r.pick(letters)).join("");
    const text = Array.from({ length: r.int(9) }, () => r.pick(["a", "b", "A", "*", "é", "\n", "\\"])).join(
      "",
    );
    const w = wildcard(pattern, { escapes: true, foldCase: true });
    expect([seed, pattern, text, wildcardMatches(w, text)]).toEqual([
      seed,
      pattern,
      text,
      asRegex(pattern).test(text),
    ]);
  }
});

test("regression: a pattern of many stars against a long near-miss answers at once (it backtracked for minutes)", () => {
  const started = performance.now();
  const long = "a".repeat(120_000);
  expect(nameMatches("*a*a*a*a*a*a*a*b", "a".repeat(500))).toBe(false);
  expect(nameMatches("*fix*login*", long)).toBe(false);
  expect(nameMatches("*a*a*a*a*a*a*a*a", long)).toBe(true);
  expect(priceFor({ "*a*a*a*a*a*a*b": { input: 1, output: 1 } }, "p", "a".repeat(2000))).toBeUndefined();
  // Generous: the regex took over 60 s on the first line alone; this takes milliseconds.
  expect(performance.now() - started).toBeLessThan(5_000);
});

test("escapes, case and plain names", () => {
  expect(nameMatches("mcp__x__\\*", "mcp__x__*")).toBe(true);
  expect(nameMatches("mcp__x__\\*", "mcp__x__run")).toBe(false);
  expect(nameMatches("READ*", "read_file")).toBe(true);
  expect(nameMatches("Bash", "bash")).toBe(true);
  expect(priceFor({ "claude-*": { input: 3, output: 15 } }, "anthropic", "claude-x")?.input).toBe(3);
  expect(priceFor({ "anthropic/*": { input: 2, output: 9 } }, "anthropic", "m")?.input).toBe(2);
  expect(priceFor({ "Claude-*": { input: 3, output: 15 } }, "anthropic", "claude-x")).toBeUndefined();
});
