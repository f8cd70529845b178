/** `trace --otlp FILE`: write the OTLP/JSON document (one line: valid as JSON and as OTLP JSON Lines). */
import { resolve } from "node:path";
import type { Trace } from "../../../rollout/folds/trace-types.ts";
import { traceToOtlp } from "../../../rollout/otlp.ts";
import { writeFileAtomic } from "../../../util/atomic.ts";
import { VERSION } from "../../../version.ts";
import type { CommandContext } from "../../_command.ts";

export async function writeOtlp(ctx: CommandContext, trace: Trace, file: string): Promise<void> {
  const doc = traceToOtlp(trace, { version: VERSION });
  const path = resolve(file);
  writeFileAtomic(path, `${JSON.stringify(doc)}\n`);
  const count = doc.resourceSpans[0]!.scopeSpans[0]!.spans.length;
  ctx.log.info(`wrote ${count} OTLP spans to ${path}`);
}
