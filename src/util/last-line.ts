/**
 * Reading a JSONL file's last line without reading the file: backwards, in windows that grow until
 * they hold the whole line (a log's last line may carry a written file's content).
 */
import { closeSync, openSync, readSync } from "node:fs";
import { onPath } from "./fs-path.ts";

/**
 * The last complete, parseable JSON line of `path` (up to `size` bytes) that `pick` accepts, read
 * backwards in growing windows so a long log costs one small read. A torn final line is ignored.
 */
export function lastLineMatching<T>(
  path: string,
  size: number,
  pick: (value: unknown) => T | undefined,
): T | undefined {
  if (size === 0) return undefined;
  const fd = openSync(path, "r");
  try {
    let window = 64 * 1024;
    for (;;) {
      const start = Math.max(0, size - window);
      const buf = Buffer.alloc(size - start);
      onPath(path, () => readSync(fd, buf, 0, buf.length, start));
      let end = buf.lastIndexOf(10);
      while (end > 0) {
        const from = buf.lastIndexOf(10, end - 1);
        if (from === -1 && start > 0) break; // the line may begin before this window
        const text = buf.toString("utf8", from + 1, end);
        try {
          const hit = pick(JSON.parse(text));
          if (hit !== undefined) return hit;
        } catch {
          // Not JSON: keep looking further back.
        }
        end = from;
      }
      if (start === 0) return undefined;
      window *= 4;
    }
  } finally {
    closeSync(fd);
  }
}
