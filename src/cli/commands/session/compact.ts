/**
 * `freecode session compact <id> [--keep N]`: summarize (with config.json's `summarizer`) and drop
 * all but the last N user turns.
 */
import { homePaths } from "../../../home.ts";
import { rolloutEnabled } from "../../../rollout/recorder.ts";
import { compactSession, DEFAULT_KEEP_USER_TURNS } from "../../../session/compaction.ts";
import { summarizerFromConfig } from "../../../session/summarizer-config.ts";
import { command, wholeNumber } from "../../_command.ts";
import { ID_ARG, withStore } from "./_shared.ts";

export default command({
  meta: {
    name: "compact",
    description: "Summarize old turns and keep the last N user turns (atomic rewrite)",
  },
  args: {
    ...ID_ARG,
    keep: { type: "string", description: `User turns to keep (default ${DEFAULT_KEEP_USER_TURNS})` },
  },
  async run(ctx, args) {
    const keep = wholeNumber(args.keep, "keep", 1) ?? DEFAULT_KEEP_USER_TURNS;
    const rollout = rolloutEnabled(process.env, ctx.config());
    const summarizer = summarizerFromConfig(ctx.config(), process.env, homePaths(ctx.home).config);
    const r = await withStore(ctx, (s) =>
      compactSession(s, args.id, { keepUserTurns: keep, rollout, summarizer }),
    );
    if (ctx.json) ctx.out({ id: args.id, ...r });
    else if (!r.compacted) ctx.out(`not compacted: ${r.reason}\n`);
    else
      ctx.out(
        `compacted ${args.id}: ${r.messagesBefore} → ${r.messagesAfter} messages, ~${r.tokensBefore} → ~${r.tokensAfter} tokens (estimated)\n`,
      );
    return 0;
  },
});
