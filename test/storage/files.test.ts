import factory from "../../src/storage/adapters/files.ts";
import { runConcurrencySuite } from "./concurrency.ts";
import { runContractSuite } from "./contract.ts";

runContractSuite("files", (home) => factory({ home, fsync: "never" }), { persistent: true });
runContractSuite(
  "files (fsync always, JSON index)",
  (home) => {
    process.env.FREECODE_FILES_INDEX = "json";
    try {
      return factory({ home, fsync: "always" });
    } finally {
      delete process.env.FREECODE_FILES_INDEX;
    }
  },
  { persistent: true },
);
runConcurrencySuite("files");
