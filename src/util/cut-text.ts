/**
 * Cutting text to a length without breaking a character, and counting characters as a person
 * does. A cut by UTF-16 units that fell inside a surrogate pair left half an emoji (a lone
 * surrogate: shown as U+FFFD, stored as `\ud83d`); one inside a grapheme cluster left a letter
 * without its accent, or a ZWJ emoji sequence in pieces. A cut moves back to the start of the
 * cluster it fell in; only the few units around it are segmented, however long the text.
 */

const graphemes = new Intl.Segmenter(undefined, { granularity: "grapheme" });
/** How far back a cut looks for its cluster's start (a longer cluster, a run of hundreds of
 * combining marks, is cut between code points). */
const WINDOW = 64;

const isHigh = (c: number) => c >= 0xd800 && c <= 0xdbff;
const isLow = (c: number) => c >= 0xdc00 && c <= 0xdfff;

/** The start of the grapheme cluster that holds `s[at]` (`at` itself when a cluster begins there). */
export function clusterStart(s: string, at: number): number {
  if (at <= 0) return 0;
  if (at >= s.length) return s.length;
  const from = Math.max(0, at - WINDOW);
  let start = -1;
  for (const { index } of graphemes.segment(s.slice(from, Math.min(s.length, at + 2)))) {
    if (from + index > at) break;
    start = from + index;
  }
  // The window began inside a cluster longer than it: at least no surrogate pair is split.
  if (start <= from && from > 0) return isLow(s.charCodeAt(at)) && isHigh(s.charCodeAt(at - 1)) ? at - 1 : at;
  return start;
}

/** The head of `s` of at most `max` UTF-16 units that ends where a character does. */
export function headOf(s: string, max: number): string {
  return s.length <= max ? s : s.slice(0, clusterStart(s, Math.max(0, max)));
}

/** `s` cut to at most `max` UTF-16 units, the last of them `mark`, when it is longer. */
export function cutText(s: string, max: number, mark = "…"): string {
  return s.length <= max ? s : `${headOf(s, max - mark.length)}${mark}`;
}

/** How many characters (code points) `s` holds: an emoji is one, not the two units `length` counts. */
export function charCount(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

/** The head of `s` of at most `max` characters (code points, as `charCount` counts them) that ends
 * where a character does: a limit counted in characters cuts there, not at `max` UTF-16 units. */
export function headOfChars(s: string, max: number): string {
  if (s.length <= max) return s;
  let units = 0;
  let chars = 0;
  for (const c of s) {
    if (chars === max) return s.slice(0, clusterStart(s, units));
    units += c.length;
    chars++;
  }
  return s;
}
