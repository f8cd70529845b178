/** Placeholder until `freecode eval` lands. */
import { FreecodeError } from "../../errors.ts";
import { command } from "../_command.ts";

export default command({
  meta: { name: "eval", description: "(not available yet)", hidden: true },
  run() {
    throw new FreecodeError("internal", "freecode eval is not built yet");
  },
});
