/**
 * A child for the interrupt test: "streams" an assistant message under an InterruptHandler and
 * reports on stdout: READY when streaming, INTERRUPTED after a SIGINT was recorded.
 * argv: <home>
 */

import { InterruptHandler } from "../../src/session/interrupt.ts";
import { createSession } from "../../src/session/lifecycle.ts";
import { markRunning } from "../../src/session/status.ts";
import factory from "../../src/storage/adapters/files.ts";
import type { StoredMessage } from "../../src/storage/records.ts";

const store = factory({ home: process.argv[2]!, fsync: "never" });
await createSession(store, { projectPath: "/p", id: "live" }, [
  { id: "u1", role: "user", parts: [{ type: "text", content: "write a poem" }], timestamp: Date.now() },
]);
await markRunning(store, "live");
let streamed = "";
const partial = (): StoredMessage => ({
  id: "a1",
  role: "assistant",
  parts: [{ type: "text", content: streamed }],
  timestamp: Date.now(),
});
const handler = new InterruptHandler(store, {
  onInterrupted: (_t, error) => process.stdout.write(error ? `ERROR ${String(error)}\n` : "INTERRUPTED\n"),
}).install();
handler.track({ sessionId: "live", messageId: "a1", partial });
const deadline = Date.now() + 15_000;
let said = false;
while (Date.now() < deadline) {
  streamed += "la ";
  if (!said) {
    process.stdout.write("READY\n");
    said = true;
  }
  await Bun.sleep(10);
}
process.exit(0);
