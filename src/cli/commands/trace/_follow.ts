/**
 * `trace --follow`: fold the log incrementally and redraw every second, ageing open requests against
 * the clock (so a request that stops answering turns `hung` on screen). Reads only what was appended
 * since the last poll (by byte offset for files, by seq through an adapter). A partial last line is a
 * write in progress, not damage: it is left for the next poll. With `--json`, one Trace per line.
 * On a terminal the screen is redrawn every second (open requests age on it); into a pipe or file
 * a waterfall (or Trace) is written only when the trace changed: new events, or a request turning
 * hung. The `following…` notice is talk, so it goes to stderr.
 */
import { createTraceFold, type TraceOptions } from "../../../rollout/folds/trace.ts";
import type { Trace } from "../../../rollout/folds/trace-types.ts";
import { foldRollout, type ReadOptions, type RolloutSource, sessionIdOf } from "../../../rollout/load.ts";
import { renderWaterfall } from "../../../rollout/waterfall.ts";
import type { CommandContext } from "../../_command.ts";
import { flushStdout, stdoutColumns, stdoutIsTerminal, writeStdout } from "../../_stdout.ts";

const CLEAR = "\x1b[H\x1b[2J";
const NOTICE = "following… (Ctrl+C to stop)";

/** What makes a new snapshot worth writing when it does not replace the last one on screen. */
const changeKey = (t: Trace) =>
  [
    t.eventCount,
    t.parseErrors.length,
    t.inFlight,
    t.stalls,
    t.modelSpans.reduce((n, m) => n + (m.status === "hung" ? 1 : 0), 0),
  ].join(" ");

export async function followTrace(
  ctx: CommandContext,
  source: RolloutSource,
  options: TraceOptions,
  slowMs: number | undefined,
  intervalMs = 1000,
): Promise<number> {
  const fold = createTraceFold(sessionIdOf(source), options);
  const sink = {
    push: fold.push,
    file: fold.file,
    skip: fold.skip,
    issue: (i: Parameters<typeof fold.issue>[0]) => void (i.torn || fold.issue(i)),
  };
  let position: ReadOptions = {};
  let lastSeq = 0;
  let stopped = false;
  const stop = () => void (stopped = true);
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  const terminal = stdoutIsTerminal();
  let lastKey: string | undefined;
  // On a terminal's redrawn screen the notice is repeated under each waterfall.
  const noticeEachTime = terminal && !ctx.json;
  if (!noticeEachTime) ctx.log.info(NOTICE);
  try {
    while (!stopped) {
      const at = await foldRollout(source, sink, position);
      lastSeq = Math.max(lastSeq, at.lastSeq);
      position =
        "file" in source ? { fromOffset: at.offset, firstLineNo: at.nextLineNo } : { fromSeq: lastSeq + 1 };
      const trace = fold.finish(Date.now());
      const key = changeKey(trace);
      if (terminal || key !== lastKey) {
        lastKey = key;
        if (ctx.json) writeStdout(`${JSON.stringify(trace)}\n`);
        else {
          const width = stdoutColumns() ?? 100;
          const body = renderWaterfall(trace, { width, color: ctx.color, slowMs });
          writeStdout(`${terminal ? CLEAR : ""}${body}`);
        }
        await flushStdout();
        if (noticeEachTime) ctx.log.info(NOTICE);
      }
      await Bun.sleep(intervalMs);
    }
  } finally {
    process.off("SIGINT", stop);
    process.off("SIGTERM", stop);
  }
  return 0;
}
