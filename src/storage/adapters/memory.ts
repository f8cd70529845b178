/** Placeholder until the memory adapter lands: fails clearly instead of pretending to store anything. */

import { FreecodeError } from "../../errors.ts";
import type { AdapterFactory } from "../contract.ts";

const factory: AdapterFactory = () => {
  throw new FreecodeError("internal", "the memory storage adapter is not built yet");
};
export default factory;
