import factory from "../../src/storage/adapters/sqlite.ts";
import { runConcurrencySuite } from "./concurrency.ts";
import { runContractSuite } from "./contract.ts";

runContractSuite("sqlite", (home) => factory({ home, fsync: "never" }), { persistent: true });
runContractSuite("sqlite (fsync always)", (home) => factory({ home, fsync: "always" }), { persistent: true });
runConcurrencySuite("sqlite");
