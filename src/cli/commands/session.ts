/** Placeholder until `freecode session` lands. */
import { FreecodeError } from "../../errors.ts";
import { command } from "../_command.ts";

export default command({
  meta: { name: "session", description: "(not available yet)", hidden: true },
  run() {
    throw new FreecodeError("internal", "freecode session is not built yet");
  },
});
