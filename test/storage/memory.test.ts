import factory from "../../src/storage/adapters/memory.ts";
import { runConcurrencySuite } from "./concurrency.ts";
import { runContractSuite } from "./contract.ts";

runContractSuite("memory", (home) => factory({ home }));
runConcurrencySuite("memory", { skip: "the memory store lives in one process: there is nothing to share" });
