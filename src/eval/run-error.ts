/**
 * An eval that could not run (a bad case file, a `--sessions` path that is not there): no case was
 * evaluated, so there is no `EvalReport`. The reporters still say so in their own format — a JUnit
 * file or a JSON report left from an earlier run read as that run's passing results, and a
 * GitHub step showed no annotation — from this one shape.
 */
import { type ErrorCode, exitCodeFor, type FreecodeError } from "../errors.ts";

export interface RunError {
  version: 1;
  /** The CLI's exit code for it (2 for bad input). */
  exitCode: number;
  error: {
    code: ErrorCode;
    /** The line printed on stderr: `file:line: message (field …)`. */
    message: string;
    file?: string;
    line?: number;
    field?: string;
  };
}

/** The run error for what stopped the run. */
export function runErrorOf(error: FreecodeError): RunError {
  const s = error.source;
  return {
    version: 1,
    exitCode: exitCodeFor(error),
    error: {
      code: error.code,
      message: error.oneLine,
      ...(s?.file !== undefined ? { file: s.file } : {}),
      ...(s?.line !== undefined ? { line: s.line } : {}),
      ...(s?.field !== undefined ? { field: s.field } : {}),
    },
  };
}
