/**
 * Post-processing of a model's title answer (seed 002): thinking blocks out, then the first line
 * that still says something once quotes, "Title:" prefixes, markdown, control and bidi characters
 * are gone, clamped to 80 characters. An answer with nothing usable (empty, only punctuation, a
 * refusal) gives `undefined`: the caller keeps the current title.
 */

/** Generated titles are cut here (seed 002). */
export const TITLE_MAX_CHARS = 80;

const THINK_BLOCK = /<(think|thinking|reasoning)\b[^>]*>[\s\S]*?<\/\1\s*>/gi;
/** An opening tag never closed (the answer was cut in its reasoning): everything after it is reasoning. */
const THINK_OPEN = /<(?:think|thinking|reasoning)\b[^>]*>[\s\S]*$/i;
/** A closing tag without its opening one (some models leave it out): everything before it is reasoning. */
const THINK_CLOSE = /^[\s\S]*<\/(?:think|thinking|reasoning)\s*>/i;

// Control and format characters (zero-width, bidi marks and overrides, the Arabic letter mark, soft
// hyphens, tag characters): a title is shown in terminals, and must look like what it says.
const CONTROL = /\p{Cc}/gu;
const FORMAT = /\p{Cf}/gu;
/** Quotes that wrap a whole answer, by their closing one (an opening one alone is part of the title). */
const QUOTE_PAIRS: Record<string, string> = {
  '"': '"',
  "'": "'",
  "`": "`",
  "“": "”",
  "”": "”",
  "‘": "’",
  "«": "»",
  "»": "«",
  "„": "“",
  "‚": "‘",
  "「": "」",
  "『": "』",
  "‹": "›",
};

/** `s` without the quotes around it, when it is wrapped in a matching pair (`'npm test' fails` is not). */
function unquote(s: string): string {
  const close = QUOTE_PAIRS[s[0] ?? ""];
  return close !== undefined && s.length > 1 && s.endsWith(close) ? s.slice(1, -close.length).trim() : s;
}
const PREFIX =
  /^(?:(?:here(?:'s| is)\s+)?(?:a|the|my)?\s*(?:suggested|proposed|session|short|concise|chat)?\s*title(?:\s+for\s+(?:this|the)\s+session)?\s*(?:is)?\s*[:：=\-–—]\s*)/i;
const MARKDOWN_LEAD = /^(?:#{1,6}\s+|>\s*|[-*+•]\s+|\d{1,2}[.)]\s+)/;
const REFUSAL = /^(?:i'?m sorry|sorry,|i cannot|i can'?t|as an ai\b|i am unable|i'm unable)/i;

/** One line's markdown and wrapping reduced to its words (repeated: `**Title:** "X"` nests). */
function cleanLine(line: string): string {
  let s = line.replace(CONTROL, " ").replace(FORMAT, "").replace(/\s+/g, " ").trim();
  for (let previous = ""; previous !== s; ) {
    previous = s;
    s = s
      .replace(MARKDOWN_LEAD, "")
      .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1") // [text](url) → text
      .replace(/\*\*|~~|`/g, "")
      .replace(/^\*(.+)\*$/, "$1")
      .replace(/^_(.+)_$/, "$1")
      .replace(PREFIX, "")
      .replace(/[\s.,;:]+$/, "")
      .trim();
    s = unquote(s);
  }
  return s;
}

/** `s` cut to `max` characters, at a word boundary when one is near, with an ellipsis. */
function clamp(s: string, max: number): string {
  const chars = Array.from(s);
  if (chars.length <= max) return s;
  const head = chars.slice(0, max - 1).join("");
  const space = head.lastIndexOf(" ");
  return `${(space >= max / 2 ? head.slice(0, space) : head).replace(/[\s.,;:-]+$/, "")}…`;
}

/** The usable title in a model's answer, or `undefined` when there is none. */
export function cleanTitle(answer: string, max = TITLE_MAX_CHARS): string | undefined {
  const text = answer.replace(THINK_BLOCK, "\n").replace(THINK_OPEN, "").replace(THINK_CLOSE, "");
  const lines = text.split(/\r\n|\r|\n|\u2028|\u2029/);
  for (const [i, raw] of lines.entries()) {
    if (/^\s*```/.test(raw)) continue; // a code fence line around the answer
    // "Sure! Here is a title:" with the title on a later line: an introduction, not the answer.
    if (/[:：]\s*$/.test(raw) && lines.slice(i + 1).some((l) => cleanLine(l) !== "")) continue;
    const line = cleanLine(raw);
    if (!line) continue;
    // The first line that says something is the answer: a later one is an explanation.
    if (!/[\p{L}\p{N}]/u.test(line) || REFUSAL.test(line)) return undefined;
    return clamp(line, max);
  }
  return undefined;
}
