/**
 * Text helpers that look at the head of a possibly huge string (a pasted file, a long tool output)
 * without copying or scanning all of it. Each returns exactly what the naive whole-string version
 * returns; they only stop early once the rest cannot change the answer.
 */

const WS = /\s+/g;

/**
 * `text.replace(/\s+/g, " ").trim().slice(0, n)`, folding only as much of `text` as needed. The
 * folded head of a prefix is a prefix of the folded whole (a whitespace run cut at the end still
 * folds to one space), and the final trim removes at most one trailing space, so once the head is
 * longer than `n` its first `n` characters are the answer.
 */
export function foldHead(text: string, n: number): string {
  for (let len = Math.max(n * 4, 256); len < text.length; len *= 4) {
    const head = text.slice(0, len).replace(WS, " ").trimStart();
    if (head.length > n) return head.slice(0, n);
  }
  return text.replace(WS, " ").trim().slice(0, n);
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
