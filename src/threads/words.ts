/**
 * Words as search sees them, one definition for both engines. A word is a run of letters, digits
 * and combining marks; it is folded (compatibility-decomposed, accents dropped, lower-cased: `ＦＵＬＬ`
 * → `full`, `ﬁnal` → `final`, `データ` → `テータ`) and split again if folding made a separator.
 * The FTS5 index is given the folded words (spaces between them, tokenized by `ascii`, which keeps
 * every non-ASCII character inside a word) instead of the raw text: unicode61 neither decomposes
 * compatibility forms nor knows the letters and emoji Unicode added after 6.1, so it split text
 * differently from the scan and missed what the scan found.
 */

/** Match markers in a snippet (see `renderSnippet`); recorded text has them removed when indexed. */
export const MARK_OPEN = "\u0002";
export const MARK_CLOSE = "\u0003";

const WORD = /[\p{L}\p{N}\p{M}]+/gu;
const LETTERS = /[\p{L}\p{N}\p{M}]+/gu;
/**
 * The marks folding drops: accents and other diacritics (the combining diacritical blocks, Cyrillic's),
 * Hebrew and Arabic vowel points, kana's voicing marks, variation selectors (`✅️` before a word).
 * Not every combining mark: in Devanagari,
 * Tamil, Thai and other scripts of India and South-East Asia the vowel signs are marks, and dropped
 * they made other words one (`दिन` "day" and `दान` "donation" both `दन`; `काम` found `कमरा`).
 */
const ACCENT_MARKS = String.raw`\u0300-\u036f\u0483-\u0489\u0591-\u05bd\u05bf\u05c1\u05c2\u05c4\u05c5\u05c7\u0610-\u061a\u064b-\u065f\u0670\u06d6-\u06dc\u06df-\u06e4\u06e7\u06e8\u06ea-\u06ed\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\u3099\u309a\ufe00-\ufe0f\ufe20-\ufe2f\u{e0100}-\u{e01ef}`;
// Made from a string: a linter takes a class of combining marks alone for a misleading one.
const ACCENTS = new RegExp(`[${ACCENT_MARKS}]+`, "gu");
const ASCII = /^[\x00-\x7f]*$/;
const ASCII_WORD = /[A-Za-z0-9]+/g;

/** Chinese and Japanese runs (no spaces between words) and the rest of a word. */
// (`ー`, the long vowel mark, is of no script but belongs to the kana around it.)
const CJK_CHARS = "\\p{Script=Han}\\p{Script=Hiragana}\\p{Script=Katakana}\\u30fc";
const CJK_RUNS = new RegExp(`[${CJK_CHARS}]+|[^${CJK_CHARS}]+`, "gu");
const CJK = new RegExp(`[${CJK_CHARS}]`, "u");

/**
 * A Chinese or Japanese run as the overlapping pairs of its characters (`数据库` → `数据 据库`; one
 * character alone is itself): written without spaces, a whole sentence was one word, and a word
 * inside it matched no query, as words match by their start. A query goes through the same
 * folding, so `数据库` asks for both pairs, and one character finds every pair it starts.
 */
function cjkPairs(run: string): string[] {
  const chars = [...run];
  if (chars.length < 2) return chars;
  const out: string[] = [];
  for (let i = 0; i + 1 < chars.length; i++) out.push(chars[i]! + chars[i + 1]!);
  // The last character starts no pair: on its own too, or a one-character word ending a run (`猫`
  // in `我爱我的猫`) was never found.
  out.push(chars.at(-1)!);
  return out;
}

/**
 * Letters compatibility decomposition leaves whole though a reader takes them for a base letter
 * with a mark, or for two letters: `Łódź` is found by `lodz`, `Ørsted` by `orsted`, `Straße` by
 * `strasse` (the README says accents are ignored; these were not).
 */
const LETTER_FOLDS: Record<string, string> = {
  ł: "l",
  ø: "o",
  đ: "d",
  ð: "d",
  ħ: "h",
  ı: "i",
  ŧ: "t",
  ß: "ss",
  æ: "ae",
  œ: "oe",
  þ: "th",
};
const FOLDED_LETTERS = new RegExp(`[${Object.keys(LETTER_FOLDS).join("")}]`, "g");

/** The folded forms of one raw word (usually one; none when it was marks only). */
function foldWord(raw: string): string[] {
  if (ASCII.test(raw)) return [raw.toLowerCase()];
  const words =
    raw
      .normalize("NFKD")
      .replace(ACCENTS, "")
      // Composed again: a Korean syllable decomposed into its letters made `하` a start of `한국어`.
      .normalize("NFC")
      .toLowerCase()
      // A capital sigma ending a word lowers to ς, which then prefixes no longer word (σ inside it).
      .replaceAll("ς", "σ")
      .replace(FOLDED_LETTERS, (c) => LETTER_FOLDS[c]!)
      .match(LETTERS) ?? [];
  if (!words.some((w) => CJK.test(w))) return words;
  return words.flatMap((w) =>
    CJK.test(w) ? (w.match(CJK_RUNS) ?? []).flatMap((r) => (CJK.test(r) ? cjkPairs(r) : [r])) : [w],
  );
}

/** The folded words of a text, in order. */
export function foldedWords(text: string): string[] {
  // Most recorded text (code, JSON arguments) is ASCII: one regex and one lower-casing.
  if (ASCII.test(text)) return text.toLowerCase().match(ASCII_WORD) ?? [];
  const out: string[] = [];
  for (const m of text.matchAll(WORD)) for (const w of foldWord(m[0])) out.push(w);
  return out;
}

/** What the FTS5 column holds for a text: its folded words separated by spaces. */
export const indexedText = (text: string) => foldedWords(text).join(" ");

/** A query's terms: its distinct folded words (empty when it has no letters or digits). */
export const queryTerms = (text: string) => [...new Set(foldedWords(text))];

/** The FTS5 MATCH expression for terms: every term, each as a word prefix. */
export const ftsExpression = (terms: string[]) => terms.map((t) => `"${t}"*`).join(" AND ");

/** How many of `words` start with each term. */
export const termCounts = (words: string[], terms: string[]) =>
  terms.map((t) => words.reduce((n, w) => n + (w.startsWith(t) ? 1 : 0), 0));

const SNIPPET_WORDS = 12;
/**
 * What one word, or the text between two words, may take of a snippet (UTF-16 units): a 2 MB
 * argument with no spaces, or a pytest banner of 3,000 `=`, was printed whole as one hit's snippet.
 */
const SNIPPET_PIECE = 80;

/** `piece`, cut to its first `SNIPPET_PIECE` characters (not inside a surrogate pair) and "…". */
function capped(piece: string): string {
  if (piece.length <= SNIPPET_PIECE) return piece;
  const c = piece.charCodeAt(SNIPPET_PIECE - 1);
  return `${piece.slice(0, c >= 0xd800 && c <= 0xdbff ? SNIPPET_PIECE - 1 : SNIPPET_PIECE)}…`;
}

/**
 * Up to 12 words of `text` around its first match, matches between the markers, "…" where text
 * was cut (a word or a gap between words longer than `SNIPPET_PIECE` too). Built here for both
 * engines, from the original text (FTS5 only holds folded words).
 */
export function snippet(text: string, terms: string[]): string {
  const spans: { start: number; end: number; hit: boolean }[] = [];
  for (const m of text.matchAll(WORD)) {
    const folded = foldWord(m[0]);
    if (folded.length === 0) continue;
    const hit = folded.some((w) => terms.some((t) => w.startsWith(t)));
    spans.push({ start: m.index, end: m.index + m[0].length, hit });
  }
  const first = Math.max(
    0,
    spans.findIndex((s) => s.hit),
  );
  const from = Math.max(0, Math.min(first - 3, spans.length - SNIPPET_WORDS));
  const to = Math.min(spans.length, from + SNIPPET_WORDS);
  let out = from > 0 ? "…" : "";
  let cursor = from > 0 ? spans[from]!.start : 0;
  for (let i = from; i < to; i++) {
    const s = spans[i]!;
    const word = capped(text.slice(s.start, s.end));
    out += capped(text.slice(cursor, s.start)) + (s.hit ? `${MARK_OPEN}${word}${MARK_CLOSE}` : word);
    cursor = s.end;
  }
  return out + (to < spans.length ? "…" : capped(text.slice(cursor)));
}
