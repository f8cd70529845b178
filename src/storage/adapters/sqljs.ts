/** Placeholder until the sqljs adapter lands: fails clearly instead of pretending to store anything. */

import { FreecodeError } from "../../errors.ts";
import type { AdapterFactory } from "../contract.ts";

const factory: AdapterFactory = () => {
  throw new FreecodeError("internal", "the sqljs storage adapter is not built yet");
};
export default factory;
