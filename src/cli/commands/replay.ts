/** `freecode replay <id>`: the session's turns with their tool calls, outputs and refusals. */
import { loadReplay } from "../../rollout/load.ts";
import { fmtMs } from "../../rollout/waterfall.ts";
import { escapeLine, oneLine } from "../../util/one-line.ts";
import { plural } from "../../util/plural.ts";
import { command, wholeNumber } from "../_command.ts";
import { stdoutPieces } from "../_stdout.ts";
import { withRollouts } from "./rollout/_source.ts";

export default command({
  meta: {
    name: "replay",
    description: "Replay a session's rollout: turns, tool calls with outputs, compactions",
  },
  args: {
    id: {
      type: "positional",
      required: false,
      description: "Session id or a unique start of one (default: the most recent)",
    },
    "max-output": {
      type: "string",
      description: "Clip each tool output to this many characters",
      valueHint: "n",
    },
  },
  async run(ctx, args) {
    const max = wholeNumber(args["max-output"], "max-output", 1);
    const replay = await withRollouts(ctx, async (r) => {
      const id = await r.resolve(args.id);
      return loadReplay(await r.source(id), max !== undefined ? { maxOutputChars: max } : {});
    });
    if (ctx.json) {
      ctx.out(replay);
      return 0;
    }
    // A line at a time: a big log's replay is hundreds of thousands of lines. Each line is made
    // of recorded text (tool names, reasons, outputs), its control characters shown escaped.
    const write = stdoutPieces();
    const lines = { push: (line: string) => write(`${escapeLine(line)}\n`) };
    lines.push(
      `session ${replay.sessionId}: ${plural(replay.totalTurns, "turn")}, ${plural(replay.totalCalls, "tool call")}, ${replay.totalDenied} denied, ${replay.compactCount} compactions (${replay.compactedTokens} tokens)`,
    );
    for (const turn of replay.turns) {
      const flags = [
        turn.aborted ? `aborted${turn.abortReason ? ` (${turn.abortReason})` : ""}` : "",
        turn.implicit ? "implicit" : "",
      ].filter(Boolean);
      lines.push(
        `── ${turn.turnKey}  ${new Date(turn.startedAt).toISOString()}  ${turn.modelRequests} model request(s)${flags.length ? `  [${flags.join(", ")}]` : ""}`,
      );
      for (const c of turn.calls) {
        // A finished call whose output says nothing of failing has an unknown outcome, not a
        // success (`failed` absent means unknown: it showed ✓).
        const mark = !c.done ? "…" : c.failed === true ? "✗" : c.failed === false ? "✓" : "?";
        const took = c.duration_ms === undefined ? "" : ` ${fmtMs(c.duration_ms)}`;
        lines.push(
          `  ${mark} ${c.tool}(${oneLine(c.args ?? {}, 60)})${took}${c.output === undefined ? "" : ` → ${oneLine(c.output, 80)}`}`,
        );
      }
      for (const d of turn.denied)
        lines.push(`  ⊘ ${d.tool} denied by ${d.source}${d.reason ? `: ${d.reason}` : ""}`);
    }
    for (const e of replay.errors) lines.push(`unreadable line${e.line ? ` ${e.line}` : ""}: ${e.message}`);
    return 0;
  },
});
