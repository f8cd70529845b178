/**
 * The fold's options `config.json` sets (`hangMs`, `stallMs`, `changedFileTools`), as `eval` runs
 * cases with them and `eval add` writes its starter case from them: a starter written without them
 * (a `noHung` past a lower `hangMs`, the files a remapped tool changed) failed on its own session.
 */
import type { Config } from "../../../config.ts";
import type { TraceOptions } from "../../../rollout/folds/trace.ts";

export const traceOptionsOf = (config: Config): TraceOptions => ({
  ...(config.hangMs ? { hangMs: config.hangMs } : {}),
  ...(config.stallMs ? { stallMs: config.stallMs } : {}),
  ...(config.changedFileTools ? { changedFileTools: config.changedFileTools } : {}),
});
