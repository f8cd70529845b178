/**
 * Reading an HTTP body (a request's on the server, a response's in the sync client) under a size
 * limit. A `Content-Length` over the limit is refused before a
 * byte is read; a body without one (chunked) or with one that understates it is counted as it
 * streams in and refused as soon as it passes the limit, so a client cannot make the server hold
 * more than the limit (plus one chunk) in memory.
 */

/** The body was over the limit (`declared`: said so by Content-Length, before reading). */
export class BodyTooLarge extends Error {
  constructor(
    readonly limit: number,
    readonly declared: boolean,
  ) {
    super(`the body is over the limit of ${limit} bytes`);
    this.name = "BodyTooLarge";
  }
}

/** The whole body of a request or response, at most `limit` bytes; throws `BodyTooLarge` past that. */
export async function readBody(
  message: { headers: Headers; body: ReadableStream<Uint8Array> | null },
  limit: number,
): Promise<Uint8Array> {
  const declared = message.headers.get("content-length");
  if (declared !== null && /^\d+$/.test(declared) && Number(declared) > limit)
    throw new BodyTooLarge(limit, true);
  if (!message.body) return new Uint8Array(0);
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = message.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => undefined); // the answer is 413 whatever the stream does now
      throw new BodyTooLarge(limit, false);
    }
    chunks.push(value);
  }
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
}
