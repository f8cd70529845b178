/** Placeholder until `freecode search` lands. */
import { FreecodeError } from "../../errors.ts";
import { command } from "../_command.ts";

export default command({
  meta: { name: "search", description: "(not available yet)", hidden: true },
  run() {
    throw new FreecodeError("internal", "freecode search is not built yet");
  },
});
