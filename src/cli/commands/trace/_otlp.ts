/** `trace --otlp FILE`: write the OTLP/JSON document (one line: valid as JSON and as OTLP JSON Lines). */
import { resolve } from "node:path";
import type { Trace } from "../../../rollout/folds/trace-types.ts";
import { writeOtlpJson } from "../../../rollout/otlp.ts";
import { writeFileAtomicWith } from "../../../util/atomic.ts";
import { guardedWriter } from "../../../util/memory-guard.ts";
import { VERSION } from "../../../version.ts";
import type { CommandContext } from "../../_command.ts";

export async function writeOtlp(ctx: CommandContext, trace: Trace, file: string): Promise<void> {
  const path = resolve(file);
  let count = 0;
  // A span at a time into the temp file, its garbage collected young: a big log's export is
  // hundreds of MB (see `writeOtlpJson`).
  writeFileAtomicWith(path, (write) => {
    count = writeOtlpJson(trace, guardedWriter(write), { version: VERSION });
    write("\n");
  });
  ctx.log.info(`wrote ${count} OTLP spans to ${path}`);
}
