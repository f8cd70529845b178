/**
 * A value shown on one line: a string (or anything else as its JSON) with each run of whitespace
 * folded to one space, cut to `n` characters with an ellipsis. Exactly
 * `clip(s.replace(/\s+/g, " "), n)`, but only as much of the head is folded as fills the line: a
 * tool result of megabytes was folded whole (and the result flattened) to show 100 characters.
 * A folded prefix is a prefix of the folded whole: a whitespace run cut short still folds to one
 * space.
 */

const WS = /\s+/g;

/** `s` cut to `n` characters, the last one an ellipsis when it was longer. */
export const clip = (s: string, n: number): string => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

/**
 * `s` folded (each run of whitespace one space) as far as needed: a folded prefix longer than `n`
 * characters, or all of `s` folded when it is not that long.
 */
export function foldedHead(s: string, n: number): string {
  for (let take = Math.max(n * 2, 64); ; take *= 2) {
    const head = s.slice(0, take).replace(WS, " ");
    if (head.length > n || take >= s.length) return head;
  }
}

/** `x` on one line, at most `n` characters (see above). */
export function oneLine(x: unknown, n: number): string {
  return clip(foldedHead(typeof x === "string" ? x : (JSON.stringify(x) ?? ""), n), n);
}
