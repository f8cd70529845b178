/**
 * Naming a key no schema declares the way a person would: `unknown field "sesions" (did you mean
 * sessions?)`, instead of valibot's `Invalid key: Expected never but received "sesions"`; and one it
 * requires that is missing. Used for config.json, case files and JSON-RPC params, all strict.
 */
import type * as v from "valibot";

/** A valibot schema, as far as finding the field names it knows needs. */
interface SchemaShape {
  type: string;
  kind?: string;
  /** A piped schema: its items, schemas among them (`objectOnly` in config.ts). */
  pipe?: SchemaShape[];
  wrapped?: SchemaShape;
  entries?: Record<string, SchemaShape>;
  value?: SchemaShape;
  item?: SchemaShape;
  options?: SchemaShape[];
}

const unwrap = (s: SchemaShape | undefined): SchemaShape | undefined => {
  for (;;) {
    if (s?.wrapped) s = s.wrapped;
    else if (s?.pipe && !s.entries && !s.value && !s.item && !s.options)
      // The last schema of the pipe that has fields: the one the value ends up checked against.
      s = s.pipe.findLast(
        (p) => p.kind === "schema" && (p.entries || p.value || p.item || p.options || p.wrapped),
      );
    else return s;
  }
};

/** The field names the objects a schema allows at `path` may have (every union member's). */
function knownFields(schema: SchemaShape, path: PropertyKey[]): string[] {
  let level: SchemaShape[] = [schema];
  for (const key of path) {
    const next: SchemaShape[] = [];
    for (const s of level.flatMap(function members(x): SchemaShape[] {
      const u = unwrap(x);
      return u?.options ? u.options.flatMap(members) : u ? [u] : [];
    })) {
      const child = s.entries?.[String(key)] ?? s.value ?? s.item;
      if (child) next.push(child);
    }
    level = next;
  }
  const names = new Set<string>();
  const add = (x: SchemaShape) => {
    const u = unwrap(x);
    if (u?.options) u.options.forEach(add);
    else for (const k of Object.keys(u?.entries ?? {})) names.add(k);
  };
  level.forEach(add);
  return [...names];
}

/** The known name within edit distance 3 of `name` (and closer than its length), if any. */
export function closest(name: string, known: readonly string[]): string | undefined {
  const dist = (a: string, b: string) => {
    const d = Array.from({ length: b.length + 1 }, (_, j) => j);
    for (let i = 1; i <= a.length; i++) {
      let prev = d[0]!;
      d[0] = i;
      for (let j = 1; j <= b.length; j++) {
        const next = d[j]!;
        const same = a[i - 1]!.toLowerCase() === b[j - 1]!.toLowerCase();
        d[j] = Math.min(d[j]! + 1, d[j - 1]! + 1, prev + (same ? 0 : 1));
        prev = next;
      }
    }
    return d[b.length]!;
  };
  const best = known.map((k) => [k, dist(name, k)] as const).sort((a, b) => a[1] - b[1])[0];
  return best && best[1] <= Math.min(3, name.length - 1) ? best[0] : undefined;
}

/**
 * `unknown field "x" (did you mean y?)` when `issue` is a key `schema` does not declare, and
 * `missing field "x"` for one it requires (valibot says `Invalid key: Expected "x" but received
 * undefined`).
 */
export function unknownField(schema: unknown, issue: v.BaseIssue<unknown>): string | undefined {
  const path = issue.path?.map((p) => p.key as PropertyKey) ?? [];
  const key = path.at(-1);
  if (issue.kind === "schema" && issue.received === "undefined" && /^"[^"]+"$/.test(issue.expected ?? ""))
    return `missing field ${issue.expected}`;
  if (!isUnknownKey(issue) || typeof key !== "string") return undefined;
  const hint = closest(key, knownFields(schema as SchemaShape, path.slice(0, -1)));
  // A field another member of a union takes (`url` is an http summarizer's): not a misspelling of
  // itself (it said `unknown field "url" (did you mean url?)`).
  if (hint === key) {
    const holder = issue.path?.at(-1)?.input as Record<string, unknown> | undefined;
    return typeof holder?.type === "string"
      ? `field "${key}" is not taken with type ${JSON.stringify(holder.type)}`
      : `field "${key}" is not taken here`;
  }
  return `unknown field "${key}"${hint ? ` (did you mean ${hint}?)` : ""}`;
}

/** Whether `issue` is a key a strict object does not declare (worth saying before a missing one). */
export const isUnknownKey = (issue: v.BaseIssue<unknown>): boolean =>
  issue.type === "strict_object" && issue.expected === "never";

/** The issue to tell of a failed parse: a misspelt key before the missing one it is (`outptu`). */
export const firstIssue = <I extends v.BaseIssue<unknown>>(issues: readonly [I, ...I[]]): I =>
  issues.find(isUnknownKey) ?? issues[0];
