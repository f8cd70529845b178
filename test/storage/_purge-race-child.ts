/**
 * A child process for the purge race: appends batches of events to one session in a tight loop (no
 * turn of the event loop between them, as a server answering a batch of requests does), then prints
 * when each batch was acknowledged. A file `ready` is written once the first batches are in.
 * argv: <home> <sessionId> <milliseconds to go on> <ready file>
 */
import { writeFileSync } from "node:fs";
import { openStore } from "../../src/storage/select.ts";

const [home, sessionId, msText, ready] = process.argv.slice(2) as [string, string, string, string];
const { adapter } = await openStore("files", { home, fsync: "never" });
const acks: [number, number][] = [];
const started = Date.now();
for (let b = 0; Date.now() - started < Number(msText); b++) {
  const drafts = Array.from({ length: 20 }, (_, j) => ({ type: "turn.started", turnId: `b${b}-${j}` }));
  await adapter.appendEvents(sessionId, drafts);
  acks.push([b, Date.now()]);
  if (b === 20) writeFileSync(ready, "");
  // A turn of the event loop now and then (a server between two requests' batches).
  if (b % 50 === 49) await new Promise((r) => setImmediate(r));
}
await adapter.close();
process.stdout.write(JSON.stringify(acks));
