/**
 * A child process for the concurrency suites: opens the store by name (no adapter internals) and
 * appends `count` messages or events, one call each, then prints what it appended as JSON.
 * argv: <store> <home> <messages|events> <sessionId> <count> <worker>
 */
import { openStore } from "../../src/storage/select.ts";

const [store, home, kind, sessionId, countText, worker] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
  string,
  string,
];
const count = Number(countText);
const { adapter } = await openStore(store, { home, fsync: "never" });
const seqs: number[] = [];
for (let i = 0; i < count; i++) {
  if (kind === "messages") {
    await adapter.appendMessages(sessionId, [
      {
        id: `w${worker}-${i}`,
        role: "user",
        parts: [{ type: "text", content: `${worker}:${i} ${"x".repeat(i % 300)}` }],
        timestamp: Date.now(),
      },
    ]);
  } else {
    const [r] = await adapter.appendEvents(sessionId, [{ type: "turn.started", turnId: `w${worker}-${i}` }]);
    seqs.push(r!.seq);
  }
  // Yield to the event loop now and then, as a real agent would between model calls.
  if (i % 100 === 99) await new Promise((r) => setImmediate(r));
}
await adapter.close();
process.stdout.write(JSON.stringify({ worker, seqs }));
