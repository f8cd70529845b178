/**
 * From a validation issue's path (`["expect", 2, "expectTool", "count"]`) back to a line of the case
 * file, so errors and CI annotations land on the right line. JSON is walked with a small position-
 * tracking scanner; YAML by indentation where it is block style, and with the same scanner where a
 * value is a flow collection (`expect: [ {expectTool: {…}} ]`). When a path cannot be followed
 * further (an odd layout), the line of the deepest segment found is returned.
 */

export type PathSegment = string | number;

/** Line (1-based) of the value at `path` in JSON text; also reports the line of a syntax error. */
export function locateJson(text: string, path: PathSegment[]): number {
  return locateFlow(text, 0, 1, path).line;
}

/**
 * The value at `path` in flow-style text starting at `start` (on line `line`): JSON, or a YAML flow
 * collection (`{name: bash, count: {min: -1}}`, `[a, 'b', "c"]`: plain and quoted scalars, comments)
 * — the line of the deepest segment found, and how many segments were.
 */
function locateFlow(
  text: string,
  start: number,
  line: number,
  path: PathSegment[],
): { line: number; depth: number } {
  let i = start;
  let found = line;
  let deepest = 0;
  const ws = () => {
    while (i < text.length) {
      const c = text[i]!;
      if (c === "#" && (i === 0 || /\s/.test(text[i - 1]!))) while (i < text.length && text[i] !== "\n") i++;
      else if (/\s/.test(c)) {
        if (c === "\n") line++;
        i++;
      } else break;
    }
  };
  const quoted = (): string => {
    const q = text[i]!;
    const from = ++i;
    for (; i < text.length; i++) {
      const c = text[i];
      if (c === "\n") line++;
      if (q === '"' && c === "\\") i++;
      else if (c === q) {
        if (q === "'" && text[i + 1] === "'")
          i++; // `''`: a quote inside
        else break;
      }
    }
    const raw = text.slice(from, i++);
    if (q === "'") return raw.replaceAll("''", "'");
    try {
      return JSON.parse(`"${raw}"`) as string;
    } catch {
      return raw; // a YAML escape JSON lacks: the key is compared as written
    }
  };
  // A plain scalar: up to a flow indicator, a comment, or (a key) `: `.
  const plain = (key: boolean): string => {
    const from = i;
    while (i < text.length) {
      const c = text[i]!;
      if (c === "," || c === "]" || c === "}" || c === "{" || c === "[") break;
      if (c === ":" && (key || /[\s,\]}]/.test(text[i + 1] ?? " "))) break;
      if (c === "#" && /\s/.test(text[i - 1] ?? " ")) break;
      if (c === "\n") line++;
      i++;
    }
    return text.slice(from, i).trim();
  };
  const scalar = (key: boolean) => (text[i] === '"' || text[i] === "'" ? quoted() : plain(key));
  // Skip one value, or descend into it when it lies on the path.
  const value = (depth: number): void => {
    ws();
    // An anchor or a tag before the value (`&a {…}`, `!!seq […]`): not part of it.
    while ((text[i] === "&" || text[i] === "!") && i < text.length) {
      while (i < text.length && !/\s/.test(text[i]!)) i++;
      ws();
    }
    const onPath = depth < path.length;
    const open = text[i];
    if (open === "{" || open === "[") {
      const close = open === "{" ? "}" : "]";
      i++;
      for (let n = 0; ; n++) {
        ws();
        if (i >= text.length) return;
        if (text[i] === close) return void i++;
        const here = line;
        let key: PathSegment = n;
        if (open === "{") {
          key = scalar(true);
          ws();
          if (text[i] === ":") i++;
        }
        const hit = onPath && path[depth] === key;
        if (hit) {
          found = here;
          deepest = depth + 1;
        }
        ws();
        // `{a, b}`: a key without a value.
        if (!(open === "{" && (text[i] === "," || text[i] === close)))
          value(hit ? depth + 1 : Number.POSITIVE_INFINITY);
        if (hit) throw DONE;
        ws();
        const sep = text[i++];
        if (sep !== ",") return;
      }
    }
    if (open !== undefined) scalar(false);
  };
  try {
    value(0);
  } catch (error) {
    if (error !== DONE) throw error;
  }
  return { line: found, depth: deepest };
}
const DONE = Symbol("done");

const indentOf = (s: string) => s.length - s.trimStart().length;
const blank = (s: string) => s.trim() === "" || s.trimStart().startsWith("#");

/** Line (1-based) of the value at `path` in block-style YAML; `firstLine` offsets a document. */
export function locateYaml(text: string, path: PathSegment[], firstLine = 1): number {
  // A document that is itself one flow collection (JSON text in a .yaml file), maybe behind an
  // anchor or a tag (`&doc {…}`, `!!map {…}`).
  const start = /^(?:\s|#[^\n]*)*(?:[&!]\S*\s+)*/.exec(text)![0].length;
  if (text[start] === "{" || text[start] === "[") {
    const at = locateFlow(text, 0, 0, path);
    return at.line + firstLine;
  }
  const lines = text.split("\n");
  // The region being searched: [from, to) and the column its entries start at.
  let from = 0;
  let to = lines.length;
  let found = from;
  for (const [k, seg] of path.entries()) {
    let hit = -1;
    let col = -1;
    for (let n = from; n < to; n++) {
      const raw = lines[n]!;
      if (blank(raw)) continue;
      // Entries of "- key: v" items start after the dash.
      let body = raw.trimStart();
      let c = indentOf(raw);
      if (typeof seg === "number") {
        if (!body.startsWith("-")) continue;
        if (col === -1) col = c;
        if (c !== col) continue;
        if (countItems(lines, from, n, col) === seg) {
          hit = n;
          break;
        }
        continue;
      }
      while (body.startsWith("- ")) {
        body = body.slice(2).trimStart();
        c = raw.length - body.length;
      }
      if (col === -1) col = c;
      if (c !== col) continue;
      const key = /^(?:"([^"]*)"|'([^']*)'|([^:#]+?))\s*:(\s|$)/.exec(body);
      if (key && (key[1] ?? key[2] ?? key[3]) === seg) {
        hit = n;
        break;
      }
    }
    if (hit === -1) break;
    found = hit;
    const rest = path.slice(k + 1);
    const flow = rest.length > 0 ? flowAfter(lines, hit, seg) : undefined;
    if (flow !== undefined) {
      const offset = lines.slice(0, flow.line).reduce((n, l) => n + l.length + 1, 0) + flow.column;
      const at = locateFlow(text, offset, flow.line, rest);
      return (at.depth > 0 ? at.line : hit) + firstLine;
    }
    // The child region runs until a line at or left of this entry's column; a key's block sequence
    // may sit at the key's own column ("key:\n- a").
    let end = hit + 1;
    const dashAtCol = (l: string) => indentOf(l) === col && l.trimStart().startsWith("-");
    const seqAtCol = typeof seg === "string" && end < to && dashAtCol(lines[end]!);
    while (
      end < to &&
      (blank(lines[end]!) || indentOf(lines[end]!) > col || (seqAtCol && dashAtCol(lines[end]!)))
    )
      end++;
    // A sequence item's first key shares the item's line, so search it too; a key's children follow it.
    from = typeof seg === "number" ? hit : hit + 1;
    to = end;
  }
  return found + firstLine;
}

/**
 * Where the value of the entry found at line `at` starts when it is a flow collection (`key: {…}`,
 * `- [ … ]`, or `key:` with the collection on the next line): its 0-based line and column.
 */
function flowAfter(
  lines: string[],
  at: number,
  seg: PathSegment,
): { line: number; column: number } | undefined {
  const raw = lines[at]!;
  let column = indentOf(raw);
  if (typeof seg === "number") {
    column += 1; // past the dash
  } else {
    const colon = /^\s*(?:-\s+)*(?:"[^"]*"|'[^']*'|[^:#]+?)\s*:(?=\s|$)/.exec(raw);
    if (!colon) return undefined;
    column = colon[0].length;
  }
  // Past an anchor or a tag (`&a`, `!!seq`) and the spaces around them.
  const props = /^\s*(?:[&!]\S*\s+)*/.exec(raw.slice(column))![0];
  column += props.length;
  if (raw[column] === "{" || raw[column] === "[") return { line: at, column };
  if (column < raw.length && raw[column] !== "#") return undefined;
  for (let n = at + 1; n < lines.length; n++) {
    if (blank(lines[n]!)) continue;
    const c = indentOf(lines[n]!);
    return lines[n]![c] === "{" || lines[n]![c] === "[" ? { line: n, column: c } : undefined;
  }
  return undefined;
}

/** How many sequence items at column `col` start in [from, upto). */
function countItems(lines: string[], from: number, upto: number, col: number): number {
  let n = 0;
  for (let k = from; k < upto; k++) {
    const l = lines[k]!;
    if (!blank(l) && indentOf(l) === col && l.trimStart().startsWith("-")) n++;
  }
  return n;
}

/** The 1-based line near a YAML syntax error: one past the longest prefix that still parses. */
export function yamlErrorLine(text: string): number {
  const lines = text.split("\n");
  for (let n = lines.length - 1; n >= 0; n--) {
    try {
      Bun.YAML.parse(lines.slice(0, n).join("\n"));
      return n + 1;
    } catch {
      // keep shrinking
    }
  }
  return 1;
}
