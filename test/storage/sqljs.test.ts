import factory from "../../src/storage/adapters/sqljs.ts";
import { runConcurrencySuite } from "./concurrency.ts";
import { runContractSuite } from "./contract.ts";

runContractSuite("sqljs", (home) => factory({ home, fsync: "never" }), { persistent: true });
runContractSuite("sqljs (fsync always)", (home) => factory({ home, fsync: "always" }), { persistent: true });
runConcurrencySuite("sqljs");
