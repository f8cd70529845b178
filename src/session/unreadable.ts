/**
 * The error for a log with lines that do not read, where copying it on (`session export`, `fork`)
 * would leave them out silently, or carry a line with bytes that are not UTF-8 on with U+FFFD for
 * good. Only a torn tail is `store verify --repair`'s to cut.
 */
import { FreecodeError } from "../errors.ts";
import type { ReadIssue } from "../storage/contract.ts";

export function unreadableLog(id: string, issue: ReadIssue, count: number, what: string): FreecodeError {
  const next = issue.torn
    ? "run `freecode store verify --repair` first"
    : "`freecode store verify` lists them (a bad line in the middle of a log is not repaired)";
  return new FreecodeError(
    "check_failed",
    `session ${id} has ${count} unreadable ${what} line(s): ${issue.message}; ${next}`,
    { source: { file: issue.file, line: issue.line } },
  );
}
