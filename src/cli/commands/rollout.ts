/** Placeholder until `freecode rollout` lands. */
import { FreecodeError } from "../../errors.ts";
import { command } from "../_command.ts";

export default command({
  meta: { name: "rollout", description: "(not available yet)", hidden: true },
  run() {
    throw new FreecodeError("internal", "freecode rollout is not built yet");
  },
});
