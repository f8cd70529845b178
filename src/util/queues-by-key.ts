/**
 * Queues kept by key, oldest first, a key gone once its queue empties: the folds keep refused calls
 * without an id this way, by tool, for an output that may come after all (trace, replay, search).
 */
export class QueuesByKey<T> {
  private readonly queues = new Map<string, T[]>();

  push(key: string, item: T): void {
    const queue = this.queues.get(key);
    if (queue) queue.push(item);
    else this.queues.set(key, [item]);
  }

  /** The oldest item of `key`, taken; undefined when there is none. */
  shift(key: string): T | undefined {
    const queue = this.queues.get(key);
    const item = queue?.shift();
    if (queue?.length === 0) this.queues.delete(key);
    return item;
  }
}
