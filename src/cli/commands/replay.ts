/** Placeholder until `freecode replay` lands. */
import { FreecodeError } from "../../errors.ts";
import { command } from "../_command.ts";

export default command({
  meta: { name: "replay", description: "(not available yet)", hidden: true },
  run() {
    throw new FreecodeError("internal", "freecode replay is not built yet");
  },
});
