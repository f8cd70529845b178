/**
 * A value shown on one line: a string (or anything else as its JSON) with each run of whitespace
 * folded to one space, cut to `n` characters with an ellipsis. Exactly
 * `clip(s.replace(/\s+/g, " "), n)`, but only as much of the head is folded as fills the line: a
 * tool result of megabytes was folded whole (and the result flattened) to show 100 characters.
 * A folded prefix is a prefix of the folded whole: a whitespace run cut short still folds to one
 * space. Control characters left after folding are shown escaped (`\x1b`), never sent to the
 * terminal: recorded tool output carries colour codes and worse (see `escapeLine`).
 */

import { cutText } from "./cut-text.ts";

const WS = /\s+/g;

/** `s` cut to `n` characters, the last one an ellipsis when it was longer. */
export const clip = (s: string, n: number): string => cutText(s, n);

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
  return clip(escapeLine(foldedHead(typeof x === "string" ? x : (JSON.stringify(x) ?? ""), n)), n);
}

/** A control character as text: `\n`, `\r`, `\xHH`, else `\uHHHH`. */
export const escapeControl = (c: string): string => {
  const code = c.charCodeAt(0);
  if (c === "\n") return "\\n";
  if (c === "\r") return "\\r";
  return code <= 0xff
    ? `\\x${code.toString(16).padStart(2, "0")}`
    : `\\u${code.toString(16).padStart(4, "0")}`;
};

// C0 controls, DEL and C1 controls: what a terminal acts on (colours, cursor moves, title changes,
// clearing the screen) rather than shows. A tab is shown as it is. Also the bidirectional
// embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069): they reorder what follows
// them, so `invoice\u202Egnp.exe` read as `invoice…exe.png` (the marks LRM, RLM and ALM, which
// right-to-left text uses, move no runs and are kept).
const LINE_CONTROLS = /[\x00-\x08\x0a-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/g;
// The same, keeping line ends (`\n`, and `\r` just before one) in text shown on several lines.
const TEXT_CONTROLS = /\r(?!\n)|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/g;

/**
 * Recorded text (a tool's output, a message, a reason) made safe to print on one line: every
 * control character escaped, so `ESC[2J` in a log cannot clear the reader's screen.
 */
export const escapeLine = (s: string): string => s.replace(LINE_CONTROLS, escapeControl);

/** As `escapeLine`, for text shown on several lines: line ends and tabs are kept. */
export const escapeText = (s: string): string => s.replace(TEXT_CONTROLS, escapeControl);
