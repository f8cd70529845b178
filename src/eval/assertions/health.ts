/**
 * Health of the model calls, from the log alone: no hung or in-flight requests, no stall before the
 * first token, time-to-first-token and duration bounds (each call, or the session's p95), model errors
 * by kind, and the number of compactions. A p95 over nothing is "could not evaluate", never a pass.
 */
import type { ModelErrorKind } from "../../rollout/events.ts";
import type { Trace } from "../../rollout/folds/trace-types.ts";
import { nameMatches } from "../match/glob.ts";
import { type CountSpec, cannot, checkCount, fail, type Outcome, pass, plural } from "../outcome.ts";

/** No model request was left open past the hang threshold. */
export function noHung(trace: Trace): Outcome {
  const hung = trace.modelSpans.filter((m) => m.status === "hung");
  if (hung.length === 0) return pass("no hung model request");
  const h = hung[0]!;
  return fail(
    `${plural(hung.length, "hung model request")}: ${h.model} opened at seq ${h.seq} got no response for ${Math.round(h.duration_ms / 1000)} s`,
    {
      expected: "every model request answered",
      actual: hung.map((m) => ({ seq: m.seq, model: m.model, duration_ms: m.duration_ms })),
      seq: h.seq,
    },
  );
}

/** Nothing was left open at the end: no model request (hung or in flight) and no tool call without output. */
export function noInFlight(trace: Trace): Outcome {
  const open = trace.modelSpans.filter((m) => m.status === "in_flight" || m.status === "hung");
  if (open.length > 0) {
    const o = open[0]!;
    return fail(
      `${plural(open.length, "model request")} still open at the end of the log (first at seq ${o.seq}, ${o.status})`,
      {
        expected: "no open request",
        actual: open.map((m) => ({ seq: m.seq, status: m.status })),
        seq: o.seq,
      },
    );
  }
  const pending = trace.pendingCalls[0];
  if (pending) {
    return fail(
      `${plural(trace.pendingCalls.length, "tool call")} without output (first: ${pending.tool} at seq ${pending.seq})`,
      {
        expected: "every tool call has its output",
        actual: trace.pendingCalls.map((p) => ({ tool: p.tool, seq: p.seq })),
        seq: pending.seq,
      },
    );
  }
  return pass("nothing in flight at the end of the log");
}

/** No request went without a first token past the stall threshold. */
export function noStalls(trace: Trace): Outcome {
  const s = trace.modelSpans.find((m) => m.stalledBeforeFirstToken);
  if (!s) return pass("no stall before a first token");
  return fail(`${s.model} request at seq ${s.seq} stalled before its first token`, { seq: s.seq });
}

/** p-th percentile by nearest rank (p in 0..100). */
export function percentile(values: number[], p: number): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

export interface BoundSpec {
  /** Every call at or under this many ms. */
  max?: number;
  /** The 95th percentile at or under this many ms. */
  p95?: number;
}

/**
 * A set of timed points: the value and the event it came from. `atLeast`: the value is a lower bound
 * (a request still open, or one that ended without a first token).
 */
export type Timed = { ms: number; seq: number; what: string; atLeast?: boolean }[];

/** Check per-call max and p95 bounds over timed points; `name` labels the quantity. */
export function checkBounds(points: Timed, spec: BoundSpec, name: string): Outcome {
  if (spec.max !== undefined) {
    const over = points.find((p) => p.ms > spec.max!);
    if (over) {
      return fail(
        `${name} ${over.atLeast ? "≥ " : ""}${Math.round(over.ms)} ms > max ${spec.max} ms for ${over.what} at seq ${over.seq}`,
        {
          expected: `≤ ${spec.max} ms`,
          actual: over.ms,
          seq: over.seq,
        },
      );
    }
  }
  if (spec.p95 !== undefined) {
    const p = percentile(
      points.map((x) => x.ms),
      95,
    );
    if (p === undefined) return cannot(`${name} p95: no measured value to take a percentile of`);
    if (p > spec.p95) {
      return fail(`${name} p95 ${Math.round(p)} ms > ${spec.p95} ms over ${plural(points.length, "value")}`, {
        expected: `p95 ≤ ${spec.p95} ms`,
        actual: p,
      });
    }
  }
  // Over no value it holds, but says so (`values`): a case whose bound measured nothing in any
  // session (a misspelt tool, logs that record no first token) is set aside (`aggregate.ts`).
  return pass(`${name} within bounds over ${plural(points.length, "value")}`, { values: points.length });
}

/**
 * Time to first token of each model call. A call that ended in an error or is still open without a
 * first token counts with its age (at the fold's as-of time when open) as a lower bound: skipping it
 * hid exactly the stalls and hangs the bound is for. Left out: non-streamed calls without one (there
 * is no first token to wait for) and answered calls whose first-token time was not recorded (imported
 * logs): a response came, its first token at some unknown point before it.
 */
export const ttftPoints = (trace: Trace): Timed =>
  trace.modelSpans.flatMap((m) => {
    if (m.ttft_ms !== undefined) return [{ ms: m.ttft_ms, seq: m.seq, what: m.model }];
    if (m.streamed === false || m.status === "ok") return [];
    const how =
      m.status === "error" ? `before ${m.errorKind ? `a ${m.errorKind} ` : "an "}error` : "still open";
    return [{ ms: m.duration_ms, seq: m.seq, what: `${m.model} (no first token, ${how})`, atLeast: true }];
  });

/**
 * Durations of model calls (open ones with their age at the fold's as-of time, a lower bound), of
 * tool calls (optionally one tool), or of the session.
 */
export function durationPoints(trace: Trace, of: "model" | "tool" | "session", tool?: string): Timed {
  if (of === "session") return [{ ms: trace.wall_ms, seq: trace.lastSeq, what: "the session" }];
  if (of === "tool") {
    const done: Timed = trace.toolSpans
      .filter((t) => !tool || nameMatches(tool, t.tool))
      .map((t) => ({ ms: t.duration_ms, seq: t.callSeq, what: `${t.tool} call #${t.index}` }));
    // A call with no output counts with its age so far, as an open model call does: a `npm test`
    // left running an hour passed a 30 s bound (the worst calls are the ones a bound is for).
    const asOf = trace.asOf ?? trace.endedAt;
    const open: Timed = trace.pendingCalls
      .filter((c) => !tool || nameMatches(tool, c.tool))
      .map((c) => ({
        ms: Math.max(0, asOf - c.at),
        seq: c.seq,
        what: `${c.tool} (no output)`,
        atLeast: true,
      }));
    return [...done, ...open];
  }
  return trace.modelSpans.map((m) =>
    m.status === "ok" || m.status === "error"
      ? { ms: m.duration_ms, seq: m.seq, what: m.model }
      : { ms: m.duration_ms, seq: m.seq, what: `${m.model} (still open)`, atLeast: true },
  );
}

/** TTFT bounds over the session's model calls. */
export const ttft = (trace: Trace, spec: BoundSpec) => checkBounds(ttftPoints(trace), spec, "ttft");

/** Duration bounds over model calls (default), tool calls or the whole session. */
export const duration = (
  trace: Trace,
  spec: BoundSpec & { of?: "model" | "tool" | "session"; tool?: string },
) =>
  checkBounds(durationPoints(trace, spec.of ?? "model", spec.tool), spec, `${spec.of ?? "model"} duration`);

/** At most `max` (default 0) model errors of the given kinds (default all kinds). */
export function modelErrors(
  trace: Trace,
  spec: { kind?: ModelErrorKind | ModelErrorKind[]; max?: number } = {},
): Outcome {
  const kinds = spec.kind === undefined ? undefined : Array.isArray(spec.kind) ? spec.kind : [spec.kind];
  const max = spec.max ?? 0;
  const errs = trace.modelSpans.filter(
    (m) => m.status === "error" && (!kinds || (m.errorKind && kinds.includes(m.errorKind))),
  );
  // The kinds follow the noun: "2 model errors (provider)" (it read "2 model error (provider)s").
  const of = kinds ? ` (${kinds.join("|")})` : "";
  const count = `${plural(errs.length, "model error")}${of}`;
  if (errs.length <= max) return pass(`${count} (at most ${max})`);
  const e = errs[max]!;
  return fail(
    `${count}, at most ${max} allowed; ${e.errorKind ?? "error"} at seq ${e.seq}: ${e.error ?? "(no message)"}`,
    {
      expected: `≤ ${max}`,
      actual: errs.map((m) => ({ seq: m.seq, kind: m.errorKind, error: m.error })),
      seq: e.seq,
    },
  );
}

/** The number of compactions is within bounds (default at least one). */
export function compactions(trace: Trace, bound: CountSpec = { min: 1 }): Outcome {
  const n = trace.compactions.length;
  const b = checkCount(n, bound);
  if (b.ok)
    return pass(
      `${plural(n, "compaction")} (expected ${b.text})`,
      trace.compactions[0] ? { seq: trace.compactions[0].seq } : {},
    );
  const at = trace.compactions[typeof bound === "object" && bound.max !== undefined ? bound.max : 0];
  return fail(`expected ${b.text} compactions, got ${n}`, {
    expected: b.text,
    actual: n,
    ...(at ? { seq: at.seq } : {}),
  });
}
