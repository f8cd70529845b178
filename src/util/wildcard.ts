/**
 * Wildcard patterns (`*` any run, `?` any one character, optionally `\` taking the next character
 * as it is), matched in time proportional to pattern × text at worst. A pattern turned into a
 * regular expression (`*` as `.*`) backtracked without bound: `*a*a*a*a*a*a*b` against 500 `a`s
 * ran past a minute, and titles and tool names come from recorded transcripts.
 */

const STAR = -1;
const ANY = -2;

export interface Wildcard {
  /** Character codes (UTF-16 units), `STAR` or `ANY`. */
  readonly units: readonly number[];
  readonly foldCase: boolean;
}

/** Compile `pattern`; `escapes`: a backslash takes the character after it literally. */
export function wildcard(pattern: string, options: { escapes: boolean; foldCase: boolean }): Wildcard {
  const source = options.foldCase ? pattern.toLowerCase() : pattern;
  const units: number[] = [];
  for (let i = 0; i < source.length; i++) {
    const c = source.charCodeAt(i);
    if (options.escapes && c === 0x5c && i + 1 < source.length) units.push(source.charCodeAt(++i));
    else if (c === 0x2a) {
      if (units.at(-1) !== STAR) units.push(STAR); // `**` is `*`
    } else if (c === 0x3f) units.push(ANY);
    else units.push(c);
  }
  return { units, foldCase: options.foldCase };
}

/** Whether `text` matches `w` whole. */
export function wildcardMatches(w: Wildcard, text: string): boolean {
  const s = w.foldCase ? text.toLowerCase() : text;
  const p = w.units;
  let pi = 0;
  let si = 0;
  // The last star seen, and where in the text its run ends so far: a mismatch after it retries
  // with that run one character longer (never more than one star is retried: linear per star).
  let star = -1;
  let mark = 0;
  while (si < s.length) {
    const u = p[pi];
    if (u !== undefined && u !== STAR && (u === ANY || u === s.charCodeAt(si))) {
      pi++;
      si++;
    } else if (u === STAR) {
      star = pi++;
      mark = si;
    } else if (star !== -1) {
      pi = star + 1;
      si = ++mark;
    } else return false;
  }
  while (p[pi] === STAR) pi++;
  return pi === p.length;
}

/** Whether `pattern` has a wildcard (`*`, `?`, or with escapes a `\`). */
export const isWildcard = (pattern: string, escapes: boolean): boolean =>
  escapes ? /[*?\\]/.test(pattern) : /[*?]/.test(pattern);
