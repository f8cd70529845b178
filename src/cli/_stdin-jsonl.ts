/**
 * stdin as JSONL (`session append`, `session create`, `rollout append`): strict UTF-8, blank lines
 * skipped, each line JSON, errors naming `<stdin>:LINE`. A line longer than `maxLineBytes` is refused
 * as soon as it is read past its limit: read whole first, a 300 MB line took 6 s and 1.2 GB before
 * the refusal (a 500 MB one would not fit this machine's memory).
 */
import { badInput } from "../errors.ts";
import { mib } from "../util/json-size.ts";
import { splitLines } from "../util/lines.ts";
import { checkUtf8 } from "../util/utf8.ts";

const NEWLINE = 10;

export async function readStdinJsonl(maxLineBytes: number): Promise<{ values: unknown[]; lines: number[] }> {
  const tooLong = (line: number) =>
    badInput(`line is longer than ${mib(maxLineBytes)}`, { file: "<stdin>", line });
  const chunks: Uint8Array[] = [];
  let lineNo = 1;
  let lineBytes = 0;
  for await (const chunk of Bun.stdin.stream()) {
    let from = 0;
    for (let nl = chunk.indexOf(NEWLINE); nl !== -1; nl = chunk.indexOf(NEWLINE, from)) {
      if (lineBytes + nl - from > maxLineBytes) throw tooLong(lineNo);
      lineNo++;
      lineBytes = 0;
      from = nl + 1;
    }
    lineBytes += chunk.length - from;
    if (lineBytes > maxLineBytes) throw tooLong(lineNo);
    chunks.push(chunk);
  }
  const bytes = Buffer.concat(chunks);
  checkUtf8(bytes, "<stdin>", "stdin is not valid UTF-8");
  const values: unknown[] = [];
  const lines: number[] = [];
  for (const line of splitLines(bytes.toString("utf8"))) {
    if (!line.text.trim()) continue;
    try {
      values.push(JSON.parse(line.text));
    } catch (error) {
      throw badInput(`not JSON: ${(error as Error).message}`, { file: "<stdin>", line: line.lineNo });
    }
    lines.push(line.lineNo);
  }
  return { values, lines };
}
