/**
 * From a validation issue's path (`["expect", 2, "expectTool", "count"]`) back to a line of the case
 * file, so errors and CI annotations land on the right line. JSON is walked with a small position-
 * tracking scanner; YAML (block style, what case files use) by indentation. When a path cannot be
 * followed further (flow style, odd layout), the line of the deepest segment found is returned.
 */

export type PathSegment = string | number;

/** Line (1-based) of the value at `path` in JSON text; also reports the line of a syntax error. */
export function locateJson(text: string, path: PathSegment[]): number {
  let i = 0;
  let line = 1;
  let found = 1;
  const ws = () => {
    while (i < text.length && /\s/.test(text[i]!)) if (text[i++] === "\n") line++;
  };
  const str = () => {
    const start = ++i;
    while (i < text.length && text[i] !== '"') i += text[i] === "\\" ? 2 : 1;
    i++;
    return JSON.parse(`"${text.slice(start, i - 1)}"`) as string;
  };
  // Skip one value, or descend into it when it lies on the path.
  const value = (depth: number): void => {
    ws();
    const onPath = depth < path.length;
    if (text[i] === "{") {
      i++;
      for (;;) {
        ws();
        if (text[i] === "}") return void i++;
        const key = str();
        const keyLine = line;
        ws();
        i++; // ':'
        const hit = onPath && path[depth] === key;
        if (hit) found = keyLine;
        value(hit ? depth + 1 : Number.POSITIVE_INFINITY);
        if (hit) throw DONE;
        ws();
        if (text[i++] === "}") return;
      }
    }
    if (text[i] === "[") {
      i++;
      for (let n = 0; ; n++) {
        ws();
        if (text[i] === "]") return void i++;
        const hit = onPath && path[depth] === n;
        if (hit) found = line;
        value(hit ? depth + 1 : Number.POSITIVE_INFINITY);
        if (hit) throw DONE;
        ws();
        if (text[i++] === "]") return;
      }
    }
    if (text[i] === '"') return void str();
    while (i < text.length && !/[\s,\]}]/.test(text[i]!)) i++;
  };
  try {
    value(0);
  } catch (error) {
    if (error !== DONE) throw error;
  }
  return found;
}
const DONE = Symbol("done");

/**
 * The 1-based line of the first JSON syntax error. Bun's JSON.parse messages carry no position, so a
 * strict little recursive-descent checker finds it (only run on text that already failed to parse).
 */
export function jsonErrorLine(text: string): number {
  let i = 0;
  const lineAt = () => text.slice(0, i).split("\n").length;
  const ws = () => {
    while (i < text.length && " \t\r\n".includes(text[i]!)) i++;
  };
  const expect = (ok: boolean) => {
    if (!ok) throw lineAt();
  };
  const str = () => {
    expect(text[i] === '"');
    i++;
    while (i < text.length && text[i] !== '"') {
      expect(text[i] !== "\n");
      i += text[i] === "\\" ? 2 : 1;
    }
    expect(i < text.length);
    i++;
  };
  const value = (): void => {
    ws();
    const c = text[i];
    if (c === "{" || c === "[") {
      const close = c === "{" ? "}" : "]";
      i++;
      ws();
      if (text[i] === close) return void i++;
      for (;;) {
        if (c === "{") {
          ws();
          str();
          ws();
          expect(text[i] === ":");
          i++;
        }
        value();
        ws();
        if (text[i] === ",") {
          i++;
          continue;
        }
        expect(text[i] === close);
        i++;
        return;
      }
    }
    if (c === '"') {
      str();
      return;
    }
    const m = /^(-?\d+(\.\d+)?([eE][+-]?\d+)?|true|false|null)/.exec(text.slice(i, i + 400));
    expect(m !== null);
    i += m![0].length;
  };
  try {
    value();
    ws();
    expect(i === text.length);
  } catch (line) {
    if (typeof line === "number") return line;
    throw line;
  }
  return 1;
}

const indentOf = (s: string) => s.length - s.trimStart().length;
const blank = (s: string) => s.trim() === "" || s.trimStart().startsWith("#");

/** Line (1-based) of the value at `path` in block-style YAML; `firstLine` offsets a document. */
export function locateYaml(text: string, path: PathSegment[], firstLine = 1): number {
  const lines = text.split("\n");
  // The region being searched: [from, to) and the column its entries start at.
  let from = 0;
  let to = lines.length;
  let found = from;
  for (const seg of path) {
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
