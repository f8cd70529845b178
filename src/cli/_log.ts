/**
 * The CLI's logger: consola's core (the full build costs ~15 ms of startup) with a small reporter
 * that writes every level to stderr, so stdout carries only data. `[level]` tags, coloured on a TTY.
 * Values are formatted with `Bun.inspect`: importing `node:util` for `formatWithOptions` cost every
 * command ~15 ms of start-up, logging or not.
 */

import { type ConsolaReporter, createConsola, type LogObject } from "consola/core";
import { escapeText } from "../util/one-line.ts";
import { drainBeforeStderr } from "./_stdout.ts";

/** Colour is not turned off by the environment (`NO_COLOR`, `TERM=dumb`). */
export const colorAllowed = () => !process.env.NO_COLOR && process.env.TERM !== "dumb";

export const colorEnabled = (stream: { isTTY?: boolean }) => Boolean(stream.isTTY) && colorAllowed();

/** A log call's arguments as one line: strings as they are, other values inspected. */
const format = (args: unknown[]) =>
  args.map((a) => (typeof a === "string" ? a : Bun.inspect(a, { colors: false }))).join(" ");

const COLORS: Record<string, string> = {
  error: "31",
  fatal: "31",
  warn: "33",
  success: "32",
  info: "36",
  debug: "90",
};

const stderrReporter: ConsolaReporter = {
  log(entry: LogObject) {
    // Recorded text reaches messages (a bad line quoted by the JSON parser, a file's name): its
    // control characters and bidirectional overrides shown escaped, as every listing shows them (a
    // raw ESC from `rollout append`'s parse error reached the terminal).
    const text = escapeText(format(entry.args));
    const tag = entry.type === "log" ? "" : `[${entry.type}] `;
    const color = colorEnabled(process.stderr) ? COLORS[entry.type] : undefined;
    const line = color && tag ? `\x1b[${color}m${tag}\x1b[0m${text}` : `${tag}${text}`;
    drainBeforeStderr();
    process.stderr.write(`${line}\n`);
  },
};

/** Level from `CONSOLA_LEVEL` when set (0 errors only … 4 debug), else 3 (info). */
const envLevel = Number(process.env.CONSOLA_LEVEL);

export const log = createConsola({
  level: Number.isFinite(envLevel) && process.env.CONSOLA_LEVEL !== undefined ? envLevel : 3,
  reporters: [stderrReporter],
});
