/** `freecode session export <id> [--rollout] [--out FILE]`: the session as one JSON document. */
import { exportSession } from "../../../session/export.ts";
import { writeFileAtomic } from "../../../util/atomic.ts";
import { command } from "../../_command.ts";
import { ID_ARG, withStore } from "./_shared.ts";

export default command({
  meta: {
    name: "export",
    description:
      "Write a session (meta, messages, context cache; --rollout: its events) as one JSON document",
  },
  args: {
    ...ID_ARG,
    rollout: { type: "boolean", description: "Include the rollout log (events, ids and timestamps kept)" },
    out: {
      type: "string",
      description: "Write to this file (atomically, mode 0600) instead of stdout",
      valueHint: "FILE",
    },
  },
  async run(ctx, args) {
    const doc = await withStore(ctx, (s) => exportSession(s, args.id, { rollout: args.rollout === true }));
    const text = `${JSON.stringify(doc)}\n`;
    if (args.out === undefined) {
      ctx.out(text);
      return 0;
    }
    writeFileAtomic(args.out, text, { fsync: ctx.config().fsync !== "never" });
    const summary = {
      id: doc.meta.id,
      file: args.out,
      bytes: Buffer.byteLength(text),
      messages: doc.messages.length,
      events: doc.rollout?.length ?? null,
    };
    if (ctx.json) ctx.out(summary);
    else
      ctx.out(
        `exported ${doc.meta.id} to ${args.out}: ${summary.messages} messages${doc.rollout ? `, ${doc.rollout.length} events` : ""}\n`,
      );
    return 0;
  },
});
