/**
 * A writer for the crash test: appends messages (and events) to one session forever, printing each
 * id once its append has returned ("acknowledged"). argv: <home> <store> <prefix>
 */
import { openStore } from "../../src/storage/select.ts";

const [home, store, prefix] = process.argv.slice(2) as [string, string, string];
const { adapter } = await openStore(store, { home, fsync: "batch" });
for (let i = 0; ; i++) {
  const id = `${prefix}-${i}`;
  await adapter.appendMessages("crash", [
    {
      id,
      role: i % 2 ? "assistant" : "user",
      parts: [{ type: "text", content: `${id} ${"payload ".repeat(200)}` }],
      timestamp: Date.now(),
    },
  ]);
  await adapter.appendEvents("crash", [{ type: "turn.started", turnId: id }]);
  process.stdout.write(`${id}\n`);
  if (i % 20 === 0) await new Promise((r) => setImmediate(r));
}
