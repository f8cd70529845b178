/**
 * Typed errors. Library code throws these; only `cli/` maps them to exit codes and messages.
 */

/** Every error code the library can raise, and the CLI exit code it maps to. */
export const ERROR_EXIT_CODES = {
  /** A check (eval case, verify) failed: not an error of the tool itself. */
  check_failed: 1,
  /** Bad command-line usage: unknown flag, missing argument. */
  usage: 2,
  /** Bad input data: malformed JSON, wrong schema, bad id, bad config. */
  bad_input: 2,
  /** A session, event log or file that was asked for does not exist. */
  not_found: 3,
  /** The operation conflicts with the current state (e.g. already exists). */
  conflict: 4,
  /** A lock could not be taken in time. */
  locked: 4,
  /** A service freecode was configured to call (an HTTP summarizer) failed or did not answer. */
  unavailable: 69,
  /** A bug or an environment failure we did not expect. */
  internal: 70,
} as const;

export type ErrorCode = keyof typeof ERROR_EXIT_CODES;

/** Where in a file an error was found, so messages can say `file:line field`. */
export interface ErrorSource {
  file?: string;
  line?: number;
  field?: string;
}

/** The one error class of the library: a code, a one-line message, an optional source and cause. */
export class FreecodeError extends Error {
  readonly code: ErrorCode;
  readonly source?: ErrorSource;

  constructor(code: ErrorCode, message: string, options: { source?: ErrorSource; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "FreecodeError";
    this.code = code;
    if (options.source) this.source = options.source;
  }

  /** The message prefixed with `file:line` and the field, as printed by the CLI. */
  get oneLine(): string {
    const s = this.source;
    const where = s?.file ? `${s.file}${s.line ? `:${s.line}` : ""}: ` : "";
    const field = s?.field ? ` (field ${s.field})` : "";
    return `${where}${this.message}${field}`.replace(/\s*\n\s*/g, " | ");
  }
}

/** Shorthand constructors, so call sites read as what went wrong. */
export const badInput = (message: string, source?: ErrorSource, cause?: unknown) =>
  new FreecodeError("bad_input", message, { source, cause });
export const notFound = (message: string, source?: ErrorSource) =>
  new FreecodeError("not_found", message, { source });
export const conflict = (message: string) => new FreecodeError("conflict", message);
export const usageError = (message: string) => new FreecodeError("usage", message);

/** The exit code for any thrown value: ours by code, anything else is internal (70). */
export function exitCodeFor(error: unknown): number {
  return error instanceof FreecodeError ? ERROR_EXIT_CODES[error.code] : ERROR_EXIT_CODES.internal;
}
