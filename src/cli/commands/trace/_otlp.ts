/**
 * `trace --otlp FILE|URL`: write the OTLP/JSON document to a file (one line: valid as JSON and as
 * OTLP JSON Lines), or POST it to an OTLP/HTTP collector when given an http(s) URL.
 */
import { resolve } from "node:path";
import { usageError } from "../../../errors.ts";
import type { Trace } from "../../../rollout/folds/trace-types.ts";
import { writeOtlpJson } from "../../../rollout/otlp.ts";
import { otlpHeaders, postOtlp } from "../../../sync/otlp.ts";
import { guardedWriter } from "../../../util/memory-guard.ts";
import { clip, escapeLine } from "../../../util/one-line.ts";
import { writeOutputFile } from "../../../util/output-file.ts";
import { VERSION } from "../../../version.ts";
import type { CommandContext } from "../../_command.ts";

export async function writeOtlp(ctx: CommandContext, trace: Trace, target: string): Promise<void> {
  if (/^https?:\/\//i.test(target)) return sendOtlp(ctx, trace, target);
  // Another scheme is not a file name: refused rather than made into directories (`grpc:/host/…`).
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(target))
    throw usageError(
      `--otlp takes a file or an http(s) OTLP endpoint, not "${target}" (gRPC is not supported)`,
    );
  const path = resolve(target);
  let count = 0;
  // A span at a time into the temp file, its garbage collected young: a big log's export is
  // hundreds of MB (see `writeOtlpJson`).
  writeOutputFile(path, (write) => {
    count = writeOtlpJson(trace, guardedWriter(write), { version: VERSION });
    write("\n");
  });
  ctx.log.info(`wrote ${count} OTLP spans to ${path}`);
}

async function sendOtlp(ctx: CommandContext, trace: Trace, url: string): Promise<void> {
  const headers = otlpHeaders();
  const pieces: string[] = [];
  const count = writeOtlpJson(trace, (text) => pieces.push(text), { version: VERSION });
  const sent = await postOtlp(url, pieces.join(""), { headers });
  if (sent.rejectedSpans > 0)
    ctx.log.warn(
      `${sent.url}: the collector rejected ${sent.rejectedSpans} of ${count} spans${sent.message ? `: ${clip(escapeLine(sent.message), 200)}` : ""}`,
    );
  ctx.log.info(`sent ${count - sent.rejectedSpans} OTLP spans to ${sent.url}`);
}
