/** Placeholder until `freecode store` lands. */
import { FreecodeError } from "../../errors.ts";
import { command } from "../_command.ts";

export default command({
  meta: { name: "store", description: "(not available yet)", hidden: true },
  run() {
    throw new FreecodeError("internal", "freecode store is not built yet");
  },
});
