/**
 * `freecode rollout append <sessionId>`: events as JSONL on stdin, so agents written in any language
 * can record. Every line is checked against the catalogue first; one bad line rejects the whole
 * input (exit 2, naming the line and field) and nothing is written. `seq` is the store's to assign;
 * `id` and `timestamp` are filled in when missing.
 */
import { badInput } from "../../../errors.ts";
import { eventDrafts } from "../../../rollout/event-drafts.ts";
import { MAX_EVENT_BYTES } from "../../../storage/_events.ts";
import { command } from "../../_command.ts";
import { readStdinJsonl } from "../../_stdin-jsonl.ts";
import { checkId, withRollouts } from "./_source.ts";

export default command({
  meta: {
    name: "append",
    description: "Append events (JSONL on stdin) to a session's rollout log, all or nothing",
  },
  args: { id: { type: "positional", required: true, description: "Session id" } },
  async run(ctx, args) {
    const sessionId = checkId(args.id);
    // The longest line a log takes: a longer one is refused before the rest of it is read.
    const { values, lines } = await readStdinJsonl(MAX_EVENT_BYTES);
    const drafts = eventDrafts(values, sessionId, (i, field) => ({
      file: "<stdin>",
      line: lines[i] ?? 0,
      field,
    }));
    if (drafts.length === 0) throw badInput("no events on stdin", { file: "<stdin>" });
    const stored = await withRollouts(ctx, (r) => r.adapter.appendEvents(sessionId, drafts));
    const result = {
      sessionId,
      appended: stored.length,
      firstSeq: stored[0]!.seq,
      lastSeq: stored.at(-1)!.seq,
    };
    if (ctx.json) ctx.out(result);
    else
      ctx.out(
        `appended ${result.appended} events to ${sessionId} (seq ${result.firstSeq}–${result.lastSeq})\n`,
      );
    return 0;
  },
});
