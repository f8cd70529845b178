/**
 * Lock files taken in turns within this process. `withLock` waits for a lock file by blocking the
 * thread (`Atomics.wait`), so a second caller of this process waiting for a file the first one holds
 * would block the very thread the first needs to finish its git calls: it froze until the timeout
 * (parallel tool calls capturing one session). Callers of this process queue per lock path first,
 * and only the head of the queue takes (or waits for) the file, which other processes hold.
 */
import { resolve } from "node:path";
import { withLock } from "../util/lock.ts";

/** Lock files this process holds or waits for, by path: each caller waits for the one before it. */
const turns = new Map<string, Promise<unknown>>();

/** Run `fn` holding the lock file at `path`, after this process's earlier callers for that path. */
export async function withTurnLock<T>(path: string, fn: () => Promise<T>): Promise<T> {
  const key = resolve(path);
  const before = turns.get(key) ?? Promise.resolve();
  const take = () => withLock(key, fn);
  const mine = before.then(take, take);
  const done = mine.then(
    () => undefined,
    () => undefined,
  );
  turns.set(key, done);
  try {
    return await mine;
  } finally {
    if (turns.get(key) === done) turns.delete(key);
  }
}
