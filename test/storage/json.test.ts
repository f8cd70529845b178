import factory from "../../src/storage/adapters/json.ts";
import { runConcurrencySuite } from "./concurrency.ts";
import { runContractSuite } from "./contract.ts";

runContractSuite("json", (home) => factory({ home, fsync: "never" }), { persistent: true });
runContractSuite("json (fsync always)", (home) => factory({ home, fsync: "always" }), { persistent: true });
runConcurrencySuite("json");
