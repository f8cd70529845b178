/**
 * One segment of an ignore rule (no `/` in it) matched against one path segment, the way git's
 * wildmatch matches them: byte by byte (`?` is one byte of UTF-8, so it does not match `é`), `*`
 * any run of bytes, `[...]` a class with ranges, `!`/`^` negation, `\` escapes and the POSIX
 * classes (`[[:digit:]]`, ASCII only, as git's own character table), and with `fold`
 * (`core.ignorecase`) git's case folding: the name's ASCII letters are compared lower-cased, a
 * range also takes a lower-case letter whose upper case is in it, and `[:upper:]` takes both cases.
 * A class left open, or one naming a POSIX class git does not know, matches nothing (git aborts).
 */

const BACKSLASH = 0x5c;
const OPEN = 0x5b; // [
const CLOSE = 0x5d; // ]
const COLON = 0x3a;
const DASH = 0x2d;
const STAR = 0x2a;
const QUESTION = 0x3f;

const isUpper = (c: number) => c >= 0x41 && c <= 0x5a;
const isLower = (c: number) => c >= 0x61 && c <= 0x7a;
const isDigit = (c: number) => c >= 0x30 && c <= 0x39;
const isAlpha = (c: number) => isUpper(c) || isLower(c);
/** git's own table: space, tab, newline and carriage return (no vertical tab or form feed). */
const isSpace = (c: number) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
const isPrint = (c: number) => c >= 0x20 && c <= 0x7e;

const POSIX: Record<string, (c: number, fold: boolean) => boolean> = {
  alnum: (c) => isAlpha(c) || isDigit(c),
  alpha: isAlpha,
  blank: (c) => c === 0x20 || c === 0x09,
  cntrl: (c) => c < 0x20 || c === 0x7f,
  digit: isDigit,
  graph: (c) => isPrint(c) && !isSpace(c),
  lower: isLower,
  print: isPrint,
  punct: (c) => isPrint(c) && !isSpace(c) && !isAlpha(c) && !isDigit(c),
  space: isSpace,
  upper: (c, fold) => isUpper(c) || (fold && isLower(c)),
  xdigit: (c) => isDigit(c) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66),
};

/** No match, and no other way of matching can help: a malformed class. */
const ABORT = -1;

/**
 * The class that opens at `p[at]` (`[`) tested on byte `t`: the index of its closing `]` when it
 * matches, `-2 - index` when it does not, or ABORT.
 */
function matchClass(p: Uint8Array, at: number, t: number, fold: boolean): number {
  let i = at + 1;
  let c = p[i];
  const negated = c === 0x21 || c === 0x5e; // ! or ^
  if (negated) c = p[++i];
  let prev = 0;
  let matched = false;
  do {
    if (c === undefined) return ABORT;
    if (c === BACKSLASH) {
      c = p[++i];
      if (c === undefined) return ABORT;
      if (t === c) matched = true;
    } else if (c === DASH && prev !== 0 && p[i + 1] !== undefined && p[i + 1] !== CLOSE) {
      c = p[++i]!;
      if (c === BACKSLASH) {
        c = p[++i];
        if (c === undefined) return ABORT;
      }
      if (t <= c && t >= prev) matched = true;
      else if (fold && isLower(t) && t - 32 <= c && t - 32 >= prev) matched = true;
      c = 0; // a range is not the start of the next one
    } else if (c === OPEN && p[i + 1] === COLON) {
      const start = i + 2;
      let end = start;
      while (p[end] !== undefined && p[end] !== CLOSE) end++;
      if (p[end] === undefined) return ABORT;
      if (end - start - 1 < 0 || p[end - 1] !== COLON) {
        // No `:]`: the `[` is an ordinary member, and the scan goes on after it.
        if (t === OPEN) matched = true;
        prev = OPEN;
        c = p[++i];
        continue;
      }
      const name = Buffer.from(p.subarray(start, end - 1)).toString("latin1");
      const test = Object.hasOwn(POSIX, name) ? POSIX[name] : undefined;
      if (!test) return ABORT;
      if (test(t, fold)) matched = true;
      i = end;
      c = 0;
    } else if (t === c) matched = true;
    prev = c;
    c = p[++i];
  } while (c !== CLOSE);
  return matched !== negated ? i : -2 - i;
}

/** Whether `p[pi…]` matches `t[ti…]` whole. */
function matchFrom(
  p: Uint8Array,
  pi: number,
  t: Uint8Array,
  ti: number,
  fold: boolean,
): boolean | typeof ABORT {
  for (; pi < p.length; pi++, ti++) {
    let pc = p[pi]!;
    if (pc === STAR) {
      while (p[pi + 1] === STAR) pi++;
      if (pi + 1 === p.length) return true;
      for (let k = ti; k <= t.length; k++) {
        const r = matchFrom(p, pi + 1, t, k, fold);
        if (r !== false) return r;
      }
      return false;
    }
    if (ti >= t.length) return false;
    let tc = t[ti]!;
    if (fold && isUpper(tc)) tc += 32;
    if (pc === QUESTION) continue;
    if (pc === OPEN) {
      const end = matchClass(p, pi, tc, fold);
      if (end === ABORT) return ABORT;
      if (end < 0) return false;
      pi = end;
      continue;
    }
    if (pc === BACKSLASH) {
      // A backslash at the end escapes nothing: git matches nothing with it.
      if (pi + 1 === p.length) return false;
      pc = p[++pi]!;
    }
    if (fold && isUpper(pc)) pc += 32;
    if (pc !== tc) return false;
  }
  return ti === t.length;
}

/** Whether the glob segment `glob` matches the name `name` (see above). */
export function wildmatchSegment(glob: string, name: string, fold = false): boolean {
  return matchFrom(Buffer.from(glob, "utf8"), 0, Buffer.from(name, "utf8"), 0, fold) === true;
}
