/** `freecode session unpin <id>`: pinned sessions list first. */
import { pinSession } from "../../../session/lifecycle.ts";
import { command } from "../../_command.ts";
import { ID_ARG, printMeta, withStore } from "./_shared.ts";

export default command({
  meta: { name: "unpin", description: "Unpin a session" },
  args: { ...ID_ARG },
  async run(ctx, args) {
    return printMeta(ctx, await withStore(ctx, (s) => pinSession(s, args.id, false)), "unpinned");
  },
});
