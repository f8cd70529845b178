/**
 * The freecode command line. Subcommands are a lazy name → import() map, one file per command:
 * a command's module is evaluated only when it runs (`--help` without a command resolves them all,
 * for their descriptions). This is the only place that exits the process.
 */

import { type ArgsDef, defineCommand, renderUsage, runCommand, type SubCommandsDef } from "citty";
import { exitCodeFor, FreecodeError, usageError } from "../errors.ts";
import { resolveHome } from "../home.ts";
import { VERSION } from "../version.ts";
import {
  commandExit,
  flagKinds,
  GLOBAL_ARGS,
  isFlag,
  rejectUnknownFlags,
  repeatableOf,
  splitFlag,
  takesManyOf,
} from "./_command.ts";
import { fsErrorLine } from "./_fs-error.ts";
import { colorAllowed, colorEnabled, log } from "./_log.ts";
import { route, subcommandNames } from "./_route.ts";
import {
  drainBeforeStderr,
  flushStdout,
  STDOUT_CLOSED_EXIT,
  STDOUT_FAILED_EXIT,
  StdoutClosed,
  StdoutFailed,
  stdoutIsTerminal,
  writeStdout,
} from "./_stdout.ts";
import { checkUtf8Input } from "./_utf8-input.ts";

export const COMMANDS = {
  session: () => import("./commands/session.ts").then((m) => m.default),
  rollout: () => import("./commands/rollout.ts").then((m) => m.default),
  trace: () => import("./commands/trace.ts").then((m) => m.default),
  replay: () => import("./commands/replay.ts").then((m) => m.default),
  usage: () => import("./commands/usage.ts").then((m) => m.default),
  eval: () => import("./commands/eval.ts").then((m) => m.default),
  import: () => import("./commands/import.ts").then((m) => m.default),
  search: () => import("./commands/search.ts").then((m) => m.default),
  store: () => import("./commands/store.ts").then((m) => m.default),
  doctor: () => import("./commands/doctor.ts").then((m) => m.default),
  serve: () => import("./commands/serve.ts").then((m) => m.default),
  gc: () => import("./commands/gc.ts").then((m) => m.default),
} satisfies SubCommandsDef;

export const main = defineCommand({
  meta: {
    name: "freecode",
    version: VERSION,
    description: "Session store, rollout log and eval harness for AI coding agents",
  },
  subCommands: COMMANDS,
});

const HELP_FLAGS = new Set(["--help", "-h"]);
const VERSION_FLAGS = new Set(["--version", "-v"]);
const stripAnsi = (s: string) => s.replace(/\x1b\[[0-9;]*m/g, "");

/** Print the usage of the command `argv` names, on standard output or (for a usage error) stderr. */
async function usage(argv: string[], to: "stdout" | "stderr"): Promise<void> {
  const { cmd, names } = await route(main, argv, true);
  // Named by its full path (`freecode eval add`), not only by its parent's name.
  const parent =
    names.length > 1 ? { meta: { name: names.slice(0, -1).join(" "), version: VERSION } } : undefined;
  const text = await renderUsage(cmd, parent);
  if (to === "stderr") {
    drainBeforeStderr();
    process.stderr.write(`${colorEnabled(process.stderr) ? text : stripAnsi(text)}\n`);
  } else writeStdout(`${stdoutIsTerminal() && colorAllowed() ? text : stripAnsi(text)}\n`);
}

/**
 * Run the CLI with `argv` (without the program name); resolves to the exit code once standard
 * output has taken everything the command wrote.
 */
export async function runCli(argv: string[]): Promise<number> {
  const dashdash = argv.indexOf("--");
  const flagsPart = dashdash === -1 ? argv : argv.slice(0, dashdash);
  let code: number;
  let reported: unknown;
  try {
    code = await dispatch(argv, flagsPart);
  } catch (error) {
    reported = error;
    code = await report(error, flagsPart);
  }
  try {
    await flushStdout();
  } catch (error) {
    // A stdout that failed the command fails the flush with the same error: said once (it was twice).
    return error === reported ? code : report(error, flagsPart);
  }
  return code;
}

/**
 * The tokens of `flagsPart` that ask for help or the version: `--help`/`--version` anywhere, `-h`/
 * `-v` not where a value flag's value stands (`--text -v` is a `--text` without its value — a usage
 * error — not a request for the version that did nothing else and exited 0).
 */
async function metaTokens(flagsPart: string[]): Promise<string[]> {
  if (!flagsPart.some((a) => HELP_FLAGS.has(a) || VERSION_FLAGS.has(a))) return [];
  const { cmd } = await route(main, flagsPart, true);
  const own = (typeof cmd.args === "function" ? await cmd.args() : await cmd.args) as ArgsDef | undefined;
  const kinds = flagKinds({ ...own, ...GLOBAL_ARGS });
  return flagsPart.filter((a, i) => {
    if (!HELP_FLAGS.has(a) && !VERSION_FLAGS.has(a)) return false;
    // `--help` and `--version` count anywhere; `-h` and `-v` not where a value goes.
    if (a.startsWith("--")) return true;
    const before = flagsPart[i - 1];
    if (before === undefined || !isFlag(before)) return true;
    const [flag, inline] = splitFlag(before);
    return !(inline === undefined && kinds.get(flag) === "value");
  });
}

/** Run the command `argv` names (or print the version or help); its exit code. */
async function dispatch(argv: string[], flagsPart: string[]): Promise<number> {
  checkUtf8Input(argv, process.env);
  const meta = await metaTokens(flagsPart);
  const help = meta.some((a) => HELP_FLAGS.has(a));
  // On the root and on every command, as --help is.
  const version = !help && meta.some((a) => VERSION_FLAGS.has(a));
  if (help || version) {
    // A misspelt command is said, not answered with another command's help or the version (exit 0).
    const { unknown } = await route(main, flagsPart, true);
    if (unknown) throw usageError(unknown);
    if (help) await usage(flagsPart, "stdout");
    else writeStdout(`${VERSION}\n`);
    return 0;
  }
  // A deliberate internal error, to check that stack traces of the binary name our sources.
  if (process.env.FREECODE_DEBUG_CRASH) throw new Error("deliberate crash (FREECODE_DEBUG_CRASH is set)");
  if (argv.length === 0) {
    await usage(argv, "stderr");
    return 2;
  }
  const { cmd, names, rest } = await route(main, argv);
  if (!cmd.run) {
    const where = names.join(" ");
    throw usageError(
      `missing command: ${where} ${(await subcommandNames(cmd)).join("|")} (see ${where} --help)`,
    );
  }
  // The command alone: citty would read its first positional argument as a subcommand's name.
  await runCommand({ ...cmd, subCommands: undefined }, { rawArgs: rest });
  return commandExit.code;
}

/** The home `argv` names (`--home H`, `--home=H`), else the environment's or the default; none when it cannot be told. */
function homeOf(argv: string[]): string | undefined {
  try {
    const at = argv.findIndex((a) => a === "--home" || a.startsWith("--home="));
    const flag = at < 0 ? undefined : argv[at]!.startsWith("--home=") ? argv[at]!.slice(7) : argv[at + 1];
    return resolveHome(flag);
  } catch {
    return undefined;
  }
}

async function report(error: unknown, argv: string[]): Promise<number> {
  // The reader of our output went away (`| head`): stop quietly, as a process killed by SIGPIPE.
  // So did the reader of a report written through to stdout or a named pipe (`--reporter
  // json:/dev/stdout | head`, `--otlp /dev/stdout`): an EPIPE stack trace was printed, exit 70.
  if (error instanceof StdoutClosed || (error as { code?: unknown } | null)?.code === "EPIPE")
    return STDOUT_CLOSED_EXIT;
  if (error instanceof StdoutFailed) {
    log.error(error.message);
    return STDOUT_FAILED_EXIT;
  }
  if (error instanceof Error && error.name === "CLIError") {
    // citty's own argument errors (a missing argument): bad usage, one line pointing at the help.
    const { cmd, names, rest } = await route(main, argv, true);
    const where = names.join(" ");
    // An unknown option comes first: citty checks the arguments before the command sees its flags,
    // and `search -foo` said a query was missing.
    if (cmd.run) {
      const own = (await (typeof cmd.args === "function" ? cmd.args() : cmd.args)) as ArgsDef | undefined;
      try {
        rejectUnknownFlags(rest, { ...own, ...GLOBAL_ARGS }, repeatableOf(cmd), takesManyOf(cmd));
      } catch (usage) {
        if (!(usage instanceof FreecodeError)) throw usage;
        log.error(usage.oneLine);
        return exitCodeFor(usage);
      }
    }
    const message = colorEnabled(process.stderr) ? error.message : stripAnsi(error.message);
    log.error(`${message} (see ${where} --help)`);
    return 2;
  }
  if (error instanceof FreecodeError) {
    log.error(error.oneLine);
    // "Internal" only because no adapter could start, when what stopped them is the machine (a home
    // that is a file, no permission): an I/O error, not a bug.
    const fs = error.code === "internal" && error.cause !== undefined ? fsErrorLine(error.cause) : undefined;
    return fs ? fs.code : exitCodeFor(error);
  }
  const fs = fsErrorLine(error, homeOf(argv));
  if (fs) {
    log.error(fs.line);
    return fs.code;
  }
  log.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
  return exitCodeFor(error);
}

if (import.meta.main) {
  const code = await runCli(process.argv.slice(2));
  // End by letting the event loop drain rather than process.exit(): in a compiled binary, exit()
  // cuts off stdout still queued for a pipe (seen with a 3 MB report: 64 KiB arrived). The timer
  // is a backstop for a handle someone forgot to close; it does not itself keep the process alive.
  process.exitCode = code;
  setTimeout(() => process.exit(code), 10_000).unref();
}
