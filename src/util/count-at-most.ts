/**
 * How many of `items`, in increasing order of `key`, have a key at or before `at` — a binary
 * search: the index of the first item past `at`.
 */
export function countAtMost<T>(items: readonly T[], at: number, key: (item: T) => number): number {
  let lo = 0;
  let hi = items.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (key(items[mid]!) <= at) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
