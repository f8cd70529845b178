/**
 * Writing a large value as indented JSON in pieces: the text `JSON.stringify(value, null, 2)` gives,
 * handed to `write` a part at a time instead of built as one string. A Trace of a 525 MB log is
 * 644,000 spans: stringified at once it was a 215 MB string on top of every span's plain object, and
 * `trace --json` peaked at 958 MB; in pieces each span's text is garbage once written.
 *
 * The top levels (the document and the lists in it, `PIECE_DEPTH` deep) are walked here, with
 * JSON.stringify's rules (`toJSON(key)` first; in objects, own enumerable string keys in order and
 * undefined, functions and symbols left out; in arrays, those become `null`); anything deeper is one
 * `JSON.stringify` call, its lines indented to where it sits. Pretty-printing composes that way, so
 * the text is the same byte for byte.
 */

/** Containers at depths below this are written element by element. */
const PIECE_DEPTH = 2;
const INDENT = "  ";

type Write = (text: string) => void;
/** A value ready to write: its whole text, or a container to walk; `undefined` when left out. */
type Piece = { text: string } | { container: object } | undefined;

/**
 * Write `value` as `JSON.stringify(value, null, 2)` would, in pieces; nothing for `undefined`. With
 * `depth`, as that text would read nested that deep in a larger document (its lines indented so),
 * for a writer that writes the document around it itself.
 */
export function writeJson(value: unknown, write: Write, depth = 0): void {
  const p = prepare(value, "", depth);
  if (p) emit(p, depth, INDENT.repeat(depth), write);
}

/**
 * What `raw` (under `key`, at `depth`) is written as. Below `PIECE_DEPTH`, `toJSON(key)` is called
 * here, as JSON.stringify calls it; deeper values go to JSON.stringify whole, which calls `toJSON`
 * with the key `""` (no value the CLI prints reads the key).
 */
function prepare(raw: unknown, key: string, depth: number): Piece {
  if (depth >= PIECE_DEPTH) {
    const text = JSON.stringify(raw, null, 2);
    return text === undefined ? undefined : { text };
  }
  const value =
    raw !== null && typeof raw === "object" && typeof (raw as { toJSON?: unknown }).toJSON === "function"
      ? (raw as { toJSON(key: string): unknown }).toJSON(key)
      : raw;
  if (value !== null && typeof value === "object") return { container: value };
  const text = JSON.stringify(value); // undefined, a function or a symbol: left out
  return text === undefined ? undefined : { text };
}

function emit(p: NonNullable<Piece>, depth: number, indent: string, write: Write): void {
  if ("text" in p) {
    write(indent === "" ? p.text : p.text.replaceAll("\n", `\n${indent}`));
    return;
  }
  const value = p.container;
  const inner = indent + INDENT;
  if (Array.isArray(value)) {
    if (value.length === 0) {
      write("[]");
      return;
    }
    for (let i = 0; i < value.length; i++) {
      write(i === 0 ? `[\n${inner}` : `,\n${inner}`);
      const item = prepare(value[i], String(i), depth + 1);
      if (item) emit(item, depth + 1, inner, write);
      else write("null"); // in an array, what an object leaves out is null
    }
    write(`\n${indent}]`);
    return;
  }
  let first = true;
  for (const k of Object.keys(value)) {
    const item = prepare((value as Record<string, unknown>)[k], k, depth + 1);
    if (!item) continue;
    write(`${first ? "{" : ","}\n${inner}${JSON.stringify(k)}: `);
    first = false;
    emit(item, depth + 1, inner, write);
  }
  write(first ? "{}" : `\n${indent}}`);
}
