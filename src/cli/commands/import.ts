/** Placeholder until `freecode import` lands. */
import { FreecodeError } from "../../errors.ts";
import { command } from "../_command.ts";

export default command({
  meta: { name: "import", description: "(not available yet)", hidden: true },
  run() {
    throw new FreecodeError("internal", "freecode import is not built yet");
  },
});
