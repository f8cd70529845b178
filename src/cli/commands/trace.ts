/**
 * `freecode trace [id]`: a session's trace as a waterfall (default: the session whose last event is
 * newest), `--json` for the Trace object, `--list` for the sessions with a log (newest first, `--limit`
 * of them, default 50), `--follow` to redraw
 * as the log grows (open requests aged against now), `--slow MS` to show only slow spans, `--otlp
 * FILE` to also write OpenTelemetry GenAI spans (OTLP/JSON).
 */
import { usageError } from "../../errors.ts";
import type { TraceOptions } from "../../rollout/folds/trace.ts";
import { loadTrace } from "../../rollout/load.ts";
import { writeWaterfall } from "../../rollout/waterfall.ts";
import { command, wholeNumber } from "../_command.ts";
import { stdoutColumns, stdoutPieces } from "../_stdout.ts";
import { withRollouts } from "./rollout/_source.ts";
import { followTrace } from "./trace/_follow.ts";
import { listTraces } from "./trace/_list.ts";
import { writeOtlp } from "./trace/_otlp.ts";

/** `trace --list` folds each log it shows: the newest this many unless `--limit` says otherwise. */
const DEFAULT_LIST_LIMIT = 50;

export default command({
  meta: { name: "trace", description: "Show a session's trace: model calls, tool calls, denials, hangs" },
  args: {
    id: {
      type: "positional",
      required: false,
      description: "Session id or a unique start of one (default: the most recent)",
    },
    follow: {
      type: "boolean",
      alias: "f",
      description: "Redraw every second as the log grows (Ctrl+C stops)",
    },
    slow: { type: "string", description: "Show only spans at least this long (ms)", valueHint: "ms" },
    list: { type: "boolean", description: "List sessions that have a rollout log, newest first" },
    limit: {
      type: "string",
      description: "With --list: at most this many sessions (default 50)",
      valueHint: "n",
    },
    "hang-ms": {
      type: "string",
      description: "An open request older than this is hung (default 300000)",
      valueHint: "ms",
    },
    "stall-ms": {
      type: "string",
      description: "Flag requests with no first token after this (default 60000)",
      valueHint: "ms",
    },
    otlp: {
      type: "string",
      description:
        "Also write the trace as OTLP/JSON spans to this file, or POST them to this http(s) OTLP endpoint",
      valueHint: "file|url",
    },
  },
  async run(ctx, args) {
    const config = ctx.config();
    const options: TraceOptions = {
      hangMs: wholeNumber(args["hang-ms"], "hang-ms", 1) ?? config.hangMs,
      stallMs: wholeNumber(args["stall-ms"], "stall-ms", 1) ?? config.stallMs,
      ...(config.changedFileTools && { changedFileTools: config.changedFileTools }),
    };
    const slowMs = wholeNumber(args.slow, "slow");
    if (args.limit !== undefined && !args.list) throw usageError("--limit goes with --list");
    // Flags that would do nothing here are refused, not ignored (an --otlp that wrote no spans).
    if (args.list && args.id !== undefined) throw usageError("--list lists every log: give no session id");
    if (args.list && args.follow) throw usageError("--follow redraws one session's trace: not with --list");
    if (args.otlp !== undefined && (args.list || args.follow))
      throw usageError(`--otlp writes one finished trace: not with --${args.list ? "list" : "follow"}`);
    if (slowMs !== undefined && (args.list || ctx.json))
      throw usageError(
        `--slow filters the waterfall: not with ${args.list ? "--list (which lists sessions)" : "--json (which gives every span)"}`,
      );
    const limit = wholeNumber(args.limit, "limit", 1) ?? DEFAULT_LIST_LIMIT;
    if (args.list) return withRollouts(ctx, (r) => listTraces(ctx, r, options, limit));
    return withRollouts(ctx, async (r) => {
      const id = await r.resolve(args.id);
      const source = await r.source(id);
      if (args.follow) return followTrace(ctx, source, options, slowMs);
      const trace = await loadTrace(source, options);
      if (args.otlp) await writeOtlp(ctx, trace, args.otlp);
      if (ctx.json) ctx.out(trace);
      else {
        // A line at a time: a big log's waterfall is hundreds of thousands of lines.
        const write = stdoutPieces();
        writeWaterfall(trace, (line) => write(`${line}\n`), {
          width: stdoutColumns() ?? 100,
          color: ctx.color,
          slowMs,
        });
      }
      return 0;
    });
  },
});
