/**
 * `import --watch`: follow live transcripts by polling. Each pass is cheap when nothing changed
 * (a stat per file); a grown file is read from where the last pass stopped. Passes are not final:
 * a response still streaming and a tool call still waiting for its result (or for the user's
 * permission) stay in the parser state until their lines arrive, and a torn last line is left for
 * the next pass. Stops when `signal` aborts.
 */
import { type ImportOptions, type ImportReport, importSources } from "./import.ts";
import type { StateCache } from "./state.ts";
import type { Known } from "./write.ts";

export interface WatchOptions extends Omit<ImportOptions, "final" | "cache" | "stateCache"> {
  intervalMs: number;
  signal: AbortSignal;
  /** Called after each pass (with what changed); the next pass waits for it. */
  onPass(report: ImportReport, pass: number): void | Promise<void>;
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((done) => {
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", () => {
      clearTimeout(timer);
      done();
    });
  });

/** Poll until aborted; resolves to the number of passes made. */
export async function watchSources(opts: WatchOptions): Promise<number> {
  const cache = new Map<string, Known>();
  const stateCache: StateCache = {};
  let pass = 0;
  while (!opts.signal.aborted) {
    pass++;
    const report = await importSources({ ...opts, final: false, cache, stateCache });
    await opts.onPass(report, pass);
    await sleep(opts.intervalMs, opts.signal);
  }
  return pass;
}
