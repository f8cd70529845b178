/**
 * Argument matchers, freecode's vocabulary plus partial objects and dotted paths:
 * - a bare string: case-insensitive substring of the value (of its JSON text when not a string);
 * - a number, boolean or null: equality;
 * - `{$eq: v}`: deep equality; `{$regex: "…", $flags?: "i"}` (default flag `i`); `{$exists: bool}`;
 * - an object: partial (subset) match, recursively; keys may be dotted paths (`options.mode`);
 * - an array: same length, element by element.
 * `exact` mode additionally rejects keys the spec does not name (see `unnamed` for dotted keys). The
 * result is the list of differing paths (empty = match), so a failure can say exactly where a call
 * went wrong.
 */
import { jsonEqual } from "../../util/json-equal.ts";
import { type ArgDiff, show } from "../outcome.ts";

export type ArgMatcher =
  | string
  | number
  | boolean
  | null
  | { $eq: unknown }
  | { $regex: string; $flags?: string }
  | { $exists: boolean }
  | ArgMatcher[]
  | { [key: string]: ArgMatcher };

export type ArgSpec = { [key: string]: ArgMatcher };
export type ArgsMode = "partial" | "exact";

const regexCache = new Map<string, RegExp>();
/** Compile (and cache) a `$regex` matcher; throws on an invalid pattern. */
export function compileRegex(source: string, flags = "i"): RegExp {
  const key = `${flags}/${source}`;
  let re = regexCache.get(key);
  if (!re) regexCache.set(key, (re = new RegExp(source, flags)));
  return re;
}

const isPlainObject = (x: unknown): x is Record<string, unknown> =>
  typeof x === "object" && x !== null && !Array.isArray(x);

/** A value by key: the literal key first, then the key as a dotted path. */
function lookup(obj: Record<string, unknown>, key: string): unknown {
  // Own keys only: `constructor` or `toString` are argument names like any other, never inherited.
  if (Object.hasOwn(obj, key)) return obj[key];
  if (!key.includes(".")) return undefined;
  let cur: unknown = obj;
  for (const part of key.split(".")) {
    if (Array.isArray(cur) && /^\d+$/.test(part)) cur = cur[Number(part)];
    else if (isPlainObject(cur) && Object.hasOwn(cur, part)) cur = cur[part];
    else return undefined;
  }
  return cur;
}

const join = (path: string, key: string | number) => (path === "" ? String(key) : `${path}.${key}`);
const textOf = (v: unknown) => (typeof v === "string" ? v : (JSON.stringify(v) ?? ""));

function matchValue(actual: unknown, m: ArgMatcher, path: string, mode: ArgsMode, out: ArgDiff[]): void {
  const diff = (expected: string): void => {
    out.push({ path, expected, actual: show(actual) });
  };
  if (typeof m === "string") {
    if (actual === undefined || !textOf(actual).toLowerCase().includes(m.toLowerCase()))
      diff(`contains ${show(m)}`);
    return;
  }
  if (m === null || typeof m === "number" || typeof m === "boolean") {
    if (actual !== m) diff(`= ${show(m)}`);
    return;
  }
  if (Array.isArray(m)) {
    if (!Array.isArray(actual) || actual.length !== m.length) diff(`array of ${m.length} ${show(m)}`);
    else for (let i = 0; i < m.length; i++) matchValue(actual[i], m[i]!, join(path, i), mode, out);
    return;
  }
  if ("$eq" in m) {
    if (!jsonEqual(actual, m.$eq)) diff(`equals ${show(m.$eq)}`);
    return;
  }
  if ("$regex" in m && typeof m.$regex === "string") {
    const flags = typeof m.$flags === "string" ? m.$flags : "i";
    if (actual === undefined || !compileRegex(m.$regex, flags).test(textOf(actual)))
      diff(`matches /${m.$regex}/${flags}`);
    return;
  }
  if ("$exists" in m && typeof m.$exists === "boolean") {
    if ((actual !== undefined) !== m.$exists) diff(m.$exists ? "present" : "absent");
    return;
  }
  matchKeys(actual, m as ArgSpec, path, mode, out);
}

/**
 * An object matcher: each key names a value (or a dotted path) of `actual`. The args' own spec is
 * always one, whatever its keys: `args: {$exists: true}` names an argument `$exists` (it was taken
 * for an operator on the whole args, and passed for any call).
 */
function matchKeys(actual: unknown, spec: ArgSpec, path: string, mode: ArgsMode, out: ArgDiff[]): void {
  if (!isPlainObject(actual)) {
    out.push({ path, expected: `object with ${Object.keys(spec).join(", ")}`, actual: show(actual) });
    return;
  }
  for (const [key, sub] of Object.entries(spec))
    matchValue(lookup(actual, key), sub, join(path, key), mode, out);
  if (mode === "exact") {
    for (const [p, value] of unnamed(actual, Object.keys(spec), path))
      out.push({ path: p, expected: "absent (exact args)", actual: show(value) });
  }
}

/**
 * The keys of `actual` that `names` (a spec's keys at this level) leave unnamed, as [path, value].
 * A dotted key names the keys along its path, and exactness holds at each level it passes through:
 * `{"options.mode": "fast"}` in exact mode means what `{options: {mode: "fast"}}` means, so `options`
 * is named and any other key inside it (`options.n`) is not. Arrays on the path are entered, but
 * their elements are not keys (an array matcher already fixes its length). A key of the args that
 * holds a dot itself names only itself, as in `lookup`. A key named both whole (`options: {…}`) and
 * by a dotted path keeps its whole matcher's exactness.
 */
function* unnamed(actual: unknown, names: string[], path: string): Generator<[string, unknown]> {
  const inside = new Map<string, string[]>();
  const named = new Set<string>();
  for (const n of names) {
    const dot = n.indexOf(".");
    if (dot === -1 || (isPlainObject(actual) && Object.hasOwn(actual, n))) named.add(n);
    else {
      const head = n.slice(0, dot);
      inside.set(head, [...(inside.get(head) ?? []), n.slice(dot + 1)]);
    }
  }
  if (!isPlainObject(actual) && !Array.isArray(actual)) return;
  for (const [key, value] of Object.entries(actual)) {
    if (named.has(key)) continue;
    const rest = inside.get(key);
    if (rest) yield* unnamed(value, rest, join(path, key));
    else if (!Array.isArray(actual)) yield [join(path, key), value];
  }
}

/** The paths where `args` differs from `spec` (empty when the call matches). */
export function diffArgs(args: unknown, spec: ArgSpec, mode: ArgsMode = "partial"): ArgDiff[] {
  if (args === undefined) return [{ path: "", expected: `args ${show(spec)}`, actual: "(no recorded args)" }];
  const out: ArgDiff[] = [];
  matchKeys(args, spec, "", mode, out);
  return out;
}

/** Whether `args` matches `spec` (the fast path: no diff text is built). */
export function argsMatch(args: unknown, spec: ArgSpec, mode: ArgsMode = "partial"): boolean {
  return args !== undefined && fitsKeys(args, spec, mode);
}

function fits(actual: unknown, m: ArgMatcher, mode: ArgsMode): boolean {
  if (typeof m === "string")
    return actual !== undefined && textOf(actual).toLowerCase().includes(m.toLowerCase());
  if (m === null || typeof m !== "object") return actual === m;
  if (Array.isArray(m))
    return Array.isArray(actual) && actual.length === m.length && m.every((x, i) => fits(actual[i], x, mode));
  if ("$eq" in m) return jsonEqual(actual, m.$eq);
  if ("$regex" in m && typeof m.$regex === "string") {
    return (
      actual !== undefined &&
      compileRegex(m.$regex, typeof m.$flags === "string" ? m.$flags : "i").test(textOf(actual))
    );
  }
  if ("$exists" in m && typeof m.$exists === "boolean") return (actual !== undefined) === m.$exists;
  return fitsKeys(actual, m as ArgSpec, mode);
}

/** `matchKeys`, without the diff. */
function fitsKeys(actual: unknown, spec: ArgSpec, mode: ArgsMode): boolean {
  if (!isPlainObject(actual)) return false;
  for (const key of Object.keys(spec)) if (!fits(lookup(actual, key), spec[key]!, mode)) return false;
  return mode !== "exact" || unnamed(actual, Object.keys(spec), "").next().done === true;
}

/** `path: expected …, got …` lines for a failure message. */
export const describeDiffs = (diffs: ArgDiff[]) =>
  diffs.map((d) => `${d.path || "(args)"}: expected ${d.expected}, got ${d.actual}`).join("; ");
