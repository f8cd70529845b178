/**
 * How deeply a value nests, found without recursion. `JSON.stringify` recurses, and a value nested
 * some thousands deep (an array of arrays from a hostile or broken client) overflows the stack:
 * a `RangeError` where the input should get a one-line error. Checked before anything is stored.
 */

/** Deeper than any real message, event or document gets; far below where stringify overflows. */
export const MAX_JSON_DEPTH = 1000;

/** Whether `value` nests at most `max` arrays/objects deep. */
export function nestsAtMost(value: unknown, max = MAX_JSON_DEPTH): boolean {
  if (typeof value !== "object" || value === null) return true;
  const stack: [object, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (depth > max) return false;
    for (const child of Array.isArray(node) ? node : Object.values(node))
      if (typeof child === "object" && child !== null) stack.push([child, depth + 1]);
  }
  return true;
}
