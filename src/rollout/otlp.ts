/**
 * A Trace as OTLP/JSON (one `TracesData` document: `{"resourceSpans":[…]}`), following the
 * OpenTelemetry GenAI conventions: a root `invoke_agent` span per session (`gen_ai.conversation.id`),
 * a `turn` span per turn, `chat {model}` CLIENT spans with `gen_ai.usage.*` and
 * `gen_ai.response.time_to_first_chunk` (seconds), `execute_tool {name}` INTERNAL spans.
 * `gen_ai.usage.input_tokens` includes cached tokens, as the conventions define it (freecode's
 * `inputTokens` leaves out cache reads and writes, which keep their own attributes). Status follows
 * the conventions' "Recording Errors": ERROR with `error.type` on failure, else left Unset (0), never
 * OK. The conventions have nothing for refusals, hangs or compaction, so: a denied call is an
 * `execute_tool` span with status ERROR, `error.type=denied` and `rollout.denied.source`; an open
 * request, and a tool call with no output, ends at the fold's time with status ERROR,
 * `error.type=timeout` (hung) or `incomplete`, and `rollout.incomplete=true`; an aborted turn is
 * ERROR with `error.type=cancelled`; a compaction is a `rollout.compaction` event on the root span.
 * Encoding rules: hex ids, integer enums, 64-bit integers as decimal strings. Ids derive from the
 * session id and event seq, so the same log always exports the same spans.
 */
import type { ModelSpan, Trace } from "./folds/trace-types.ts";

type AnyValue =
  | { stringValue: string }
  | { intValue: string }
  | { doubleValue: number }
  | { boolValue: boolean };
type Attr = { key: string; value: AnyValue };
export interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: Attr[];
  events: { timeUnixNano: string; name: string; attributes: Attr[] }[];
  status: { code: number; message?: string };
}

const KIND_INTERNAL = 1;
const KIND_CLIENT = 3;
/** Success leaves status Unset: instrumentation sets OK only when configured to. */
const STATUS_UNSET = 0;
const STATUS_ERROR = 2;

/** The first `chars` hex digits of `text`'s SHA-256 (one-shot: a hasher object per span was 2.6x slower). */
const hex = (text: string, chars: number) => (Bun.SHA256.hash(text, "hex") as string).slice(0, chars);
/** The largest time OTLP holds: its times are unsigned 64-bit nanoseconds (year 2554). */
const MAX_NANOS = 2n ** 64n - 1n;
/**
 * A time as OTLP writes it, held within its unsigned 64-bit range: a log may hold times a date can
 * but OTLP cannot (before 1970, or past 2554), and a collector refuses a whole export for one.
 */
const nanos = (ms: number) => {
  const n = BigInt(Math.round(ms)) * 1_000_000n;
  return `${n < 0n ? 0n : n > MAX_NANOS ? MAX_NANOS : n}`;
};

function attr(key: string, value: string | number | boolean | undefined): Attr[] {
  if (value === undefined) return [];
  if (typeof value === "string") return [{ key, value: { stringValue: value } }];
  if (typeof value === "boolean") return [{ key, value: { boolValue: value } }];
  return Number.isInteger(value)
    ? [{ key, value: { intValue: String(value) } }]
    : [{ key, value: { doubleValue: value } }];
}

/** OTel's input tokens include cached ones; freecode's leave out cache reads and writes. */
function otelInputTokens(input?: number, cacheRead?: number, cacheWrite?: number): number | undefined {
  if (input === undefined && cacheRead === undefined && cacheWrite === undefined) return undefined;
  return (input ?? 0) + (cacheRead ?? 0) + (cacheWrite ?? 0);
}

/** Map a provider name onto `gen_ai.provider.name`'s well-known values where they differ. */
const providerName = (p: string) => (p === "bedrock" ? "aws.bedrock" : p === "google" ? "gcp.gemini" : p);

export interface OtlpOptions {
  agentName?: string;
  version?: string;
}

/** The OTLP/JSON document for one Trace. */
export function traceToOtlp(trace: Trace, options: OtlpOptions = {}) {
  return otlpDocument([...otlpSpans(trace, options)], options);
}

/** The document around `spans` (one resource, one scope). */
function otlpDocument(spans: OtlpSpan[], options: OtlpOptions) {
  const agent = options.agentName ?? "freecode";
  return {
    resourceSpans: [
      {
        resource: {
          attributes: [...attr("service.name", agent), ...attr("service.version", options.version)],
        },
        scopeSpans: [{ scope: { name: "freecode.rollout", version: options.version ?? "0" }, spans }],
      },
    ],
  };
}

/**
 * Write `JSON.stringify(traceToOtlp(trace, options))` a span at a time: a big log's export is
 * hundreds of thousands of spans (370 MB for the 525 MB bench log), which as one document and one
 * string took 2.7 GB. Returns the number of spans.
 */
export function writeOtlpJson(
  trace: Trace,
  write: (text: string) => void,
  options: OtlpOptions = {},
): number {
  // The document's text with no spans, cut where they go: `spans` is its last key.
  const empty = JSON.stringify(otlpDocument([], options));
  const at = empty.lastIndexOf('"spans":[]') + '"spans":['.length;
  write(empty.slice(0, at));
  let count = 0;
  for (const span of otlpSpans(trace, options)) write(`${count++ === 0 ? "" : ","}${JSON.stringify(span)}`);
  write(empty.slice(at));
  return count;
}

/** The spans of one Trace, in order: the root, the turns, model calls, tool calls, refusals, calls with no output. */
export function* otlpSpans(trace: Trace, options: OtlpOptions = {}): Generator<OtlpSpan> {
  const agent = options.agentName ?? "freecode";
  const traceId = hex(`trace:${trace.sessionId}`, 32);
  // Each span's id once: a log that repeats a `seq` (which `rollout verify` names) gave two spans
  // one id, and the export was invalid. A repeat takes the name again with its count.
  const named = new Map<string, number>();
  const id = (what: string) => {
    const n = named.get(what) ?? 0;
    named.set(what, n + 1);
    return hex(`${trace.sessionId}:${n === 0 ? what : `${what}#${n}`}`, 16);
  };
  const rootId = id("root");
  // A span never ends before it starts: a log an older writer made with a negative duration is
  // read as it is, and a collector may refuse such a span (it was exported ending first).
  const span = (s: Omit<OtlpSpan, "traceId" | "events"> & { events?: OtlpSpan["events"] }): OtlpSpan => ({
    traceId,
    events: [],
    ...s,
    ...(BigInt(s.endTimeUnixNano) < BigInt(s.startTimeUnixNano)
      ? { endTimeUnixNano: s.startTimeUnixNano }
      : {}),
  });
  const turnSpanId = new Map<string, string>();
  const asOf = trace.asOf ?? trace.endedAt;
  // A turn ends with its own last event or span, not when the next one starts: an aborted turn of
  // 2.4 s, then a session resumed a minute later, was exported as a turn of a minute.
  const spanEnds = new Map<string, number>();
  const reach = (turnKey: string | undefined, end: number) => {
    if (turnKey !== undefined) spanEnds.set(turnKey, Math.max(spanEnds.get(turnKey) ?? end, end));
  };
  for (const m of trace.modelSpans) reach(m.turnKey, m.startedAt + m.duration_ms);
  for (const t of trace.toolSpans) reach(t.turnKey, t.startedAt + t.duration_ms);
  for (const p of trace.pendingCalls) reach(p.turnKey, Math.max(p.at, asOf));
  const turnEnd = (i: number) => {
    const turn = trace.turns[i]!;
    return Math.max(turn.lastAt ?? turn.startedAt, spanEnds.get(turn.turnKey) ?? turn.startedAt);
  };

  yield span({
    spanId: rootId,
    name: `invoke_agent ${agent}`,
    kind: KIND_INTERNAL,
    startTimeUnixNano: nanos(trace.startedAt),
    endTimeUnixNano: nanos(Math.max(trace.endedAt, asOf)),
    attributes: [
      ...attr("gen_ai.operation.name", "invoke_agent"),
      ...attr("gen_ai.agent.name", agent),
      ...attr("gen_ai.conversation.id", trace.sessionId),
      // The agent's whole usage: its redirect advisor's tokens too, as `usage` and eval count them.
      ...attr(
        "gen_ai.usage.input_tokens",
        (otelInputTokens(trace.inputTokens, trace.cacheReadTokens, trace.cacheWriteTokens) ?? 0) +
          (trace.redirectTokens?.input ?? 0),
      ),
      ...attr("gen_ai.usage.output_tokens", trace.outputTokens + (trace.redirectTokens?.output ?? 0)),
      ...attr("rollout.redirects", trace.redirects),
      ...(trace.redirectTokens && trace.redirectTokens.input + trace.redirectTokens.output > 0
        ? [
            ...attr("rollout.redirect.input_tokens", trace.redirectTokens.input),
            ...attr("rollout.redirect.output_tokens", trace.redirectTokens.output),
          ]
        : []),
      ...attr("rollout.ended", trace.ended),
    ],
    events: trace.compactions.map((c) => ({
      timeUnixNano: nanos(c.at),
      name: "rollout.compaction",
      attributes: [
        ...attr("rollout.compaction.before_tokens", c.beforeTokens),
        ...attr("rollout.compaction.after_tokens", c.afterTokens),
      ],
    })),
    status: {
      code: trace.hung ? STATUS_ERROR : STATUS_UNSET,
      ...(trace.hung && { message: "hung model request" }),
    },
  });
  for (const [i, turn] of trace.turns.entries()) {
    const spanId = id(`turn:${turn.turnKey}`);
    turnSpanId.set(turn.turnKey, spanId);
    yield span({
      spanId,
      parentSpanId: rootId,
      name: `turn ${turn.turnId}`,
      kind: KIND_INTERNAL,
      startTimeUnixNano: nanos(turn.startedAt),
      endTimeUnixNano: nanos(turnEnd(i)),
      attributes: [
        ...attr("rollout.turn.key", turn.turnKey),
        ...attr("rollout.turn.aborted", turn.aborted),
        ...(turn.aborted ? attr("error.type", "cancelled") : []),
      ],
      // An abort is an error here as on a model span (`cancelled`); a turn that ran its course is Unset.
      status: turn.aborted
        ? { code: STATUS_ERROR, message: `aborted${turn.abortReason ? ` (${turn.abortReason})` : ""}` }
        : { code: STATUS_UNSET },
    });
  }
  const parentOf = (turnKey?: string) => (turnKey && turnSpanId.get(turnKey)) || rootId;
  for (const m of trace.modelSpans) yield span(chatSpan(m, id(`model:${m.seq}`), parentOf(m.turnKey)));
  for (const t of trace.toolSpans) {
    yield span({
      spanId: id(`tool:${t.callSeq}:${t.outputSeq}`),
      parentSpanId: parentOf(t.turnKey),
      name: `execute_tool ${t.tool}`,
      kind: KIND_INTERNAL,
      startTimeUnixNano: nanos(t.startedAt),
      endTimeUnixNano: nanos(t.startedAt + t.duration_ms),
      attributes: [
        ...attr("gen_ai.operation.name", "execute_tool"),
        ...attr("gen_ai.tool.name", t.tool),
        ...attr("gen_ai.tool.call.id", t.callId),
        ...attr("gen_ai.tool.type", "function"),
        ...(t.failed ? attr("error.type", "tool_error") : []),
      ],
      status: { code: t.failed ? STATUS_ERROR : STATUS_UNSET },
    });
  }
  for (const d of trace.deniedSpans) {
    yield span({
      spanId: id(`denied:${d.seq}`),
      parentSpanId: parentOf(d.turnKey),
      name: `execute_tool ${d.tool}`,
      kind: KIND_INTERNAL,
      startTimeUnixNano: nanos(d.at),
      endTimeUnixNano: nanos(d.at),
      attributes: [
        ...attr("gen_ai.operation.name", "execute_tool"),
        ...attr("gen_ai.tool.name", d.tool),
        ...attr("gen_ai.tool.call.id", d.callId),
        ...attr("error.type", "denied"),
        ...attr("rollout.denied.source", d.source),
        ...attr("rollout.denied.reason", d.reason),
      ],
      status: { code: STATUS_ERROR, message: `denied by ${d.source}` },
    });
  }
  // A call with no output yet: in progress (or its output lost), so ended at the fold's time like an
  // open request, under its turn.
  for (const p of trace.pendingCalls) {
    yield span({
      spanId: id(`pending:${p.seq}`),
      parentSpanId: parentOf(p.turnKey),
      name: `execute_tool ${p.tool}`,
      kind: KIND_INTERNAL,
      startTimeUnixNano: nanos(p.at),
      endTimeUnixNano: nanos(Math.max(p.at, asOf)),
      attributes: [
        ...attr("gen_ai.operation.name", "execute_tool"),
        ...attr("gen_ai.tool.name", p.tool),
        ...attr("gen_ai.tool.call.id", p.callId),
        ...attr("gen_ai.tool.type", "function"),
        ...attr("error.type", "incomplete"),
        ...attr("rollout.incomplete", true),
      ],
      status: { code: STATUS_ERROR, message: "no output" },
    });
  }
}

function chatSpan(m: ModelSpan, spanId: string, parentSpanId: string): Omit<OtlpSpan, "traceId"> {
  const open = m.status === "in_flight" || m.status === "hung";
  const errorType =
    m.status === "hung"
      ? "timeout"
      : open
        ? "incomplete"
        : m.errorKind === "stall"
          ? "timeout"
          : m.errorKind === "abort"
            ? "cancelled"
            : m.errorKind;
  const events: OtlpSpan["events"] =
    m.ttft_ms === undefined
      ? []
      : [{ timeUnixNano: nanos(m.startedAt + m.ttft_ms), name: "gen_ai.first_token", attributes: [] }];
  return {
    spanId,
    parentSpanId,
    name: `chat ${m.model}`,
    kind: KIND_CLIENT,
    startTimeUnixNano: nanos(m.startedAt),
    endTimeUnixNano: nanos(m.startedAt + m.duration_ms),
    attributes: [
      ...attr("gen_ai.operation.name", "chat"),
      ...attr("gen_ai.provider.name", providerName(m.provider)),
      ...attr("gen_ai.request.model", m.model),
      ...attr("gen_ai.response.model", m.echoedModel ?? m.responseModel),
      ...attr("gen_ai.request.stream", m.streamed),
      ...(m.ttft_ms === undefined
        ? []
        : [{ key: "gen_ai.response.time_to_first_chunk", value: { doubleValue: m.ttft_ms / 1000 } }]),
      ...attr(
        "gen_ai.usage.input_tokens",
        otelInputTokens(m.inputTokens, m.cacheReadTokens, m.cacheWriteTokens),
      ),
      ...attr("gen_ai.usage.output_tokens", m.outputTokens),
      ...attr("gen_ai.usage.cache_read.input_tokens", m.cacheReadTokens),
      ...attr("gen_ai.usage.cache_creation.input_tokens", m.cacheWriteTokens),
      ...attr("gen_ai.usage.reasoning.output_tokens", m.reasoningTokens),
      ...attr("error.type", errorType),
      ...(open ? attr("rollout.incomplete", true) : []),
      ...(m.stalledBeforeFirstToken ? attr("rollout.stall", true) : []),
    ],
    events,
    status: m.status === "ok" ? { code: STATUS_UNSET } : { code: STATUS_ERROR, message: m.error ?? m.status },
  };
}
