/** How many bytes a value's JSON line takes, bounded cheaply before it is stringified to be sure. */
import { nestsAtMost } from "./json-depth.ts";

/**
 * An upper bound of the UTF-8 bytes of `JSON.stringify(x)`, or Infinity once past `budget` (or for
 * what is costly to bound: deep nesting, `toJSON`). It spares the append path a second stringify
 * of every message; only a message that might be too large is stringified to be measured.
 */
export function jsonBytesAtMost(x: unknown, budget: number, depth = 0): number {
  switch (typeof x) {
    case "string":
      return x.length * 6 + 2; // a UTF-16 unit is at most 6 bytes of JSON (`\u001f`)
    case "number":
      return 24; // -2.2250738585072014e-308
    case "object": {
      if (x === null) return 4;
      if (depth > 32 || typeof (x as { toJSON?: unknown }).toJSON === "function") return Infinity;
      let n = 2;
      if (Array.isArray(x)) {
        for (const item of x)
          if ((n += 1 + jsonBytesAtMost(item, budget - n, depth + 1)) > budget) return Infinity;
      } else {
        // `for…in` with an own-key test, not `Object.entries`: no array of pairs per object (this
        // runs for every message appended; it cost more than the message's stringify).
        const o = x as Record<string, unknown>;
        for (const k in o) {
          if (!Object.hasOwn(o, k)) continue;
          n += k.length * 6 + 4 + jsonBytesAtMost(o[k], budget - n, depth + 1);
          if (n > budget) return Infinity;
        }
      }
      return n;
    }
    case "bigint":
      return Infinity;
    default:
      return 5; // true, false; undefined and functions are left out or `null`
  }
}

/**
 * The UTF-8 bytes of `JSON.stringify(x)` when they are over `max` (`"too deep"` when it nests past
 * what a reader parses), else undefined. Only a value the bound cannot clear is stringified.
 */
export function jsonBytesOver(x: unknown, max: number): number | "too deep" | undefined {
  if (jsonBytesAtMost(x, max) <= max) return undefined;
  if (!nestsAtMost(x)) return "too deep";
  const bytes = Buffer.byteLength(JSON.stringify(x));
  return bytes <= max ? undefined : bytes;
}

/** `8 MiB`, `32.5 MiB`. */
export const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1).replace(/\.0$/, "")} MiB`;
