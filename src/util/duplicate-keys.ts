/**
 * A key written twice in one mapping of a case file. YAML and JSON parsers keep the last one and
 * say nothing, so a second `expect:` (two branches merged) dropped the first list of assertions, and
 * `{name: write, name: edit}` checked only `edit`. JSON is scanned exactly; YAML in block style
 * (what case files use) by indentation, and its flow collections (`{name: bash, name: read}`, on one
 * line or several) by their brackets; text inside block scalars (`|`, `>`, after an anchor or a tag
 * too) is not looked at, nor are explicit keys (`? a`), and where a line is not read with certainty
 * the scan stops (`duplicateYamlKey`): a duplicate may go unseen, but nothing valid is refused.
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

/**
 * Whether `c` opens a quoted scalar, `after` being the last character before it that is not a space:
 * only where a scalar starts (first, or after `{[,:`); `it's` is plain text.
 */
const opensQuote = (c: string, after: string): boolean =>
  (c === '"' || c === "'") && (after === "" || "{[,:".includes(after));

/**
 * Brackets a flow collection leaves open on a line (quoted scalars skipped: a quote opens one only
 * where a scalar starts, after `{[,:` or first on the line; `it's` is plain text).
 */
function openBrackets(text: string): number {
  let open = 0;
  let quote = "";
  let last = "";
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quote) {
      if (c === quote) quote = "";
      continue;
    }
    const after = last;
    if (!/\s/.test(c)) last = c;
    if (opensQuote(c, after)) quote = c;
    else if (c === "#" && (i === 0 || /\s/.test(text[i - 1]!)))
      break; // a comment
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
  /** That collection's text so far, and the number of its first line. */
  let flowText = "";
  let flowLine = 0;
  const lines = text.split("\n");
  for (const [n, raw] of lines.entries()) {
    const line = raw.replace(/\r$/, "");
    if (flow > 0) {
      flow += openBrackets(line);
      if (flow < 0) return undefined;
      flowText += `\n${line}`;
      const dup = flow === 0 ? duplicateFlowKey(flowText, flowLine) : undefined;
      if (dup) return dup;
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
    // A flow collection: a key's value, an item, or the whole document (`{id: a, …}`).
    const isFlow = /^[[{]/.test(value);
    // Neither a key, a list item nor a flow collection: not read with certainty.
    if (!m && !item && !isFlow) return undefined;
    if (m) {
      while (frames.length > 0 && frames.at(-1)!.col > col) frames.pop();
      if (frames.at(-1)?.col !== col) frames.push({ col, keys: new Set() });
      const keys = frames.at(-1)!.keys;
      const key = keyText(m[1]!.trim());
      if (keys.has(key)) return { key, line: firstLine + n };
      keys.add(key);
    }
    if (isFlow) {
      flow = openBrackets(value);
      if (flow < 0) return undefined;
      flowText = value;
      flowLine = firstLine + n;
      const dup = flow === 0 ? duplicateFlowKey(flowText, flowLine) : undefined;
      if (dup) return dup;
    } else if (/^[|>]/.test(value)) scalarCol = m ? col : indent;
    else if (/^["']/.test(value) && !quotedCloses(value)) return undefined;
  }
  return undefined;
}

/**
 * A repeated key in a YAML flow collection (`{a: 1, b: [x, {c: 2, c: 3}]}`; `firstLine` is the
 * line it starts on), or undefined — also when it is not read with certainty (a key that is not a
 * plain or quoted scalar), so that nothing valid is refused.
 */
function duplicateFlowKey(text: string, firstLine: number): DuplicateKey | undefined {
  let line = firstLine;
  const frames: (Set<string> | null)[] = []; // null: a sequence
  let expectKey = false;
  /** The last character that was not a space: a quote opens a scalar only after `{[,:` (or first). */
  let last = "";
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    const after = last;
    if (!/\s/.test(c)) last = c;
    if (c === "\n") line++;
    else if (c === "#" && (i === 0 || /\s/.test(text[i - 1]!))) {
      while (i + 1 < text.length && text[i + 1] !== "\n") i++; // a comment, to the end of its line
    } else if (c === "{") {
      frames.push(new Set());
      expectKey = true;
    } else if (c === "[") {
      frames.push(null);
      expectKey = false;
    } else if (c === "}" || c === "]") {
      frames.pop();
      expectKey = false;
    } else if (c === ",") expectKey = frames.at(-1) != null;
    else if (opensQuote(c, after)) {
      const start = i;
      for (i++; i < text.length && text[i] !== c; i++) {
        if (c === '"' && text[i] === "\\") i++;
        else if (c === "'" && text[i] === "'" && text[i + 1] === "'") i++;
      }
      last = c;
      if (expectKey) {
        const raw = text.slice(start, i + 1);
        let key: string;
        try {
          key = keyText(raw);
        } catch {
          return undefined;
        }
        const dup = addKey(frames.at(-1)!, key);
        if (dup) return { key, line };
        expectKey = false;
      }
    } else if (expectKey && !/\s/.test(c)) {
      // A plain key: up to `: `, `:` before a bracket or comma, or the end of the collection.
      const m = /^([^,:{}[\]#]*?)\s*:(?=[\s,}\]]|$)/.exec(text.slice(i));
      if (!m) {
        // A key without a value (`{a, b}`) or one not read with certainty: not a key here.
        if (c === "?" || c === "&" || c === "!" || c === "*") return undefined;
        expectKey = false;
        continue;
      }
      const key = m[1]!.trim();
      if (addKey(frames.at(-1)!, key)) return { key, line };
      i += m[0].length - 1;
      last = ":";
      expectKey = false;
    }
  }
  return undefined;
}

/** Add `key` to a mapping's keys; true when it was there already. */
function addKey(keys: Set<string>, key: string): boolean {
  if (keys.has(key)) return true;
  keys.add(key);
  return false;
}
