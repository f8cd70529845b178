/** `freecode session archive <id>`. */
import { archiveSession } from "../../../session/lifecycle.ts";
import { command } from "../../_command.ts";
import { ID_ARG, printMeta, withStore } from "./_shared.ts";

export default command({
  meta: { name: "archive", description: "Archive a session" },
  args: { ...ID_ARG },
  async run(ctx, args) {
    return printMeta(ctx, await withStore(ctx, (s) => archiveSession(s, args.id)), "archived");
  },
});
