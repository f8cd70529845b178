/**
 * Text helpers that look at the head of a possibly huge string (a pasted file, a long tool output)
 * without copying or scanning all of it. Each returns exactly what the naive whole-string version
 * returns; they only stop early once the rest cannot change the answer.
 */

import { foldedHead } from "../util/one-line.ts";

/**
 * `text.replace(/\s+/g, " ").trim().slice(0, n)`, folding only as much of `text` as needed. A
 * folded head longer than `n + 1` loses at most one leading space to the trim, and its first `n`
 * characters after that are the answer.
 */
export function foldHead(text: string, n: number): string {
  return foldedHead(text, n + 1)
    .trim()
    .slice(0, n);
}

type TextBlock = Record<string, unknown> | null | undefined;
const blockText = (b: TextBlock) => (b && typeof b === "object" && typeof b.text === "string" ? b.text : "");

/**
 * The first characters of `blocks.map(text).join("\n")`: at least `n` of them when the whole is
 * longer, else the whole. Stops joining once `n` is passed.
 */
export function joinedHead(blocks: readonly TextBlock[], n: number): string {
  let text = "";
  for (let i = 0; i < blocks.length; i++) {
    if (i > 0) text += "\n";
    text += blockText(blocks[i]);
    if (text.length > n) break;
  }
  return text;
}
