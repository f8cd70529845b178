/** Placeholder until `freecode usage` lands. */
import { FreecodeError } from "../../errors.ts";
import { command } from "../_command.ts";

export default command({
  meta: { name: "usage", description: "(not available yet)", hidden: true },
  run() {
    throw new FreecodeError("internal", "freecode usage is not built yet");
  },
});
