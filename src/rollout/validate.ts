/**
 * Validating event lines against the catalogue, fast. valibot stays the single source of every
 * type: `compileCheck` walks the valibot schema once and builds a plain predicate from it, so the
 * common case (a valid line) costs a few `typeof` checks instead of a full valibot parse — folds must
 * run near raw `JSON.parse` speed. Only a line that fails the predicate goes through `v.safeParse`,
 * which produces the message and field path. A construct the compiler does not know falls back to
 * `v.is` for that node, so the predicate can never be looser than the schema.
 */
import * as v from "valibot";
import { isKnownEventType, type RolloutEvent, RolloutEventSchema } from "./events.ts";

type Check = (value: unknown) => boolean;
// valibot's schema objects, seen structurally (their public types are too deep to walk generically).
type Node = {
  type: string;
  kind?: string;
  entries?: Record<string, Node>;
  options?: Node[] | readonly unknown[];
  wrapped?: Node;
  item?: Node;
  pipe?: Node[];
  literal?: unknown;
  key?: string;
  requirement?: unknown;
};

const isObject = (x: unknown): x is Record<string, unknown> =>
  typeof x === "object" && x !== null && !Array.isArray(x);
const isString: Check = (x) => typeof x === "string";

/** Build a predicate equivalent to `v.is(schema, value)` for the schema kinds the catalogue uses. */
export function compileCheck(schema: unknown): Check {
  const node = schema as Node;
  const fallback: Check = (x) => v.is(schema as v.GenericSchema, x);
  // A piped schema keeps its head's `type`: check the pipe first.
  if (node.pipe) return compilePipe(node.pipe, fallback);
  switch (node.type) {
    case "string":
      return isString;
    case "number":
      return (x) => typeof x === "number" && !Number.isNaN(x);
    case "boolean":
      return (x) => typeof x === "boolean";
    case "unknown":
    case "any":
      return () => true;
    case "literal": {
      const lit = node.literal;
      return (x) => x === lit;
    }
    case "picklist": {
      const set = new Set(node.options as readonly unknown[]);
      return (x) => set.has(x);
    }
    case "optional": {
      const inner = compileCheck(node.wrapped);
      return (x) => x === undefined || inner(x);
    }
    case "array": {
      const item = compileCheck(node.item);
      return (x) => Array.isArray(x) && x.every(item);
    }
    case "object":
    case "loose_object":
      return objectCheck(Object.entries(node.entries ?? {}).map(([k, s]) => [k, compileCheck(s)] as const));
    case "variant":
      return variantCheck(
        node.key!,
        (node.options as Node[]).map((option) => [option.entries![node.key!]!.literal, compileCheck(option)]),
      );
    default:
      return fallback;
  }
}

/**
 * An object's check, generated as code with each key a constant (`x["seq"]`): a loop over the keys
 * reads `x[k]` with a different `k` each time, a lookup the JIT cannot cache, and was ~10% of the
 * trace fold's time. Keys are embedded with `JSON.stringify`, so no key can break out of the string.
 */
function objectCheck(checks: readonly (readonly [string, Check])[]): Check {
  const lines = checks.map(([k], i) => `if (!c[${i}](x[${JSON.stringify(k)}])) return false;`);
  const body = `return (x) => { if (typeof x !== "object" || x === null || Array.isArray(x)) return false; ${lines.join(" ")} return true; };`;
  return new Function("c", body)(checks.map(([, check]) => check)) as Check;
}

/**
 * A variant's check, generated as a `switch` on the tag with one call per case: a lookup of the tag
 * in a `Map` hashed every event's fresh tag string, and its one call site saw every variant's check
 * (a call the JIT cannot inline). Tags are embedded with `JSON.stringify`; only string tags are
 * switched on (any other tag falls back to the map).
 */
function variantCheck(key: string, options: [unknown, Check][]): Check {
  if (!options.every(([tag]) => typeof tag === "string")) {
    const byTag = new Map(options);
    return (x) => isObject(x) && (byTag.get(x[key])?.(x) ?? false);
  }
  const cases = options.map(([tag], i) => `case ${JSON.stringify(tag)}: return c[${i}](x);`);
  const body = `return (x) => { if (typeof x !== "object" || x === null || Array.isArray(x)) return false; switch (x[${JSON.stringify(key)}]) { ${cases.join(" ")} default: return false; } };`;
  return new Function("c", body)(options.map(([, check]) => check)) as Check;
}

function compilePipe(pipe: Node[], fallback: Check): Check {
  const [head, ...actions] = pipe;
  // A head that is a pipe itself (`v.pipe(finite(), v.minValue(0))`) keeps its own actions: it is
  // compiled whole, and the actions here are checked on top of it.
  const nested = head?.pipe !== undefined;
  const isNumber = !nested && head?.type === "number";
  const has = (type: string) => actions.some((a) => a.type === type);
  // Number.isInteger and Number.isFinite also rule out non-numbers, NaN and ±Infinity: a number that
  // must be an integer or finite is one call, not a `typeof` check and then another.
  let check: Check =
    isNumber && has("safe_integer")
      ? Number.isSafeInteger
      : isNumber && has("integer")
        ? Number.isInteger
        : isNumber && has("finite")
          ? Number.isFinite
          : compileCheck(nested ? head : { ...head, pipe: undefined });
  for (const action of actions) {
    const r = action.requirement as number;
    const before = check;
    // Chained closures rather than a list walked with `every` on every value.
    if (action.type === "safe_integer")
      check = isNumber ? before : (x) => before(x) && Number.isSafeInteger(x);
    else if (action.type === "integer") check = isNumber ? before : (x) => before(x) && Number.isInteger(x);
    else if (action.type === "finite") check = isNumber ? before : (x) => before(x) && Number.isFinite(x);
    else if (action.type === "min_value") check = (x) => before(x) && (x as number) >= r;
    else if (action.type === "max_value") check = (x) => before(x) && (x as number) <= r;
    else if (action.type === "min_length")
      check =
        before === isString
          ? (x) => typeof x === "string" && x.length >= r
          : (x) => before(x) && (x as string).length >= r;
    else return fallback; // an action we do not mirror: let valibot decide
  }
  return check;
}

/** Whether a value is a valid catalogue event (the fast path). */
export const isValidEvent = compileCheck(RolloutEventSchema) as (x: unknown) => x is RolloutEvent;

/**
 * The same catalogue with `seq` and `aggregateID` optional: what a writer hands over before the
 * store numbers it and stamps its session. Derived from the catalogue's own entries, so the two can
 * never disagree on anything else.
 */
export const EventDraftSchema = v.variant(
  "type",
  RolloutEventSchema.options.map((o) =>
    v.looseObject({
      ...o.entries,
      seq: v.optional(o.entries.seq),
      aggregateID: v.optional(o.entries.aggregateID),
    }),
  ),
);
/**
 * Fields that would carry a message body or model-written text. The log records what happened, never
 * what was said (a trace can be exported without leaking a conversation): a writer's event with one
 * of these is refused, whatever its type. The catalogue has none of them; other extra fields (a
 * writer's own metadata) stay allowed, and readers accept any.
 */
export const BODY_FIELDS: readonly string[] = [
  "content",
  "text",
  "message",
  "messages",
  "prompt",
  "completion",
  "parts",
  "body",
  "reasoning",
  "thinking",
];

/** The first body field `value` holds (see `BODY_FIELDS`), or undefined. */
export function bodyField(value: Record<string, unknown>): string | undefined {
  for (const f of BODY_FIELDS) if (value[f] !== undefined) return f;
  return undefined;
}

/** The problem a body field makes (see `BODY_FIELDS`). */
export const bodyProblem = (field: string) => ({
  message: `rollout events hold no message bodies or model-written text: field "${field}" is refused (the text belongs in the session's messages)`,
  field,
});

const isDraftShape = compileCheck(EventDraftSchema);
/** Whether a value is a valid event draft (envelope without `seq`, no body field). */
export const isValidDraft = (value: unknown): boolean =>
  isDraftShape(value) && bodyField(value as Record<string, unknown>) === undefined;

/** What is wrong with an event draft, naming the field; undefined when it is valid. */
export function draftProblem(value: unknown): { message: string; field?: string } | undefined {
  if (isValidDraft(value)) return undefined;
  if (!isObject(value)) return { message: "event is not an object" };
  const body = bodyField(value);
  if (body !== undefined) return bodyProblem(body);
  const type = value.type;
  if (typeof type !== "string" || type.length === 0) return { message: "event has no type", field: "type" };
  if (!isKnownEventType(type)) return { message: `unknown event type "${type}"`, field: "type" };
  const r = v.safeParse(EventDraftSchema, value);
  // The predicate is never looser than the schema; were it ever stricter, still refuse.
  if (r.success) return { message: `invalid ${type} event` };
  const { message, field } = describe(r.issues, type);
  return { message, field };
}

/** The outcome of checking one parsed line. */
export type CheckedEvent =
  | { kind: "event"; event: RolloutEvent }
  | { kind: "unknown"; type: string }
  | { kind: "invalid"; message: string; field?: string };

/**
 * Check a parsed JSON value against the catalogue. Types newer than the catalogue (with a valid
 * envelope) come back as `unknown` so readers can skip them without failing.
 */
export function checkEvent(value: unknown): CheckedEvent {
  if (isValidEvent(value)) return { kind: "event", event: value as RolloutEvent };
  if (!isObject(value)) return { kind: "invalid", message: "event is not a JSON object" };
  const type = value.type;
  if (typeof type !== "string" || type.length === 0) {
    return { kind: "invalid", message: "event has no type", field: "type" };
  }
  if (!isKnownEventType(type)) {
    const envelope = v.safeParse(EnvelopeOnly, value);
    if (envelope.success) return { kind: "unknown", type };
    return describe(envelope.issues, type);
  }
  const full = v.safeParse(RolloutEventSchema, value);
  if (full.success) return { kind: "event", event: full.output };
  return describe(full.issues, type);
}

const envelope = RolloutEventSchema.options[0].entries;
/** The catalogue's envelope alone, for types newer than the catalogue. */
const EnvelopeOnly = v.looseObject({
  id: envelope.id,
  seq: envelope.seq,
  aggregateID: envelope.aggregateID,
  timestamp: envelope.timestamp,
});

function describe(issues: [v.BaseIssue<unknown>, ...v.BaseIssue<unknown>[]], type: string) {
  const issue = issues[0];
  const field = v.getDotPath(issue) ?? undefined;
  return { kind: "invalid" as const, message: `invalid ${type} event: ${issue.message}`, field };
}
