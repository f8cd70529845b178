/**
 * The CLI's logger: consola writing everything to stderr, so stdout carries only data.
 * Plain (non-fancy) output when stderr is not a terminal or colour is off.
 */
import { createConsola } from "consola";

export const colorEnabled = (stream: { isTTY?: boolean }) =>
  Boolean(stream.isTTY) && !process.env.NO_COLOR && process.env.TERM !== "dumb";

export const log = createConsola({
  stdout: process.stderr,
  stderr: process.stderr,
  // `fancy` exists at run time but is missing from consola's option types.
  ...({ fancy: colorEnabled(process.stderr) } as object),
  formatOptions: { colors: colorEnabled(process.stderr), date: false },
});
