/** `freecode session unarchive <id>`. */
import { unarchiveSession } from "../../../session/lifecycle.ts";
import { command } from "../../_command.ts";
import { ID_ARG, printMeta, withStore } from "./_shared.ts";

export default command({
  meta: { name: "unarchive", description: "Unarchive a session" },
  args: { ...ID_ARG },
  async run(ctx, args) {
    return printMeta(ctx, await withStore(ctx, (s) => unarchiveSession(s, args.id)), "unarchived");
  },
});
