/**
 * A Trace as a terminal waterfall: a summary, then each turn with its model calls, tool calls and
 * refusals on a shared time axis. Pure (returns text); the CLI prints it. Colour is ANSI and only on
 * request; without it, span kinds still differ by glyph (█ model, ▒ tool, × denied, ░ open).
 * Recorded text (tool names, arguments, errors, reasons) is shown with its control characters
 * escaped: only the colours asked for reach the terminal.
 */

import { fitColumns, padColumns } from "../util/columns.ts";
import { escapeLine } from "../util/one-line.ts";
import { plural } from "../util/plural.ts";
import type { DeniedSpan, ModelSpan, ToolSpan, Trace } from "./folds/trace-types.ts";
import { traceState } from "./trace-state.ts";

export interface WaterfallOptions {
  /** Terminal columns (default 100, at least 60). */
  width?: number;
  color?: boolean;
  /** Show only spans at least this long (turn headers of hidden spans stay). */
  slowMs?: number;
}

type Row = { at: number; dur: number; label: string; glyph: string; detail: string; tone: Tone };
type Tone = "model" | "tool" | "fail" | "denied" | "open" | "hung" | "dim";
const TONES: Record<Tone, string> = {
  model: "36",
  tool: "32",
  fail: "31",
  denied: "35",
  open: "33",
  hung: "1;31",
  dim: "2",
};

/**
 * Human duration: 950ms, 1.50s, 2m05.0s, 1h02m. Rounded to the unit's precision first, so a value
 * just under a unit's edge carries into the next unit (1m60.0s is 2m00.0s, 999.6 ms is 1.00s).
 */

/** The redirect advisor's tokens, when it used any (`usage` and eval count them; model spans do not). */
function advisorTokens(t: Trace): string {
  const a = t.redirectTokens;
  if (!a || a.input + a.output === 0) return "";
  return ` · redirect advisor in ${fmtTokens(a.input)} out ${fmtTokens(a.output)}`;
}
export function fmtMs(ms: number): string {
  if (Math.round(ms) < 1000) return `${Math.round(ms)}ms`;
  const centis = Math.round(ms / 10); // 1.50s
  if (centis < 6_000) return `${(centis / 100).toFixed(2)}s`;
  const tenths = Math.round(ms / 100); // 2m05.0s
  if (tenths < 36_000) {
    const m = Math.floor(tenths / 600);
    return `${m}m${((tenths - m * 600) / 10).toFixed(1).padStart(4, "0")}s`;
  }
  const minutes = Math.floor(tenths / 600); // 1h02m
  return `${Math.floor(minutes / 60)}h${String(minutes % 60).padStart(2, "0")}m`;
}

/** Token counts: 950, 1.2k, 3.4M (999,960 is 1.0M, not 1000.0k). */
export function fmtTokens(n: number): string {
  if (n < 1000) return String(n);
  if (Math.round(n / 100) < 10_000) return `${(n / 1000).toFixed(1)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}

function argHint(args: unknown): string {
  if (typeof args === "string") return args.split("\n")[0] ?? "";
  if (typeof args !== "object" || args === null) return "";
  const a = args as Record<string, unknown>;
  const v =
    a.file_path ?? a.filePath ?? a.path ?? a.notebook_path ?? a.command ?? a.cmd ?? a.pattern ?? a.url;
  if (Array.isArray(v))
    return (
      v
        .filter((x) => typeof x === "string")
        .join(" ")
        .split("\n")[0] ?? ""
    );
  return typeof v === "string" ? (v.split("\n")[0] ?? "") : "";
}

/** A model request's row; `ended`: the session ended, so a request still open was never answered. */
function modelRow(m: ModelSpan, ended: boolean): Row {
  const bits: string[] = [fmtMs(m.duration_ms)];
  if (m.ttft_ms !== undefined) bits.push(`ttft ${fmtMs(m.ttft_ms)}`);
  if (m.inputTokens !== undefined || m.outputTokens !== undefined)
    bits.push(`in ${fmtTokens(m.inputTokens ?? 0)} out ${fmtTokens(m.outputTokens ?? 0)}`);
  if (m.cacheReadTokens) bits.push(`cache ${fmtTokens(m.cacheReadTokens)}`);
  let tone: Tone = "model";
  if (m.status === "hung") [tone, bits[0]] = ["hung", `HUNG ${fmtMs(m.duration_ms)}`];
  else if (m.status === "in_flight")
    [tone, bits[0]] = ["open", `${ended ? "never answered" : "in flight"} ${fmtMs(m.duration_ms)}`];
  else if (m.status === "error") {
    tone = "fail";
    bits.push(`ERROR ${m.errorKind}${m.error ? `: ${m.error}` : ""}`);
  }
  if (m.stalledBeforeFirstToken) bits.push("STALL before first token");
  if (m.toolCalls.length) bits.push(`→ ${m.toolCalls.join(", ")}`);
  const open = m.status === "hung" || m.status === "in_flight";
  return {
    at: m.startedAt,
    dur: m.duration_ms,
    label: `chat ${m.model}`,
    glyph: open ? "░" : "█",
    detail: bits.join("  "),
    tone,
  };
}

function toolRow(t: ToolSpan): Row {
  const hint = argHint(t.args);
  const detail = `${fmtMs(t.duration_ms)}${t.failed ? "  FAILED" : ""}${hint ? `  ${hint}` : ""}`;
  return {
    at: t.startedAt,
    dur: t.duration_ms,
    label: `tool ${t.tool}`,
    glyph: "▒",
    detail,
    tone: t.failed ? "fail" : "tool",
  };
}

function deniedRow(d: DeniedSpan): Row {
  const detail = `DENIED by ${d.source}${d.reason ? `: ${d.reason}` : ""}`;
  return { at: d.at, dur: 0, label: `denied ${d.tool}`, glyph: "×", detail, tone: "denied" };
}

/** Render `trace` as lines of text (joined with `\n`, with a trailing newline). */
export function renderWaterfall(trace: Trace, options: WaterfallOptions = {}): string {
  const lines: string[] = [];
  writeWaterfall(trace, (line) => lines.push(line), options);
  return `${lines.join("\n")}\n`;
}

// A span, as a number: its index in its list and which list (the low two bits).
const MODEL = 0;
const TOOL = 1;
const DENIED = 2;

/**
 * Write `trace` as a waterfall, a line at a time (without newlines). A turn's rows are made when the
 * turn is written; until then a span is a number in its turn's list, so a Trace of hundreds of
 * thousands of spans never has a row object, or a line, per span at once.
 */
export function writeWaterfall(trace: Trace, write: (line: string) => void, options: WaterfallOptions = {}) {
  const width = Math.max(60, options.width ?? 100);
  const paint = (tone: Tone, s: string) => (options.color ? `\x1b[${TONES[tone]}m${s}\x1b[0m` : s);
  const labelW = Math.min(26, Math.floor(width * 0.25));
  const barW = Math.max(10, Math.min(60, Math.floor(width * 0.3)));
  const detailW = width - 9 - labelW - barW - 3;
  const t0 = trace.startedAt;
  const span = Math.max(1, (trace.asOf ?? trace.endedAt) - t0);
  for (const line of summary(trace, paint)) write(line);

  const bar = (r: Row) => {
    // A span may reach back before the log's first event (an output or a response with no call or
    // request before it, started its duration earlier): drawn from the first column (a negative
    // start threw, and `trace` died with a stack trace).
    const from = Math.max(r.at, t0);
    const start = Math.min(barW - 1, Math.floor(((from - t0) / span) * barW));
    const len = Math.max(1, Math.min(barW - start, Math.round(((r.at + r.dur - from) / span) * barW)));
    return `${" ".repeat(start)}${paint(r.tone, r.glyph.repeat(len))}${" ".repeat(barW - start - len)}`;
  };
  const line = (r: Row) => {
    const offset = `+${fmtMs(Math.max(0, r.at - t0))}`.padStart(9);
    const detail = fitColumns(r.detail, detailW).text;
    return `${paint("dim", offset)} ${padColumns(r.label, labelW)} ${bar(r)} ${r.tone === "hung" || r.tone === "fail" || r.tone === "denied" ? paint(r.tone, detail) : detail}`;
  };

  const groups = new Map<string, number[]>();
  const add = (key: string | undefined, ref: number) => {
    const k = key ?? "";
    const list = groups.get(k);
    if (list) list.push(ref);
    else groups.set(k, [ref]);
  };
  for (const [i, m] of trace.modelSpans.entries()) add(m.turnKey, i * 4 + MODEL);
  for (const [i, t] of trace.toolSpans.entries()) add(t.turnKey, i * 4 + TOOL);
  for (const [i, d] of trace.deniedSpans.entries()) add(d.turnKey, i * 4 + DENIED);
  const rowOf = (ref: number): Row => {
    const i = Math.floor(ref / 4);
    const kind = ref % 4;
    if (kind === MODEL) return modelRow(trace.modelSpans[i]!, trace.ended);
    if (kind === TOOL) return toolRow(trace.toolSpans[i]!);
    return deniedRow(trace.deniedSpans[i]!);
  };
  /** The rows of `refs` that `--slow` keeps, in time order. */
  const rowsOf = (refs: number[] | undefined) =>
    (refs ?? [])
      .map(rowOf)
      .filter((r) => options.slowMs === undefined || r.dur >= options.slowMs || r.tone === "hung")
      .sort((a, b) => a.at - b.at);
  const emit = (rows: Row[]) => {
    for (const r of rows) write(line(r));
  };

  const turnKeys = new Set(trace.turns.map((t) => t.turnKey));
  const loose = rowsOf([...groups.entries()].filter(([k]) => !turnKeys.has(k)).flatMap(([, refs]) => refs));
  if (loose.length) {
    write(paint("dim", "── outside any turn"));
    emit(loose);
  }
  for (const turn of trace.turns) {
    const flags = turn.aborted
      ? paint("fail", `  ABORTED${turn.abortReason ? ` (${escapeLine(turn.abortReason)})` : ""}`)
      : "";
    write(
      `${paint("dim", `+${fmtMs(turn.startedAt - t0)}`.padStart(9))} ── turn ${escapeLine(turn.turnKey)}${flags}`,
    );
    emit(rowsOf(groups.get(turn.turnKey)));
  }
}

function summary(t: Trace, paint: (tone: Tone, s: string) => string): string[] {
  const status = {
    hung: () => paint("hung", "HUNG (a model request is past the hang threshold)"),
    in_flight: () => paint("open", "in flight (a model request is still open)"),
    ended: () => (t.inFlight ? `ended ${paint("open", "(a model request was never answered)")}` : "ended"),
    imported: () => "imported (its agent writes no session.ended)",
    open: () => "open (no session.ended)",
  }[traceState(t)]();
  const out = [
    `session ${escapeLine(t.sessionId)}  ${t.eventCount > 0 ? new Date(t.startedAt).toISOString() : "(no events)"}  ${status}`,
    `${plural(t.turns.length, "turn")} · ${plural(t.modelSpans.length, "model call")} · ${plural(t.toolSpans.length, "tool call")} · ${t.deniedSpans.length} denied · wall ${fmtMs(t.wall_ms)} · model ${fmtMs(t.model_ms)} · tools ${fmtMs(t.tool_ms)}`,
    `tokens in ${fmtTokens(t.inputTokens)} out ${fmtTokens(t.outputTokens)} cache read ${fmtTokens(t.cacheReadTokens)} write ${fmtTokens(t.cacheWriteTokens)} · compactions ${t.compactions.length} (${fmtTokens(t.compactedTokens)} tokens) · redirects ${t.redirects} (${t.redirectsSkipped} skipped)${advisorTokens(t)}`,
  ];
  if (t.stalls)
    out.push(
      paint("open", `${t.stalls} request(s) stalled before the first token (≥ ${fmtMs(t.stallMs ?? 0)})`),
    );
  if (t.pendingCalls.length)
    out.push(
      escapeLine(
        `${t.pendingCalls.length} tool call(s) with no output: ${t.pendingCalls.map((p) => p.tool).join(", ")}`,
      ),
    );
  if (t.changedFiles.length) out.push(escapeLine(`changed files: ${t.changedFiles.join(", ")}`));
  for (const e of t.parseErrors)
    out.push(paint("fail", escapeLine(`unreadable line${e.line ? ` ${e.line}` : ""}: ${e.message}`)));
  out.push("");
  return out;
}
