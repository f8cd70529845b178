/** `freecode session restore <id>`. */
import { restoreSession } from "../../../session/lifecycle.ts";
import { command } from "../../_command.ts";
import { ID_ARG, printMeta, withStore } from "./_shared.ts";

export default command({
  meta: { name: "restore", description: "Restore a session" },
  args: { ...ID_ARG },
  async run(ctx, args) {
    return printMeta(ctx, await withStore(ctx, (s) => restoreSession(s, args.id)), "restored");
  },
});
