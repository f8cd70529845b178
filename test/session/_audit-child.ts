/**
 * A child for the compaction crash test: compacts a session on the files store and SIGKILLs itself
 * right after the first call of one store method has returned, i.e. between two of compaction's
 * writes. Prints DONE if it got through without being killed.
 * argv: <home> <sessionId> <keepUserTurns> <method to die after>
 */
import { compactSession } from "../../src/session/compaction.ts";
import factory from "../../src/storage/adapters/files.ts";
import type { StorageAdapter } from "../../src/storage/contract.ts";

const [home, id, keep, dieAfter] = process.argv.slice(2) as [string, string, string, string];
const store = factory({ home, fsync: "never" });
const dying = new Proxy(store, {
  get(target, key, receiver) {
    const value = Reflect.get(target, key, receiver);
    if (key !== dieAfter || typeof value !== "function") return value;
    return async (...args: unknown[]) => {
      const result = await value.apply(target, args);
      process.kill(process.pid, "SIGKILL");
      return result;
    };
  },
}) as StorageAdapter;
await compactSession(dying, id, { keepUserTurns: Number(keep), rollout: true });
process.stdout.write("DONE\n");
