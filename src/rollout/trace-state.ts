/**
 * A trace's state at a glance, one word (`trace --list`'s STATE column; the waterfall's head says
 * it in words): `hung` past the hang threshold, `in_flight` while a model request is open, `ended`
 * on `session.ended` (a request still open then was never answered: it is in flight no more), `imported` for a log made from another agent's transcript (those agents write
 * no end, so "open" would say nothing), else `open`.
 */
import type { Trace } from "./folds/trace-types.ts";

export type TraceState = "hung" | "in_flight" | "ended" | "imported" | "open";

export function traceState(t: Trace): TraceState {
  if (t.hung) return "hung";
  if (t.inFlight && !t.ended) return "in_flight";
  if (t.ended) return "ended";
  return t.imported ? "imported" : "open";
}
