/**
 * Reading `messages.jsonl` tolerantly: a torn last line (a crash mid-append) is skipped and
 * reported as torn; any other bad line is reported with its file and line number and the rest
 * loads. Small logs are read whole and split (faster than streaming); large ones are streamed.
 */
import { statSync } from "node:fs";
import * as v from "valibot";
import { readLines } from "../../util/lines.ts";
import { isValidMessage } from "../_message-check.ts";
import type { MessagesRead, ReadIssue } from "../contract.ts";
import { MessageSchema, type StoredMessage } from "../records.ts";

const WHOLE_FILE_LIMIT = 32 * 1024 * 1024;

/** Parse and validate one stored line; undefined when it is not a valid message. */
export function tryParseMessage(text: string): StoredMessage | undefined {
  try {
    const raw: unknown = JSON.parse(text);
    return isValidMessage(raw) ? (raw as StoredMessage) : undefined;
  } catch {
    return undefined;
  }
}

function parseLine(
  text: string,
  file: string,
  lineNo: number,
  issues: ReadIssue[],
): StoredMessage | undefined {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    issues.push({ file, line: lineNo, message: `not JSON: ${(error as Error).message}`, torn: false });
    return undefined;
  }
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
  const messages: StoredMessage[] = [];
  const issues: ReadIssue[] = [];
  let size: number;
  try {
    size = statSync(file).size;
  } catch {
    return { messages, issues };
  }
  if (size <= WHOLE_FILE_LIMIT) {
    const text = await Bun.file(file).text();
    let start = 0;
    let lineNo = 0;
    while (start < text.length) {
      const nl = text.indexOf("\n", start);
      lineNo++;
      if (nl === -1) {
        issues.push({ file, line: lineNo, message: "torn last line (no newline): skipped", torn: true });
        break;
      }
      if (nl > start) {
        const m = parseLine(text.slice(start, nl), file, lineNo, issues);
        if (m) messages.push(m);
      }
      start = nl + 1;
    }
    return { messages, issues };
  }
  for await (const line of readLines(file)) {
    if (line.torn) {
      issues.push({ file, line: line.lineNo, message: "torn last line (no newline): skipped", torn: true });
      continue;
    }
    const m = parseLine(line.text, file, line.lineNo, issues);
    if (m) messages.push(m);
  }
  return { messages, issues };
}
