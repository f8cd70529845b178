/**
 * A key written twice in one mapping of a case file. YAML and JSON parsers keep the last one and
 * say nothing, so a second `expect:` (two branches merged) dropped the first list of assertions, and
 * `{name: write, name: edit}` checked only `edit`. JSON is scanned exactly; YAML in block style
 * (what case files use) by indentation — keys of flow mappings (`{a: 1, a: 2}`) and text inside
 * block scalars (`|`, `>`, after an anchor or a tag too) are not looked at, and where a line is not
 * read with certainty the scan stops (`duplicateYamlKey`): a duplicate may go unseen, but nothing
 * valid is refused.
 */

/** The first repeated key and the line it is repeated on, or undefined. */
export interface DuplicateKey {
  key: string;
  line: number;
}

/** A repeated key in JSON text (which parses): every object's keys, at any depth. */
export function duplicateJsonKey(text: string, firstLine = 1): DuplicateKey | undefined {
  let line = firstLine;
  const objects: (Set<string> | null)[] = []; // null: an array
  let expectKey = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === "\n") line++;
    else if (c === "{") {
      objects.push(new Set());
      expectKey = true;
    } else if (c === "[") objects.push(null);
    else if (c === "}" || c === "]") {
      objects.pop();
      expectKey = false;
    } else if (c === ",") expectKey = objects.at(-1) != null;
    else if (c === '"') {
      const start = i;
      for (i++; i < text.length && text[i] !== '"'; i++) if (text[i] === "\\") i++;
      if (expectKey) {
        const key = JSON.parse(text.slice(start, i + 1)) as string;
        const keys = objects.at(-1)!;
        if (keys.has(key)) return { key, line };
        keys.add(key);
        expectKey = false;
      }
    }
  }
  return undefined;
}

const KEY = /^("(?:[^"\\]|\\.)*"|'(?:[^']|'')*'|[^\s#'"{[\]},&*!|>%@`-][^#]*?|-[^\s#][^#]*?)\s*:(?=\s|$)/;

/** The key text of a plain, single- or double-quoted YAML key. */
function keyText(raw: string): string {
  if (raw.startsWith('"')) return JSON.parse(raw) as string;
  if (raw.startsWith("'")) return raw.slice(1, -1).replaceAll("''", "'");
  return raw;
}

/** Brackets a flow collection leaves open on a line (quotes skipped). */
function openBrackets(text: string): number {
  let open = 0;
  let quote = "";
  for (const c of text) {
    if (quote) {
      if (c === quote) quote = "";
    } else if (c === '"' || c === "'") quote = c;
    else if (c === "#") break;
    else if (c === "{" || c === "[") open++;
    else if (c === "}" || c === "]") open--;
  }
  return open;
}

/** Whether a quoted scalar that starts `text` ends on this line (else it runs on: not followed). */
function quotedCloses(text: string): boolean {
  const q = text[0]!;
  for (let i = 1; i < text.length; i++) {
    if (q === '"' && text[i] === "\\") i++;
    else if (text[i] === q) {
      if (q === "'" && text[i + 1] === "'") i++;
      else return true;
    }
  }
  return false;
}

/** A value's anchors and tags (`&a`, `!!str`) before what it is. */
const bare = (value: string) => value.replace(/^(?:[&!]\S*\s*)+/, "");

/**
 * A repeated key in one YAML document (block style), or undefined. Where the layout is not one this
 * reads with certainty (a key with an anchor or a tag, a quoted or flow value running over lines, a
 * line that is neither a key nor a list item), it stops looking and reports nothing: a duplicate may
 * then go unseen, but nothing valid is refused.
 */
export function duplicateYamlKey(text: string, firstLine = 1): DuplicateKey | undefined {
  const frames: { col: number; keys: Set<string> }[] = [];
  /** Lines more indented than this belong to a block scalar (or -1: none open). */
  let scalarCol = -1;
  /** Brackets still open in a flow collection that spans lines. */
  let flow = 0;
  const lines = text.split("\n");
  for (const [n, raw] of lines.entries()) {
    const line = raw.replace(/\r$/, "");
    if (flow > 0) {
      flow += openBrackets(line);
      if (flow < 0) return undefined;
      continue;
    }
    const indent = line.length - line.trimStart().length;
    let rest = line.trimStart();
    if (rest === "" || rest.startsWith("#")) continue;
    if (scalarCol >= 0) {
      if (indent > scalarCol) continue;
      scalarCol = -1;
    }
    if (line.startsWith("\t")) return undefined;
    let col = indent;
    // Each `- ` opens a new mapping one level in (`- - a: 1` nests two).
    let item = false;
    while (/^-(\s|$)/.test(rest)) {
      const after = rest.slice(1);
      const pad = after.length - after.trimStart().length;
      col += 1 + pad;
      rest = after.trimStart();
      item = true;
    }
    if (item) {
      while (frames.length > 0 && frames.at(-1)!.col >= col) frames.pop();
      frames.push({ col, keys: new Set() });
    }
    if (rest === "" || rest.startsWith("#")) continue;
    const m = KEY.exec(rest);
    const value = bare(m ? rest.slice(m[0].length).trim() : rest);
    if (!m && !item) return undefined; // neither a key nor a list item: not read with certainty
    if (m) {
      while (frames.length > 0 && frames.at(-1)!.col > col) frames.pop();
      if (frames.at(-1)?.col !== col) frames.push({ col, keys: new Set() });
      const keys = frames.at(-1)!.keys;
      const key = keyText(m[1]!.trim());
      if (keys.has(key)) return { key, line: firstLine + n };
      keys.add(key);
    }
    if (/^[|>]/.test(value)) scalarCol = m ? col : indent;
    else if (/^[[{]/.test(value)) {
      flow = openBrackets(value);
      if (flow < 0) return undefined;
    } else if (/^["']/.test(value) && !quotedCloses(value)) return undefined;
  }
  return undefined;
}
