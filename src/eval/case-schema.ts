/**
 * The case file vocabulary, as valibot schemas (the single source of the types). A case is an `id`,
 * a selector of recorded sessions, and a list of expectations, each an object with one key naming its
 * assertion. freecode's own top-level case fields are accepted with their meaning; fields that need the
 * agent re-run (`files`, `verify`, `rubric`, …) are rejected, since nothing is re-run here.
 */
import * as v from "valibot";
import { DENY_SOURCES, MODEL_ERROR_KINDS } from "../rollout/events.ts";
import { SEQUENCE_MODES } from "./assertions/sequence.ts";
import type { ArgSpec } from "./match/args.ts";

const nonNeg = v.pipe(v.number(), v.integer(), v.minValue(0));
/** A bound in ms (or USD): finite — `.inf` checks nothing (and shows as null in labels). */
const ms = v.pipe(
  v.number(),
  v.finite("must be a finite number (an infinite bound checks nothing)"),
  v.minValue(0),
);
const ratio = v.pipe(v.number(), v.minValue(0), v.maxValue(1));
/** A share that must be met: above 0 (0 lets every session fail, a case that cannot fail). */
const share = v.pipe(
  ratio,
  v.check((x) => x > 0, "0 lets every session fail: this can never fail"),
);
const name = v.pipe(v.string(), v.minLength(1, "must not be empty"));
const names = v.pipe(v.array(name), v.minLength(1, "must list at least one name"));
/** A list a check goes through: an empty one checks nothing. */
const some = <T extends v.GenericSchema>(item: T) =>
  v.pipe(v.array(item), v.minLength(1, "an empty list checks nothing"));

let regexError = "";
/** Whether `source` compiles with `flags`; `regexError` says why not. */
const validRegex = (source: string, flags = "") => {
  if (/[gy]/.test(flags)) {
    // A pattern is compiled once and tested against every session: these would remember where it
    // last matched, and the verdict would depend on the order sessions are checked in.
    regexError = `flags g and y make a pattern remember where it last matched: leave them out (got "${flags}")`;
    return false;
  }
  try {
    new RegExp(source, flags);
    return true;
  } catch (error) {
    regexError = (error as Error).message;
    return false;
  }
};
/** The source and flags of a `/regex/flags` title pattern, or undefined for a glob. */
export const titleRegex = (pattern: string): { source: string; flags: string } | undefined => {
  const m = /^\/(.*)\/([a-z]*)$/s.exec(pattern);
  return m ? { source: m[1]!, flags: m[2]! } : undefined;
};
/** A regular expression source (checked at load, so a typo is exit 2, not a run-time crash). */
export const RegexSource = v.pipe(
  v.string(),
  v.check(validRegex, () => `invalid regular expression: ${regexError}`),
);
const regexes = v.union([RegexSource, some(RegexSource)]);

/** Bounds that can fail and can pass: at least one of `keys` given, and `min` not above `max`. */
const bounded = <T extends Record<string, unknown>>(keys: (keyof T & string)[]) =>
  v.check(
    (o: T) => keys.some((k) => o[k] !== undefined),
    `give ${keys.map((k) => `\`${k}\``).join(" or ")}: with none this checks nothing`,
  );
const ordered = v.check(
  (o: { min?: number; max?: number }) => o.min === undefined || o.max === undefined || o.min <= o.max,
  "min is above max: this can never pass",
);

export const CountSchema = v.union([
  nonNeg,
  v.pipe(
    v.strictObject({ min: v.optional(nonNeg), max: v.optional(nonNeg) }),
    bounded(["min", "max"]),
    ordered,
    v.check(
      (o: { min?: number; max?: number }) => !(o.min === 0 && o.max === undefined),
      "min 0 with no max: every count passes, this checks nothing",
    ),
  ),
]);

const OPERATORS = ["$eq", "$regex", "$flags", "$exists"];

/**
 * What is wrong with an argument matcher at `path`, or undefined. A key starting with `$` must be
 * one of the operators, alone (`$flags` only beside `$regex`): a misspelled `$regx` read as an
 * argument named "$regx" would fail every session instead of the case file being refused.
 */
function argProblem(x: unknown, path: string): string | undefined {
  if (x === null || ["string", "number", "boolean"].includes(typeof x)) return undefined;
  if (Array.isArray(x)) {
    for (const [i, item] of x.entries()) {
      const p = argProblem(item, `${path}.${i}`);
      if (p) return p;
    }
    return undefined;
  }
  if (typeof x !== "object") return `${path}: ${typeof x} is not a matcher`;
  const o = x as Record<string, unknown>;
  const keys = Object.keys(o);
  const ops = keys.filter((k) => k.startsWith("$"));
  const unknown = ops.find((k) => !OPERATORS.includes(k));
  if (unknown)
    return `${path}: unknown operator ${unknown} (known: ${OPERATORS.join(", ")}; to match an argument whose name starts with $, use {$eq: …} on the object holding it)`;
  if (ops.length === 0) {
    for (const [k, sub] of Object.entries(o)) {
      const p = argProblem(sub, `${path}.${k}`);
      if (p) return p;
    }
    return undefined;
  }
  const allowed = "$regex" in o ? ["$regex", "$flags"] : ops.slice(0, 1);
  const extra = keys.find((k) => !allowed.includes(k));
  if (extra) return `${path}: ${ops[0]} cannot be combined with ${extra}`;
  if ("$flags" in o && !("$regex" in o)) return `${path}: $flags goes with $regex`;
  if ("$regex" in o) {
    if (typeof o.$regex !== "string") return `${path}: $regex must be a string`;
    if ("$flags" in o && (typeof o.$flags !== "string" || !/^[dgimsuvy]*$/.test(o.$flags)))
      return `${path}: $flags must be regular expression flags such as "i" or "ms"`;
    if (!validRegex(o.$regex, (o.$flags as string | undefined) ?? ""))
      return `${path}: invalid regular expression: ${regexError}`;
  }
  if ("$exists" in o && typeof o.$exists !== "boolean") return `${path}: $exists must be true or false`;
  return undefined;
}

/** Argument matchers: strings, scalars, `{$eq}`, `{$regex, $flags}`, `{$exists}`, arrays, partial objects. */
export const ArgSpecSchema = v.pipe(
  v.record(v.string(), v.unknown()),
  v.rawCheck(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    for (const [k, sub] of Object.entries(dataset.value)) {
      const problem = argProblem(sub, k);
      if (problem) {
        addIssue({ message: `args ${problem}` });
        return;
      }
    }
  }),
  v.transform((o) => o as ArgSpec),
);
const argsMode = v.optional(v.picklist(["partial", "exact"]));
const toolSpec = v.strictObject({
  name,
  count: v.optional(CountSchema),
  args: v.optional(ArgSpecSchema),
  argsMode,
});
const over = v.optional(v.picklist(["session", "selection"]));
/** A check switched on: `false` checks nothing (leave the assertion out). */
const flag = v.pipe(
  v.boolean(),
  v.check((on) => on, "false checks nothing: leave the assertion out"),
);
const sources = v.union([v.picklist(DENY_SOURCES), v.array(v.picklist(DENY_SOURCES))]);

/** Every assertion an `expect:` item may name, with the schema of its value. */
export const ASSERTIONS = {
  expectTool: v.union([name, toolSpec]),
  forbidTools: v.union([names, v.strictObject({ tools: names, includeDenied: v.optional(v.boolean()) })]),
  expectNoTools: flag,
  expectFirstToolIn: names,
  expectInArgs: v.strictObject({ tool: name, args: ArgSpecSchema }),
  expectParallelTools: v.union([flag, v.pipe(v.number(), v.integer(), v.minValue(2))]),
  toolCalls: CountSchema,
  expectBashMatches: regexes,
  forbidBashMatches: regexes,
  expectSequence: v.strictObject({
    mode: v.picklist(SEQUENCE_MODES),
    steps: some(v.union([name, v.strictObject({ name, args: v.optional(ArgSpecSchema), argsMode })])),
  }),
  expectDenied: v.strictObject({
    tool: v.optional(name),
    source: v.optional(sources),
    count: v.optional(CountSchema),
  }),
  forbidDenied: v.union([
    flag,
    v.pipe(
      v.strictObject({ except: v.optional(v.array(v.picklist(DENY_SOURCES))), tool: v.optional(name) }),
      v.check(
        (o) => new Set(o.except ?? []).size < DENY_SOURCES.length,
        "except lists every source: no denial is forbidden, this checks nothing",
      ),
    ),
  ]),
  deniedNeverRan: v.union([flag, v.strictObject({ tool: v.optional(name) })]),
  noRetryAfterDenial: v.union([
    flag,
    v.strictObject({ maxRetries: v.optional(nonNeg), tool: v.optional(name) }),
  ]),
  noHung: flag,
  noInFlight: flag,
  noStalls: flag,
  ttft: v.pipe(v.strictObject({ max: v.optional(ms), p95: v.optional(ms), over }), bounded(["max", "p95"])),
  duration: v.pipe(
    v.strictObject({
      max: v.optional(ms),
      p95: v.optional(ms),
      of: v.optional(v.picklist(["model", "tool", "session"])),
      tool: v.optional(name),
      over,
    }),
    bounded(["max", "p95"]),
    v.check(
      (o) => o.tool === undefined || o.of === "tool",
      "tool goes with of: tool (without it, model calls are timed)",
    ),
  ),
  modelErrors: v.strictObject({
    kind: v.optional(v.union([v.picklist(MODEL_ERROR_KINDS), v.array(v.picklist(MODEL_ERROR_KINDS))])),
    max: v.optional(nonNeg),
  }),
  compactions: CountSchema,
  // true: at least one compaction; false: none (a check too, unlike the flags above).
  expectCompaction: v.boolean(),
  expectMaxTurns: nonNeg,
  turns: CountSchema,
  changedFiles: v.pipe(
    v.strictObject({
      include: v.optional(some(name)),
      exclude: v.optional(some(name)),
      only: v.optional(some(name)),
    }),
    bounded(["include", "exclude", "only"]),
  ),
  tokens: v.pipe(
    v.strictObject({
      maxInput: v.optional(nonNeg),
      maxOutput: v.optional(nonNeg),
      maxTotal: v.optional(nonNeg),
      maxCacheRead: v.optional(nonNeg),
    }),
    bounded(["maxInput", "maxOutput", "maxTotal", "maxCacheRead"]),
  ),
  cost: v.strictObject({ maxUsd: ms }),
} as const;

export type AssertionName = keyof typeof ASSERTIONS;
export type AssertionValue<K extends AssertionName> = v.InferOutput<(typeof ASSERTIONS)[K]>;

// What valibot calls an ISO date-time includes forms `Date.parse` cannot read (`+02` with no
// minutes): those would be a bound that is silently no bound.
const readable = v.check(
  (s: string) => !Number.isNaN(Date.parse(s)),
  "is not a date-time this can read (write the offset as +02:00, or Z)",
);
const time = v.union([v.number(), v.pipe(v.string(), v.isoTimestamp("must be an ISO date-time"), readable)]);
const date = v.union([
  time,
  v.pipe(v.string(), v.isoDate("must be an ISO date (YYYY-MM-DD) or date-time"), readable),
]);
/** Session ids, each once: a repeated one would count as another trial in `passRate` and `passK`. */
const ids = v.pipe(
  v.array(name),
  v.rawCheck(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    const seen = new Set<string>();
    for (const id of dataset.value) {
      if (seen.has(id)) return addIssue({ message: `session ${id} is listed twice` });
      seen.add(id);
    }
  }),
);
/** A title glob, or `/regex/flags` (compiled here, so a typo is a case-file error). */
const titlePattern = v.pipe(
  name,
  v.check(
    (p) => {
      const re = titleRegex(p);
      return re === undefined || validRegex(re.source, re.flags);
    },
    () => `invalid regular expression: ${regexError}`,
  ),
);

/** Which recorded sessions a case runs over; the filters combine with AND. */
export const SelectorSchema = v.union([
  v.literal("all"),
  ids,
  v.strictObject({
    ids: v.optional(ids),
    /** Glob on the session's project path. */
    project: v.optional(name),
    /** Glob on the title, or `/regex/flags`. */
    title: v.optional(titlePattern),
    /** The session has all of these tags. */
    tags: v.optional(v.array(name)),
    /** A folder or glob of rollout files, relative to the case file. */
    path: v.optional(name),
    /** Every session (the default). `false` would read as "not all" and select all the same. */
    all: v.optional(v.literal(true, "all may only be true (to select fewer sessions, give ids or a filter)")),
    since: v.optional(date),
    until: v.optional(date),
  }),
]);
export type Selector = v.InferOutput<typeof SelectorSchema>;

const Price = v.strictObject({
  input: ms,
  output: ms,
  cacheRead: v.optional(ms),
  cacheWrite: v.optional(ms),
});

/** Fields of freecode's own cases that describe how to re-run the agent: informational here. */
const FREECODE_INFO = [
  "prompt",
  "failureCategory",
  "whyModelBacked",
  "knownGap",
  "model",
  "agentMode",
] as const;
/** freecode fields that need the agent re-run: rejected with a reason. */
export const RERUN_FIELDS = [
  "files",
  "verify",
  "immutable",
  "rubric",
  "followUps",
  "env",
  "memories",
  "sessionFollowUps",
  "consolidateBeforeFinal",
];

export const CaseSchema = v.strictObject({
  id: name,
  description: v.optional(v.string()),
  sessions: v.optional(SelectorSchema),
  expect: v.optional(v.array(v.unknown())),
  /** Share of selected sessions that must pass every expectation (default 1). */
  passRate: v.optional(share),
  /** pass^k over sessions sharing a task id, at least `min`. */
  passK: v.optional(v.strictObject({ k: v.pipe(v.number(), v.integer(), v.minValue(1)), min: share })),
  prices: v.optional(v.record(v.string(), Price)),
  /** Skip the case (with a reason). */
  skip: v.optional(v.union([v.boolean(), v.string()])),
  /** Refused: a case has no tags of its own, and a silently ignored `tags:` would select every
   * session where `sessions: {tags}` was meant. */
  tags: v.optional(
    v.never("a case has no top-level tags; to select sessions by tag write `sessions: { tags: [...] }`"),
  ),
  // freecode's own case fields.
  expectTool: v.optional(v.nullable(v.union([name, toolSpec]))),
  expectInArgs: v.optional(ArgSpecSchema),
  expectMaxTurns: v.optional(nonNeg),
  forbidTools: v.optional(names),
  expectFirstToolIn: v.optional(names),
  expectBashMatches: v.optional(regexes),
  forbidBashMatches: v.optional(regexes),
  // The same schemas as the assertions (a top-level `false` checked nothing there too).
  expectParallelTools: v.optional(ASSERTIONS.expectParallelTools),
  expectCompaction: v.optional(ASSERTIONS.expectCompaction),
  ...Object.fromEntries(FREECODE_INFO.map((k) => [k, v.optional(v.unknown())])),
});
export type CaseInput = v.InferOutput<typeof CaseSchema>;
