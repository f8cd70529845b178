/**
 * An adapter that refuses every call once closed, as the contract says ("unusable afterwards") and
 * the database adapters always did. The files store went on reading and writing after `close()`
 * and the memory store emptied itself and took new writes: a recorder flushing at exit into a
 * closed store lost nothing on one adapter and everything on another.
 */
import { FreecodeError } from "../errors.ts";
import type { StorageAdapter } from "./contract.ts";

export function refusingWhenClosed(adapter: StorageAdapter): StorageAdapter {
  let closed = false;
  const refusal = () =>
    new FreecodeError("internal", `the ${adapter.name} store ${adapter.location} is closed`);
  const guarded: Record<string, unknown> = { ...adapter };
  for (const [key, value] of Object.entries(adapter)) {
    if (typeof value !== "function" || key === "close") continue;
    const method = value as (...args: unknown[]) => unknown;
    guarded[key] =
      key === "readEvents"
        ? (...args: unknown[]) => {
            if (!closed) return method.apply(adapter, args);
            // An iterable whose first step is the refusal, as a closed database adapter's is.
            return {
              [Symbol.asyncIterator]: () => ({ next: () => Promise.reject(refusal()) }),
            };
          }
        : (...args: unknown[]) => (closed ? Promise.reject(refusal()) : method.apply(adapter, args));
  }
  guarded.close = async () => {
    if (closed) return;
    closed = true;
    await adapter.close();
  };
  return guarded as unknown as StorageAdapter;
}
