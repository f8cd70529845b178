/**
 * `freecode session resume <id>`: what a loop gets to continue a session — provider, model, the
 * loop's messages, and whether the synthetic "Continue from where you left off." was added.
 */
import { resumeResult, resumeSession } from "../../../session/resume.ts";
import { escapeLine } from "../../../util/one-line.ts";
import { command } from "../../_command.ts";
import { ID_ARG, withStore } from "./_shared.ts";

export default command({
  meta: { name: "resume", description: "Load a session to continue it (restores provider and model)" },
  args: { ...ID_ARG },
  async run(ctx, args) {
    const c = await withStore(ctx, (s) => resumeSession(s, args.id));
    for (const i of c.issues) ctx.log.warn(`${i.file ?? ""}:${i.line ?? "?"}: ${i.message}`);
    if (ctx.json) {
      ctx.out(resumeResult(c));
    } else {
      // Stored: the session's own messages, not the synthetic summary and continue ones.
      const stored = c.stored.length - (c.summaryMessage ? 1 : 0) - (c.continueMessage ? 1 : 0);
      // The title, provider and model are recorded text: shown escaped, as every listing shows them.
      const lines = [
        `resume ${c.meta.id}: ${escapeLine(c.meta.title)}`,
        `provider/model: ${escapeLine(`${c.provider ?? "?"}/${c.model ?? "?"}`)}`,
        `messages: ${stored} stored → ${c.messages.length} loop messages`,
      ];
      if (c.summaryMessage)
        lines.push("compacted: the summary of the dropped turns leads the loop's messages");
      if (c.continueMessage)
        lines.push(`last message was interrupted: added "${c.continueMessage.parts[0]?.content}"`);
      ctx.out(`${lines.join("\n")}\n`);
    }
    return 0;
  },
});
