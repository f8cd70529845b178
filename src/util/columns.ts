/**
 * Recorded text fitted to terminal columns, for tables and waterfalls: control characters escaped
 * as `escapeLine` shows them (an escape is never cut in two: a `\u2066` cut showed as `\u…`),
 * East Asian wide characters and emoji counted as the two columns a terminal gives them (a row of
 * Chinese tool names ran 97 columns in an 80-column table, its bar shifted), cut where a character
 * ends, with an ellipsis.
 */
import { escapeLine } from "./one-line.ts";

const graphemes = new Intl.Segmenter(undefined, { granularity: "grapheme" });
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

/** `text` on one line in at most `cols` columns, and the columns it takes. */
export function fitColumns(text: string, cols: number): { text: string; width: number } {
  if (cols <= 0) return { text: "", width: 0 };
  // Most labels are plain ASCII: a column a character.
  const head = text.length > cols ? text.slice(0, cols + 1) : text;
  if (PRINTABLE_ASCII.test(head))
    return text.length <= cols
      ? { text, width: text.length }
      : { text: `${text.slice(0, cols - 1)}…`, width: cols };
  let out = "";
  let width = 0;
  let cutAt = "";
  let cutWidth = 0;
  for (const { segment } of graphemes.segment(text)) {
    const shown = escapeLine(segment);
    const w = shown === segment ? Bun.stringWidth(segment) : shown.length;
    // Where an ellipsis would go if what follows does not fit.
    if (width + w <= cols - 1) [cutAt, cutWidth] = [out + shown, width + w];
    if (width + w > cols) return { text: `${cutAt}…`, width: cutWidth + 1 };
    out += shown;
    width += w;
  }
  return { text: out, width };
}

/** `text` fitted to `cols` columns and padded with spaces to exactly that many. */
export function padColumns(text: string, cols: number): string {
  const fit = fitColumns(text, cols);
  return fit.text + " ".repeat(Math.max(0, cols - fit.width));
}
