/**
 * Reading `messages.jsonl` tolerantly: a torn last line (a crash mid-append) is skipped and
 * reported as torn; any other bad line is reported with its file and line number and the rest
 * loads. A line with bytes that are not UTF-8 is reported the same way but still loads, with U+FFFD
 * in their place: dropping it would cut a conversation (a tool call from its result) for a few bad
 * bytes, and the issue keeps `session export` and `store migrate` from copying it on. Read with the block reader, a run of lines at a time (`util/json-lines.ts`). It used to
 * read a log of up to 32 MiB whole and split the text: one character past Latin-1 anywhere made
 * the whole text two-byte, and every line cut from it parsed slower (a 30 MB Claude Code session:
 * 609 ms to split and parse, against 136 ms now; `session show` of it 1.40 → see the README).
 */
import * as v from "valibot";
import { type JsonLineSink, parseRun, RUN_BYTES } from "../../util/json-lines.ts";
import { lineRuns } from "../../util/lines.ts";
import { badUtf8Message } from "../../util/utf8.ts";
import { isValidMessage } from "../_message-check.ts";
import { acknowledgedSize } from "../batch-mark.ts";
import type { MessagesRead, ReadIssue } from "../contract.ts";
import { MessageSchema, type StoredMessage } from "../records.ts";

/** Parse and validate one stored line; undefined when it is not a valid message. */
export function tryParseMessage(text: string): StoredMessage | undefined {
  try {
    const raw: unknown = JSON.parse(text);
    return isValidMessage(raw) ? (raw as StoredMessage) : undefined;
  } catch {
    return undefined;
  }
}

/** A parsed line as a message, or undefined with an issue saying what is wrong with it. */
function checked(raw: unknown, file: string, lineNo: number, issues: ReadIssue[]): StoredMessage | undefined {
  if (isValidMessage(raw)) return raw as StoredMessage;
  const r = v.safeParse(MessageSchema, raw);
  if (r.success) return r.output;
  const path = v.getDotPath(r.issues[0]);
  issues.push({
    file,
    line: lineNo,
    message: `${path ? `${path}: ` : ""}${r.issues[0].message}`,
    torn: false,
  });
  return undefined;
}

/** Read a message log; a missing file is an empty log. */
export async function readMessagesFile(file: string): Promise<MessagesRead> {
  return readMessagesFileSync(file);
}

/** `readMessagesFile`, synchronously: for a reader holding the session's lease (`store verify`). */
export function readMessagesFileSync(file: string): MessagesRead {
  const messages: StoredMessage[] = [];
  const issues: ReadIssue[] = [];
  // A large append under way, or cut off by a kill, is not read: it was never acknowledged.
  const toOffset = acknowledgedSize(file);
  if (toOffset === undefined) return { messages, issues };
  const sink: JsonLineSink = {
    value(raw, lineNo) {
      const m = checked(raw, file, lineNo, issues);
      if (m) messages.push(m);
    },
    invalid(error, _text, lineNo) {
      issues.push({ file, line: lineNo, message: `not JSON: ${error.message}`, torn: false });
    },
    badUtf8(at, lineNo) {
      issues.push({ file, line: lineNo, message: badUtf8Message(at), torn: false, badUtf8: true });
    },
  };
  for (const item of lineRuns(file, { runBytes: RUN_BYTES, toOffset })) {
    if (item.kind === "run") parseRun(item, sink);
    else
      issues.push({
        file,
        line: item.line.lineNo,
        message: "torn last line (no newline): skipped",
        torn: true,
      });
  }
  return { messages, issues };
}

/**
 * The ids of the messages in bytes `[from, to)` of a log, whole lines only (a line that does not
 * read holds none a caller could give): what an append of given ids checks against, read from where
 * the last such check stopped (`FilesSession`), not the whole log each time.
 */
export function messageIdsIn(file: string, from: number, to: number): string[] {
  const ids: string[] = [];
  const sink: JsonLineSink = {
    value(raw) {
      const id = (raw as { id?: unknown } | null)?.id;
      if (typeof id === "string") ids.push(id);
    },
    invalid() {},
  };
  for (const item of lineRuns(file, { runBytes: RUN_BYTES, fromOffset: from, toOffset: to }))
    if (item.kind === "run") parseRun(item, sink);
  return ids;
}
