/** `freecode session append <id>`: JSONL messages on stdin, all or nothing. */
import { badInput } from "../../../errors.ts";
import { appendGivenMessages, toStoredMessages } from "../../../session/lifecycle.ts";
import { checkId } from "../../../storage/_validate.ts";
import { command } from "../../_command.ts";
import { ID_ARG, onStdinLine, readStdinJsonl, withStore } from "./_shared.ts";

export default command({
  meta: {
    name: "append",
    description: "Append JSONL messages from stdin (a bad line rejects the whole batch)",
  },
  args: { ...ID_ARG },
  async run(ctx, args) {
    checkId(args.id);
    const inputs = await readStdinJsonl();
    if (inputs.length === 0)
      throw badInput("no messages on stdin (expected JSONL, one message per line)", { file: "<stdin>" });
    let messages: ReturnType<typeof toStoredMessages>;
    try {
      messages = toStoredMessages(inputs);
    } catch (error) {
      onStdinLine(error);
    }
    await withStore(ctx, async (store) => {
      try {
        const chosen = inputs.map((x) => typeof (x as { id?: unknown } | null)?.id === "string");
        await appendGivenMessages(store, args.id, messages, chosen);
      } catch (error) {
        // A batch error names the message as [i]: turn that into its stdin line.
        const e = error as { source?: { field?: string; line?: number; file?: string } };
        const i = /^\[(\d+)\]/.exec(e.source?.field ?? "")?.[1];
        if (e.source && i !== undefined) Object.assign(e.source, { file: "<stdin>", line: Number(i) + 1 });
        throw error;
      }
    });
    if (ctx.json) ctx.out({ id: args.id, appended: messages.length, messageIds: messages.map((m) => m.id) });
    else ctx.out(`appended ${messages.length} message(s) to ${args.id}\n`);
    return 0;
  },
});
