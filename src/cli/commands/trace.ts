/** Placeholder until `freecode trace` lands. */
import { FreecodeError } from "../../errors.ts";
import { command } from "../_command.ts";

export default command({
  meta: { name: "trace", description: "(not available yet)", hidden: true },
  run() {
    throw new FreecodeError("internal", "freecode trace is not built yet");
  },
});
