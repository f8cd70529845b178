/**
 * Reading case files: YAML (`Bun.YAML`, `---` separated documents), JSON and JSONL. A document is a
 * case, a list of cases, or `{cases: [...]}`. Everything is validated with valibot; the first problem
 * is a `bad_input` error naming the file, the line and the field (exit 2), found by mapping the issue
 * path back to the text. Directories are searched recursively for *.yaml, *.yml, *.json, *.jsonl.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import * as v from "valibot";
import { badInput, FreecodeError } from "../errors.ts";
import { cutText } from "../util/cut-text.ts";
import { type DuplicateKey, duplicateJsonKey, duplicateYamlKey } from "../util/duplicate-keys.ts";
import { jsonErrorLine } from "../util/json-error-line.ts";
import { closest, firstIssue, isUnknownKey, unknownField } from "../util/unknown-field.ts";
import { checkUtf8 } from "../util/utf8.ts";
import { ASSERTIONS, type AssertionName, type CaseInput, CaseSchema, RERUN_FIELDS } from "./case-schema.ts";
import { locateJson, locateYaml, type PathSegment, yamlErrorLine } from "./locate.ts";

/** One expectation of a case, with where it was written. */
export interface Expectation {
  name: AssertionName;
  value: unknown;
  line: number;
  /** Short text for reports, e.g. `expectTool edit`. */
  label: string;
}

export interface LoadedCase {
  id: string;
  /** The case file as given (relative to the working directory when inside it). */
  file: string;
  line: number;
  /** The lines of its case-wide checks, where given (`passRate`, `passK`): their results point there. */
  lines?: { passRate?: number; passK?: number };
  /**
   * The line of one of its fields (a path inside the case, `["sessions", 2]`), for a result found
   * after loading: a session id no log has is reported on the id's own line. Found when asked (a
   * walk of the file: ids by the thousand would cost seconds).
   */
  lineOf?: (path: PathSegment[]) => number;
  input: CaseInput;
  expectations: Expectation[];
}

const CASE_FILE = /\.(ya?ml|jsonl?)$/i;

/**
 * Expand files and directories into case files, sorted; a missing path is bad input. Directories
 * are searched for *.yaml, *.yml, *.json and *.jsonl in any case, skipping folders whose name starts
 * with a dot (`.git`, `.venv`).
 */
export function findCaseFiles(paths: string[]): string[] {
  const out: string[] = [];
  for (const p of paths) {
    if (!existsSync(p)) throw badInput(`no such case file or directory`, { file: p });
    if (statSync(p).isDirectory()) {
      const found = [...new Bun.Glob("**/*").scanSync({ cwd: p, onlyFiles: true })].filter((f) =>
        CASE_FILE.test(f),
      );
      out.push(...found.sort().map((f) => join(p, f)));
    } else out.push(p);
  }
  return out;
}

/**
 * Load and validate every case in the given files and directories. Finding none is bad input: a run
 * that checks nothing must not pass.
 */
export function loadCases(paths: string[]): LoadedCase[] {
  const cases: LoadedCase[] = [];
  const seen = new Map<string, string>();
  for (const file of findCaseFiles(paths)) {
    for (const c of loadCaseFile(file)) {
      const prior = seen.get(c.id);
      if (prior)
        throw badInput(`duplicate case id "${c.id}" (first in ${prior})`, {
          file: c.file,
          line: c.line,
          field: "id",
        });
      seen.set(c.id, `${c.file}:${c.line}`);
      cases.push(c);
    }
  }
  if (cases.length === 0)
    throw badInput(
      `no cases found in ${paths.join(", ")} (case files are *.yaml, *.yml, *.json, *.jsonl; folders starting with a dot are skipped)`,
    );
  return cases;
}

/** A parsed document and how to find the line of a path inside it. */
interface Doc {
  value: unknown;
  lineOf(path: PathSegment[]): number;
}

function parseDocs(file: string, text: string): Doc[] {
  if (/\.jsonl$/i.test(file)) {
    return text.split("\n").flatMap((raw, n) => {
      if (raw.trim() === "") return [];
      try {
        const value = JSON.parse(raw);
        refuseDuplicate(duplicateJsonKey(raw, n + 1), file);
        return [{ value, lineOf: () => n + 1 }];
      } catch (error) {
        if (error instanceof FreecodeError) throw error;
        throw badInput(`invalid JSON: ${(error as Error).message}`, { file, line: n + 1 }, error);
      }
    });
  }
  if (/\.json$/i.test(file)) {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      throw badInput(`invalid JSON: ${(error as Error).message}`, { file, line: jsonErrorLine(text) }, error);
    }
    refuseDuplicate(duplicateJsonKey(text), file);
    return [{ value, lineOf: (p) => locateJson(text, p) }];
  }
  // YAML: split documents ourselves so each keeps its own line offset.
  const docs: Doc[] = [];
  const lines = text.split("\n");
  let start = 0;
  for (let n = 0; n <= lines.length; n++) {
    // `---` alone, or followed by the next document's first line (`--- {"id": …}`).
    const marker = n < lines.length ? /^---(?:\s*(#.*)?$|\s+(\S.*)$)/.exec(lines[n]!) : undefined;
    if (n < lines.length && !marker) continue;
    const body = lines.slice(start, n).join("\n");
    const firstLine = start + 1;
    start = n + 1;
    // A marker's tag or anchor alone (`--- !!map`) is no content: the document starts on the next line.
    if (marker?.[2] !== undefined && !/^(?:[&!]\S*\s*)+(?:#.*)?$/.test(marker[2])) {
      // The rest of the marker's line opens the next document, in its place (its line and columns).
      lines[n] = `   ${lines[n]!.slice(3)}`;
      start = n;
    }
    // Directives (`%YAML 1.2`) before a `---` belong to the document after it: nothing on their own.
    if (/^\s*%/m.test(body) && body.split("\n").every((l) => /^\s*(%.*|#.*)?$/.test(l))) continue;
    let value: unknown;
    try {
      value = Bun.YAML.parse(body);
    } catch (error) {
      throw badInput(
        `invalid YAML: ${(error as Error).message}`,
        { file, line: firstLine - 1 + yamlErrorLine(body) },
        error,
      );
    }
    refuseDuplicate(duplicateYamlKey(body, firstLine), file);
    if (value !== null && value !== undefined)
      docs.push({ value, lineOf: (p) => locateYaml(body, p, firstLine) });
  }
  return docs;
}

/** A key given twice: the parsers keep the last and drop the first without a word. */
function refuseDuplicate(dup: DuplicateKey | undefined, file: string): void {
  if (dup)
    throw badInput(`duplicate key "${dup.key}" (the first one would be dropped)`, { file, line: dup.line });
}

/** Load the cases of one file. */
export function loadCaseFile(path: string): LoadedCase[] {
  const file = relative(process.cwd(), resolve(path)).startsWith("..")
    ? path
    : relative(process.cwd(), resolve(path));
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (error) {
    throw badInput(`cannot read case file: ${(error as Error).message}`, { file }, error);
  }
  checkUtf8(bytes, file);
  // A byte-order mark (Windows editors write one) is not part of the text, in YAML or JSON. A lone
  // CR (classic Mac OS) breaks a line as YAML counts it, and CRLF is one break: lines are counted
  // on LF from here on (a CR-only file put every error on line 1). In JSON a CR is whitespace, and
  // never inside a string.
  const text = bytes
    .toString("utf8")
    .replace(/^\uFEFF/, "")
    .replace(/\r\n?/g, "\n");
  const out: LoadedCase[] = [];
  for (const doc of parseDocs(file, text)) {
    const v0 = doc.value;
    const isCases =
      typeof v0 === "object" && v0 !== null && !Array.isArray(v0) && "cases" in v0 && !("id" in v0);
    if (isCases && !Array.isArray((v0 as { cases: unknown }).cases)) {
      throw badInput("cases must be a list", { file, line: doc.lineOf(["cases"]), field: "cases" });
    }
    const beside = isCases ? Object.keys(v0 as object).find((k) => k !== "cases") : undefined;
    if (beside !== undefined)
      throw badInput(`unknown field "${beside}" beside cases (fields of a case go inside it)`, {
        file,
        line: doc.lineOf([beside]),
        field: beside,
      });
    const items: [unknown, PathSegment[]][] = Array.isArray(v0)
      ? v0.map((c, i) => [c, [i]])
      : isCases
        ? (v0 as { cases: unknown[] }).cases.map((c, i) => [c, ["cases", i]])
        : [[v0, []]];
    for (const [raw, at] of items) out.push(toCase(raw, at, file, doc));
  }
  return out;
}

type Issue = v.BaseIssue<unknown>;
/**
 * Descend into union issues to the most specific one: the longest path, and at one depth a check
 * that failed on a value of the right type (`+02` is a string, but not a readable time) over "expected
 * (number | string)".
 */
function deepest(issue: Issue): Issue {
  // A misspelt key explains the most (`{nmae: read}` is also a missing `name`): it comes first.
  const score = (i: Issue) =>
    (isUnknownKey(i) ? 1000 : 0) + (i.path?.length ?? 0) * 2 + (i.kind === "validation" ? 1 : 0);
  const at = issue.path ?? [];
  let best = issue;
  for (const sub of issue.issues ?? []) {
    const d = deepest(sub);
    // A branch's issues may be placed from the union down (a union nested in an object field).
    const path = d.path ?? [];
    const absolute = at.every((p, i) => path[i]?.key === p.key) && path.length >= at.length;
    const placed = absolute ? d : { ...d, path: [...at, ...path] as Issue["path"] };
    if (score(placed) > score(best)) best = placed;
  }
  return best;
}
const keysOf = (i: Issue): PathSegment[] => (i.path ?? []).map((p) => p.key as PathSegment);

function invalid(
  issue: Issue,
  at: PathSegment[],
  file: string,
  doc: Doc,
  schema: unknown,
  what = "invalid case",
): never {
  const d = deepest(issue);
  const path = [...at, ...keysOf(d)];
  throw badInput(`${what}: ${unknownField(schema, d) ?? d.message}`, {
    file,
    line: doc.lineOf(path),
    field: path.join(".") || undefined,
  });
}

function toCase(raw: unknown, at: PathSegment[], file: string, doc: Doc): LoadedCase {
  if (typeof raw === "object" && raw !== null && !Array.isArray(raw)) {
    const rerun = RERUN_FIELDS.find((k) => k in raw);
    if (rerun) {
      throw badInput(`"${rerun}" needs the agent re-run; freecode eval checks recorded sessions only`, {
        file,
        line: doc.lineOf([...at, rerun]),
        field: [...at, rerun].join("."),
      });
    }
  }
  const parsed = v.safeParse(CaseSchema, raw);
  if (!parsed.success) invalid(firstIssue(parsed.issues), at, file, doc, CaseSchema);
  const input = parsed.output;
  const expectations: Expectation[] = [];
  const line = (path: PathSegment[]) => doc.lineOf([...at, ...path]);

  (input.expect ?? []).forEach((item, i) => {
    const keys = typeof item === "object" && item !== null && !Array.isArray(item) ? Object.keys(item) : [];
    const names = keys.filter((k) => k !== "label");
    if (names.length !== 1) {
      throw badInput(
        `each expect item is an object with exactly one assertion (got ${names.length ? names.join(", ") : JSON.stringify(item)})`,
        { file, line: line(["expect", i]), field: [...at, "expect", i].join(".") },
      );
    }
    const name = names[0]!;
    if (!(name in ASSERTIONS)) {
      const hint = closest(name, Object.keys(ASSERTIONS));
      throw badInput(`unknown assertion "${name}"${hint ? ` (did you mean ${hint}?)` : ""}`, {
        file,
        line: line(["expect", i, name]),
        field: [...at, "expect", i, name].join("."),
      });
    }
    const value = (item as Record<string, unknown>)[name];
    const r = v.safeParse(ASSERTIONS[name as AssertionName], value);
    if (!r.success)
      invalid(
        firstIssue(r.issues),
        [...at, "expect", i, name],
        file,
        doc,
        ASSERTIONS[name as AssertionName],
        `invalid ${name}`,
      );
    const label = (item as { label?: unknown }).label;
    // Shown in place of the assertion's own name: a label of another type was dropped unsaid.
    if (label !== undefined && (typeof label !== "string" || label.trim() === ""))
      throw badInput(`label must be a non-empty string (got ${JSON.stringify(label)})`, {
        file,
        line: line(["expect", i, "label"]),
        field: [...at, "expect", i, "label"].join("."),
      });
    expectations.push({
      name: name as AssertionName,
      value: r.output,
      line: line(["expect", i]),
      label: label ?? labelOf(name, r.output),
    });
  });

  // freecode's top-level fields, as expectations on their own lines.
  const top = (name: AssertionName, value: unknown, key: string = name) =>
    expectations.push({ name, value, line: line([key]), label: labelOf(name, value) });
  if (input.expectInArgs && (input.expectTool === undefined || input.expectTool === null)) {
    throw badInput("expectInArgs needs expectTool (the tool whose args it checks)", {
      file,
      line: line(["expectInArgs"]),
      field: "expectInArgs",
    });
  }
  if (input.expectTool === null) top("expectNoTools", true, "expectTool");
  else if (input.expectTool !== undefined) {
    top("expectTool", input.expectTool);
    const tool = typeof input.expectTool === "string" ? input.expectTool : input.expectTool.name;
    if (input.expectInArgs) top("expectInArgs", { tool, args: input.expectInArgs }, "expectInArgs");
  }
  if (input.expectMaxTurns !== undefined) top("expectMaxTurns", input.expectMaxTurns);
  if (input.forbidTools) top("forbidTools", input.forbidTools);
  if (input.expectFirstToolIn) top("expectFirstToolIn", input.expectFirstToolIn);
  if (input.expectBashMatches) top("expectBashMatches", input.expectBashMatches);
  if (input.forbidBashMatches) top("forbidBashMatches", input.forbidBashMatches);
  if (input.expectParallelTools !== undefined) top("expectParallelTools", input.expectParallelTools);
  if (input.expectCompaction !== undefined) top("expectCompaction", input.expectCompaction);

  if (expectations.length === 0 && !input.skip)
    throw badInput(`case "${input.id}" checks nothing: give it an expect list (or skip it)`, {
      file,
      line: line(input.expect ? ["expect"] : ["id"]),
      field: [...at, "expect"].join("."),
    });
  const lines = {
    ...(input.passRate !== undefined ? { passRate: line(["passRate"]) } : {}),
    ...(input.passK !== undefined ? { passK: line(["passK"]) } : {}),
  };
  return {
    id: input.id,
    file,
    line: doc.lineOf(at.length ? [...at, "id"] : ["id"]),
    ...(Object.keys(lines).length ? { lines } : {}),
    lineOf: line,
    input,
    expectations,
  };
}

/** A short label: the assertion and the gist of its value. */
export function labelOf(name: string, value: unknown): string {
  if (value === true) return name;
  const text = typeof value === "string" ? value : JSON.stringify(value);
  return `${name} ${cutText(text, 60)}`;
}
