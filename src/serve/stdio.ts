/**
 * JSON-RPC over a byte stream, one message per line: `freecode serve --stdio`. Each line (a request
 * or a batch) is answered with one line, in order; a notification gets nothing. No token: whoever
 * started the process owns it. A line longer than the limit is answered with an error and skipped
 * without being held in memory; so is one that is not UTF-8.
 */
import { decodeUtf8 } from "../util/utf8.ts";
import type { RpcDispatcher } from "./rpc.ts";

const NEWLINE = 10;

const errorLine = (code: number, message: string) =>
  JSON.stringify({ jsonrpc: "2.0", id: null, error: { code, message } });

/**
 * Answer every line of `input` through `dispatch`, writing each answer (without its newline) with
 * `write`; resolves at the end of the input, once every answer is written.
 */
export async function serveLines(
  input: AsyncIterable<Uint8Array>,
  dispatch: RpcDispatcher,
  write: (line: string) => void | Promise<void>,
  options: { maxBytes: number },
): Promise<void> {
  let parts: Uint8Array[] = [];
  let size = 0;
  /** The current line passed the limit: drop bytes until its end. */
  let skipping = false;

  const finish = async (): Promise<void> => {
    if (skipping) {
      skipping = false;
      await write(
        errorLine(-32600, `invalid request: the line is over the limit of ${options.maxBytes} bytes`),
      );
      return;
    }
    const bytes = parts.length === 1 ? parts[0]! : Buffer.concat(parts, size);
    parts = [];
    size = 0;
    const text = decodeUtf8(bytes);
    if (text === undefined) return write(errorLine(-32700, "parse error: the line is not valid UTF-8"));
    if (!text.trim()) return;
    const answer = await dispatch(text);
    if (answer !== undefined) await write(answer);
  };

  const take = (chunk: Uint8Array) => {
    if (skipping) return;
    if (size + chunk.byteLength > options.maxBytes) {
      skipping = true;
      parts = [];
      size = 0;
      return;
    }
    parts.push(chunk);
    size += chunk.byteLength;
  };

  for await (const chunk of input) {
    let from = 0;
    for (let nl = chunk.indexOf(NEWLINE); nl !== -1; nl = chunk.indexOf(NEWLINE, from)) {
      take(chunk.subarray(from, nl));
      await finish();
      from = nl + 1;
    }
    // Copied: the stream may reuse its chunk's memory for the next read.
    if (from < chunk.byteLength) take(chunk.slice(from));
  }
  if (size > 0 || skipping) await finish();
}
