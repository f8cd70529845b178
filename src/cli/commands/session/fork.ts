/** `freecode session fork <id> [--at <messageId>]`: a full copy, or a copy up to a message. */
import { forkSession } from "../../../session/lifecycle.ts";
import { command } from "../../_command.ts";
import { ID_ARG, printMeta, withStore } from "./_shared.ts";

export default command({
  meta: { name: "fork", description: "Fork a session (a full copy with parentId), or --at a message" },
  args: {
    ...ID_ARG,
    at: { type: "string", description: "Copy messages up to and including this message id" },
    title: { type: "string", description: "Title of the fork (default: '<title> (fork)')" },
  },
  async run(ctx, args) {
    const meta = await withStore(ctx, (s) =>
      forkSession(s, args.id, {
        ...(args.at ? { at: args.at } : {}),
        ...(args.title ? { title: args.title } : {}),
      }),
    );
    return printMeta(ctx, meta, "forked");
  },
});
