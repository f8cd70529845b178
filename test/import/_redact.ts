/** What the `--redact` tests share. */
import { expect } from "bun:test";
import { redactText } from "../../src/import/redact.ts";

/** What a masked value reads as. */
export const M = "[REDACTED]";

/**
 * `input` redacts to `expected` as it is and JSON-encoded once and twice, as a Codex output or an
 * MCP result holds it, with more of the document after it (a value last in its string must keep
 * the string's end).
 */
export function expectRedacted(input: string, expected: string): void {
  expect(redactText(input)).toBe(expected);
  const once = JSON.stringify({ out: input, more: 1 });
  expect(JSON.parse(redactText(once))).toEqual({ out: expected, more: 1 });
  expect(JSON.parse(JSON.parse(redactText(JSON.stringify(once))))).toEqual({ out: expected, more: 1 });
}
