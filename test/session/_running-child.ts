/** Marks session "dead" running, says RUNNING, then waits to be killed. argv: <home> */

import { createSession } from "../../src/session/lifecycle.ts";
import { markRunning } from "../../src/session/status.ts";
import factory from "../../src/storage/adapters/files.ts";

const store = factory({ home: process.argv[2]!, fsync: "never" });
await createSession(store, { projectPath: "/p", id: "dead" }, [
  { id: "u", role: "user", parts: [], timestamp: 1 },
]);
await markRunning(store, "dead");
await store.close();
process.stdout.write("RUNNING\n");
await Bun.sleep(60_000);
