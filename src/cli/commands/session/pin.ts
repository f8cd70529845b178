/** `freecode session pin <id>`: pinned sessions list first. */
import { pinSession } from "../../../session/lifecycle.ts";
import { command } from "../../_command.ts";
import { ID_ARG, printMeta, withStore } from "./_shared.ts";

export default command({
  meta: { name: "pin", description: "Pin a session (listed first)" },
  args: { ...ID_ARG },
  async run(ctx, args) {
    return printMeta(ctx, await withStore(ctx, (s) => pinSession(s, args.id, true)), "pinned");
  },
});
