/**
 * The error for a log with lines that do not read, where copying it on (`session export`, `fork`,
 * `store migrate`) would leave them out silently, or carry a line with bytes that are not UTF-8 on
 * with U+FFFD for good. What to do depends on the line: a torn tail is `store verify --repair`'s
 * to cut; a line that is not UTF-8 is the user's to fix or remove; any other bad line in the middle
 * of a log is not repaired (`store verify` lists them).
 */
import { FreecodeError } from "../errors.ts";
import type { ReadIssue } from "./contract.ts";

export function unreadableLog(id: string, issues: ReadIssue[], what: string): FreecodeError {
  const issue = issues[0]!;
  const next = issue.torn
    ? "run `freecode store verify --repair` first"
    : issue.badUtf8
      ? "fix or remove the line (its bytes are not UTF-8; `freecode store verify` lists every such line)"
      : "`freecode store verify` lists them (a bad line in the middle of a log is not repaired)";
  return new FreecodeError(
    "check_failed",
    `session ${id} has ${issues.length} unreadable ${what} line(s): ${issue.message}; ${next}`,
    { source: { file: issue.file, line: issue.line } },
  );
}
