/**
 * Finding the command `argv` names, by hand rather than with citty's `runCommand` on the root: citty
 * reads the value of a flag placed before the command as the command's name (`freecode --home H
 * session list` was "Unknown command H"), and it cannot have a command that takes both subcommands
 * and positional arguments (`freecode eval <cases…>` and `freecode eval add <id>`). The global flags
 * (`--home`, `--store`, `--json`) may come before the command; they are handed to it with the rest.
 */
import type { ArgsDef, CommandDef, SubCommandsDef } from "citty";
import { usageError } from "../errors.ts";
import { closest } from "../util/unknown-field.ts";
import { flagKinds, GLOBAL_ARGS, isFlag, splitFlag, valueAfter } from "./_command.ts";

export interface Route {
  /** The command named (a leaf, or the group the words stopped at). */
  cmd: CommandDef;
  parent: CommandDef | undefined;
  /** Its words, from `freecode` on: `["freecode", "session", "list"]`. */
  names: string[];
  /** The arguments for `cmd`: everything but the command words, in order. */
  rest: string[];
  /** With `lenient`: a word where a group wanted one of its commands (`sesion`), said by `--help`. */
  unknown?: string;
}

const resolve = async <T>(value: T | (() => T | Promise<T>) | Promise<T>): Promise<T> =>
  typeof value === "function" ? await (value as () => T | Promise<T>)() : await value;

const GLOBAL_NAMES = Object.keys(GLOBAL_ARGS)
  .map((n) => `--${n}`)
  .join(", ");

/**
 * Follow `argv` down from `root`. With `lenient` (for `--help` and error messages) it stops where the
 * words stop making sense instead of throwing a usage error.
 */
export async function route(root: CommandDef, argv: string[], lenient = false): Promise<Route> {
  let cmd = root;
  let parent: CommandDef | undefined;
  const names = [((await resolve(root.meta)) as { name?: string } | undefined)?.name ?? "freecode"];
  const rest: string[] = [];
  const where = () => names.join(" ");
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i]!;
    const subs = (await resolve(cmd.subCommands)) as SubCommandsDef | undefined;
    if (token === "--" || !subs) {
      rest.push(...argv.slice(i));
      break;
    }
    if (isFlag(token)) {
      rest.push(token);
      const [flag, inline] = splitFlag(token);
      const own = (await resolve(cmd.args)) as ArgsDef | undefined;
      const kind = flagKinds({ ...own, ...GLOBAL_ARGS }).get(flag);
      if (kind === undefined) {
        if (lenient || cmd.run || flag === "help" || flag === "h" || flag === "version" || flag === "v")
          continue;
        throw usageError(
          `unknown option ${token.split("=")[0]} before the command (only ${GLOBAL_NAMES} can come before it; see ${where()} --help)`,
        );
      }
      if (kind !== "value") continue;
      if (!lenient) valueAfter(token, inline, argv[i + 1]);
      if (inline === undefined && i + 1 < argv.length) rest.push(argv[++i]!);
      continue;
    }
    const next = subs[token];
    if (next) {
      parent = cmd;
      cmd = (await resolve(next)) as CommandDef;
      names.push(token);
      continue;
    }
    if (cmd.run || lenient) {
      rest.push(...argv.slice(i));
      if (!cmd.run)
        return { cmd, parent, names, rest, unknown: unknownCommand(token, where(), Object.keys(subs)) };
      break;
    }
    throw usageError(unknownCommand(token, where(), Object.keys(subs)));
  }
  return { cmd, parent, names, rest };
}

/** `unknown command "sesion" for freecode (did you mean session?)`. */
function unknownCommand(token: string, where: string, names: string[]): string {
  const hint = closest(token, names);
  return `unknown command "${token}" for ${where} (${hint ? `did you mean ${hint}? ` : ""}see ${where} --help)`;
}

/** The visible subcommand names of `cmd`, for "missing command" errors. */
export async function subcommandNames(cmd: CommandDef): Promise<string[]> {
  const subs = ((await resolve(cmd.subCommands)) ?? {}) as SubCommandsDef;
  const out: string[] = [];
  for (const [name, sub] of Object.entries(subs)) {
    const meta = (await resolve(((await resolve(sub)) as CommandDef).meta)) as
      | { hidden?: boolean }
      | undefined;
    if (!meta?.hidden) out.push(name);
  }
  return out;
}
