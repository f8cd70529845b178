/** `freecode session rename <id> <title>`. */
import { renameSession } from "../../../session/lifecycle.ts";
import { command } from "../../_command.ts";
import { ID_ARG, printMeta, withStore } from "./_shared.ts";

export default command({
  meta: { name: "rename", description: "Set a session's title" },
  args: { ...ID_ARG, title: { type: "positional", required: true, description: "The new title" } },
  async run(ctx, args) {
    return printMeta(ctx, await withStore(ctx, (s) => renameSession(s, args.id, args.title)), "renamed");
  },
});
