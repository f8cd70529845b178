/**
 * What search reads of a call's output (and arguments: `argumentsText`): its text, not JSON's syntax. A tool's result may be a
 * string, structured data (Claude Code's text blocks, an object), or a string that is JSON itself
 * (Codex's shell output: `{"output": "…", "metadata": {…}}`). Indexed as JSON text, its escapes glued
 * letters to words (`\nAdditionally` was the word `nAdditionally`) and its keys were false hits
 * (`type`, `text`); an image's base64 was indexed as words. So: a string as it is, or as its value
 * when it is JSON (Codex's wrapper by what it wraps); a content block by its text; any other
 * object by `key: value` lines, keys and numbers kept; type tags and binary data (image blocks,
 * base64 runs, data URLs) left out. Colour codes are
 * left to the row (`searchRows` removes them from every row). Long outputs keep their head and tail
 * (`OUTPUT_CHARS`).
 */

/**
 * How much of a call's output is searchable, in characters (UTF-16 code units): a file read or a
 * build log can run to megabytes, and indexing all of it would make the index as large as the
 * sessions. Longer outputs keep their first and last `OUTPUT_CHARS / 2`: the command's start and
 * how it ended (an error is usually at the end of a log).
 */
export const OUTPUT_CHARS = 32 * 1024;

/** A string that may be Codex's JSON wrapper is looked into when it is at most this long. */
const MAX_JSON_TEXT = 8 * 1024 * 1024;
const MAX_DEPTH = 64;
/**
 * Base64 with no break for 200 characters or more, digits and both cases in it, is binary data (a
 * hash or an id is shorter; a `====` rule or a run of one letter is not base64), and so is a data
 * URL's. They are left out of a string, not the string with them: an argument that began with a key
 * blob lost the words after it.
 */
const BASE64_RUNS = /[A-Za-z0-9+/]{200,}={0,2}/g;
const DATA_URLS = /data:[^,\s]{0,200};base64,[A-Za-z0-9+/]*={0,2}/g;
/** Base64's `/` is one character in 64; a path's comes every few words (a long Java path is no blob). */
const isBase64 = (run: string) =>
  /\d/.test(run) &&
  /[a-z]/.test(run) &&
  /[A-Z]/.test(run) &&
  (run.match(/\//g)?.length ?? 0) * 20 <= run.length;

/** `x` without its data URLs and base64 runs (see above). */
function withoutBinary(x: string): string {
  const text = x.includes("base64,") ? x.replace(DATA_URLS, " ") : x;
  return text.length < 200 ? text : text.replace(BASE64_RUNS, (run) => (isBase64(run) ? " " : run));
}

/** A call's output as searchable text, head and tail when long. */
export function outputText(result: unknown): string {
  const parts: string[] = [];
  // JSON a command printed (`cat package.json`, a gallery's `{"type": "image", "caption": …}`) is
  // searched with its keys: read from text, an object is a content block only if it holds nothing a
  // block does not (a result recorded as JSON text of blocks is read by their text).
  const value = unwrapped(result);
  collect(value, parts, 0, typeof result === "string" && value !== result ? STRICT : TYPED);
  return headAndTail(parts.join("\n"));
}

/**
 * A call's arguments as searchable text, the way an output is read but for what arguments are: an
 * object of named values, every key kept (`type` is an argument like any other) and no content
 * blocks. A heredoc's second line is its own words (`"a\nzebra"` as JSON was the word `nzebra`).
 */
export function argumentsText(args: unknown): string {
  const parts: string[] = [];
  collect(unwrapped(args), parts, 0, NONE);
  return headAndTail(parts.join("\n"));
}

/**
 * A string that is JSON, as its value: Codex's shell output (`{"output": "…", "metadata": {…}}`) as
 * the text it wraps; JSON a command printed (`cat package.json`) as its values with their keys (see
 * `collect`), its escapes read (`"a\nb"` is two lines: indexed as printed, `\nb` was the word
 * `nb`). Any other string as it is.
 */
function unwrapped(x: unknown): unknown {
  if (typeof x !== "string" || x.length > MAX_JSON_TEXT) return x;
  const t = x.trim();
  const [first, last] = [t[0], t[t.length - 1]];
  if (!((first === "{" && last === "}") || (first === "[" && last === "]"))) return x;
  let value: unknown;
  try {
    value = JSON.parse(t);
  } catch {
    return x;
  }
  const wrapped = (value as { output?: unknown } | null)?.output;
  return t.startsWith('{"output":') && typeof wrapped === "string" ? wrapped : value;
}

/** Which objects are content blocks: none (arguments), those of a block type (a structured
 * result), or those of a block type holding only a block's fields (JSON text; see `outputText`). */
const NONE = 0;
const TYPED = 1;
const STRICT = 2;
type Blocks = typeof NONE | typeof TYPED | typeof STRICT;

/** Whether `o` is a content block, read as `blocks` says. */
function isBlock(o: Record<string, unknown>, blocks: Blocks): boolean {
  if (blocks === NONE || typeof o.type !== "string" || !BLOCK_TYPES.has(o.type)) return false;
  if (blocks === TYPED) return true;
  for (const k in o) if (!BLOCK_FIELDS.has(k)) return false;
  return true;
}

/** `x`'s text into `out`; `blocks`: which objects are content blocks (see `isBlock`). */
function collect(x: unknown, out: string[], depth: number, blocks: Blocks): void {
  if (typeof x === "string") {
    const text = withoutBinary(x);
    if (text.trim()) out.push(text);
    return;
  }
  if (typeof x === "number" || typeof x === "boolean") {
    out.push(String(x));
    return;
  }
  if (x === null || typeof x !== "object" || depth > MAX_DEPTH) return;
  if (Array.isArray(x)) {
    for (const v of x) collect(v, out, depth + 1, blocks);
    return;
  }
  const o = x as Record<string, unknown>;
  // A content block (`{type: "text", text: …}`) is what it says, and an image block carries its
  // bytes; any other object is searched with its keys, one `key: value` per line (an MCP tool's
  // structured result; an argument object, `{type: "image", name}`).
  const block = isBlock(o, blocks);
  if (block && isBinaryBlock(o)) return;
  for (const [k, v] of Object.entries(o)) {
    if (block && TAGS.has(k)) continue;
    if (block || (v !== null && typeof v === "object")) {
      if (!block) out.push(k);
      collect(v, out, depth + 1, blocks);
    } else {
      const before = out.length;
      collect(v, out, depth + 1, blocks);
      if (out.length > before) out[before] = `${k}: ${out[before]}`;
    }
  }
}

/**
 * The content block types agents record (Anthropic, OpenAI, MCP): an object of another `type` is a
 * value like any other (a tool's structured result `{type: "module", …}`), its keys kept.
 */
const BLOCK_TYPES = new Set([
  "text",
  "image",
  "image_url",
  "input_image",
  "input_text",
  "output_text",
  "refusal",
  "document",
  "audio",
  "resource",
  "resource_link",
  "tool_result",
  "tool_use",
  "thinking",
  "redacted_thinking",
  "search_result",
  "web_search_result",
]);

/** The fields of the content blocks agents record (`STRICT`: an object with any other is data). */
const BLOCK_FIELDS = new Set([
  "type",
  "text",
  "source",
  "data",
  "url",
  "image_url",
  "detail",
  "file_id",
  "media_type",
  "mediaType",
  "mime_type",
  "mimeType",
  "annotations",
  "citations",
  "cache_control",
  "_meta",
  "id",
  "name",
  "input",
  "content",
  "tool_use_id",
  "is_error",
  "thinking",
  "signature",
  "refusal",
  "resource",
  "uri",
  "title",
]);

/** Fields that say what a block is, not what it says (`{type: "text", text: …}`). */
const TAGS = new Set(["type", "media_type", "mediaType", "mime_type", "mimeType"]);

/** An image or document block carrying its bytes (Anthropic's `source: {type: "base64"}`, …). */
function isBinaryBlock(x: Record<string, unknown>): boolean {
  if (x.type === "image" || x.type === "image_url" || x.type === "input_image") return true;
  const source = x.source as { type?: unknown } | undefined;
  return typeof source === "object" && source !== null && source.type === "base64";
}

/** How far a cut looks for the edge of the word it fell in. */
const WORD_LOOK = 64;
const WORD_CHAR = /[\p{L}\p{N}\p{M}]/u;

/**
 * `text`, or its first and last `OUTPUT_CHARS / 2` characters, cut between words: a cut inside a
 * word indexed its two pieces as words of their own (`batqrs` of `wombatqrs` was found, and
 * `kangarooxyz`, cut to `kang`, was not). The piece of the cut word is left out (a word longer
 * than the look, a base64 run, is cut where it is); never inside a surrogate pair.
 */
function headAndTail(text: string): string {
  if (text.length <= OUTPUT_CHARS) return text;
  const half = OUTPUT_CHARS / 2;
  const isWord = (c: string | undefined) => c !== undefined && WORD_CHAR.test(c);
  // A cut at `i` (between `text[i - 1]` and `text[i]`) inside a word.
  const inWord = (i: number) => isWord(text[i - 1]) && isWord(text[i]);
  let end = half;
  while (end > half - WORD_LOOK && inWord(end)) end--;
  if (inWord(end)) end = half;
  let start = text.length - half;
  while (start < text.length - half + WORD_LOOK && inWord(start)) start++;
  if (inWord(start)) start = text.length - half;
  // Not inside a surrogate pair (half an emoji is not text).
  if (isHighSurrogate(text.charCodeAt(end - 1))) end--;
  if (isLowSurrogate(text.charCodeAt(start))) start++;
  return `${text.slice(0, end)}\n…\n${text.slice(start)}`;
}

const isHighSurrogate = (c: number) => c >= 0xd800 && c <= 0xdbff;
const isLowSurrogate = (c: number) => c >= 0xdc00 && c <= 0xdfff;
