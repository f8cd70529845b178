/**
 * The raw baselines the throughput benches compare against: a plain line split + `JSON.parse` of
 * a file, nothing else. Two ways, both measured:
 * - `rawBlocks`: the project's line reader (`util/lines.ts`: blocks read into a kept buffer,
 *   `Buffer.indexOf`, a decode per line). The fastest we know on these machines: the headline.
 * - `rawStream`: `Bun.file().stream()` bytes, `indexOf(10)`, a `TextDecoder` per line, the way
 *   bun-engineering.md §8 measured fastest on its machine (and the issues name). On these VMs its
 *   fresh 512 KiB chunks fault new pages on every read: 1.3-3× slower than `rawBlocks`.
 * - `rawRuns`: not a line-by-line parse: short runs of lines each parsed in one call, the way the
 *   folds and importers read (`util/json-lines.ts`). Faster than `rawBlocks` where lines are
 *   short; reported beside the targets, which are set against a line split + `JSON.parse`.
 */
import { type JsonLineSink, parseRun, RUN_BYTES } from "../src/util/json-lines.ts";
import { lineRuns, lines } from "../src/util/lines.ts";

/** Split + parse with the project's block reader; returns the number of values. */
export function rawBlocks(path: string): number {
  let n = 0;
  for (const line of lines(path)) if (JSON.parse(line.text) !== undefined) n++;
  return n;
}

/** Split + parse the §8 way: stream bytes, split on `\n`, decode each line, `JSON.parse` it. */
export async function rawStream(path: string): Promise<number> {
  const decoder = new TextDecoder();
  let n = 0;
  let carry: Uint8Array | null = null;
  for await (const chunk of Bun.file(path).stream()) {
    let s = 0;
    for (let nl = chunk.indexOf(10); nl !== -1; nl = chunk.indexOf(10, s)) {
      let bytes: Uint8Array = chunk.subarray(s, nl);
      if (carry) {
        const joined = new Uint8Array(carry.length + bytes.length);
        joined.set(carry);
        joined.set(bytes, carry.length);
        bytes = joined;
        carry = null;
      }
      s = nl + 1;
      if (bytes.length && JSON.parse(decoder.decode(bytes)) !== undefined) n++;
    }
    if (s < chunk.length) carry = chunk.slice(s);
  }
  return n;
}

/** Split + parse a run of lines at a time (see above); returns the number of values. */
export function rawRuns(path: string): number {
  let n = 0;
  const sink: JsonLineSink = {
    value: () => n++,
    invalid: () => {},
  };
  for (const item of lineRuns(path, { runBytes: RUN_BYTES })) if (item.kind === "run") parseRun(item, sink);
  return n;
}
