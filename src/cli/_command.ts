/**
 * `command()`: how every freecode command is defined. It adds the global flags (`--json`, `--home`,
 * `--store`), rejects unknown flags and flags missing their value (citty accepts the first silently
 * and reads the second as an empty string), and hands `run` a context with the resolved home, the
 * config (loaded on first use) and output helpers. `run` returns an exit code (default 0) or throws a
 * FreecodeError; only main.ts turns those into a process exit.
 */
import { type ArgsDef, type CommandDef, defineCommand, type ParsedArgs } from "citty";
import { type Config, checkStoreName, configuredStore, loadConfig } from "../config.ts";
import { usageError } from "../errors.ts";
import { checkHome, resolveHome } from "../home.ts";
import { writeJson } from "../util/json-write.ts";
import { colorAllowed, log } from "./_log.ts";
import { stdoutIsTerminal, stdoutPieces, writeStdout } from "./_stdout.ts";

/** The exit code the leaf command returned (citty drops nested commands' results). */
export const commandExit = { code: 0 };

export const GLOBAL_ARGS = {
  json: { type: "boolean", description: "Print one JSON document on stdout (logs stay on stderr)" },
  home: {
    type: "string",
    description: "freecode home directory (default $FREECODE_HOME or ~/.freecode)",
    valueHint: "dir",
  },
  store: {
    type: "string",
    description: "Storage adapter: auto|files|memory|sqlite|sqljs|json (default $FREECODE_STORE)",
    valueHint: "name",
  },
} as const satisfies ArgsDef;

type GlobalArgs = typeof GLOBAL_ARGS;

/** What a command's `run` gets besides its parsed arguments. */
export interface CommandContext {
  json: boolean;
  home: string;
  /** `--store`, else `FREECODE_STORE`, else config.json's `store`, else undefined (the default). */
  storeName(): string | undefined;
  /** Which of those named the store (undefined: none did, the default is used). */
  storeSource(): "--store" | "FREECODE_STORE" | "config.json" | undefined;
  config(): Config;
  /** stdout is a terminal and colour is allowed. */
  color: boolean;
  /** Write data to stdout (a string as is, anything else as JSON). */
  out(data: unknown): void;
  log: typeof log;
  /** The command's own arguments as given (for a flag that may repeat: `flagValues`). */
  rawArgs: readonly string[];
}

export interface FreecodeCommandDef<A extends ArgsDef> {
  meta: { name: string; description: string; hidden?: boolean };
  args?: A;
  /** Load config.json before `run` so a bad file fails fast with exit 2 (default true; doctor reports it instead). */
  loadConfig?: boolean;
  /** Value flags that may be given more than once (read with `flagValues`); any other twice is refused. */
  repeatable?: readonly string[];
  /** It takes any number of positional arguments (`args._`): else more than it declares is an error. */
  manyPositionals?: boolean;
  run(
    ctx: CommandContext,
    args: ParsedArgs<A & GlobalArgs>,
  ): Promise<number | undefined> | number | undefined;
}

/** Define a leaf command with the global flags and unknown-flag rejection. */
export function command<const A extends ArgsDef>(def: FreecodeCommandDef<A>): CommandDef<A & GlobalArgs> {
  const args = { ...(def.args ?? {}), ...GLOBAL_ARGS } as A & GlobalArgs;
  const cmd = defineCommand({
    meta: def.meta,
    args,
    async run({ args: parsed, rawArgs }) {
      rejectUnknownFlags(rawArgs, args, def.repeatable, def.manyPositionals);
      if (!def.manyPositionals) rejectExtraPositionals(parsed._ as string[], args);
      if (parsed.store !== undefined) checkStoreName(parsed.store as string, "--store");
      const ctx = makeContext(
        parsed.json === true,
        parsed.home as string | undefined,
        parsed.store as string | undefined,
        rawArgs,
      );
      if (def.loadConfig !== false) ctx.config();
      commandExit.code = (await def.run(ctx, parsed as ParsedArgs<A & GlobalArgs>)) ?? 0;
      return commandExit.code;
    },
  });
  // Kept on the command for the flags check of an argument error citty raises before `run`.
  return Object.assign(cmd, {
    repeatable: def.repeatable ?? [],
    manyPositionals: def.manyPositionals === true,
  });
}

/** The value flags `cmd` takes more than once (see `FreecodeCommandDef.repeatable`). */
export const repeatableOf = (cmd: object): readonly string[] =>
  (cmd as { repeatable?: readonly string[] }).repeatable ?? [];

/** Whether `cmd` takes any number of arguments (see `FreecodeCommandDef.manyPositionals`). */
export const takesManyOf = (cmd: object): boolean =>
  (cmd as { manyPositionals?: boolean }).manyPositionals === true;

export function makeContext(
  json: boolean,
  homeFlag?: string,
  storeFlag?: string,
  rawArgs: readonly string[] = [],
): CommandContext {
  const home = resolveHome(homeFlag);
  checkHome(home, homeFlag ? "--home" : process.env.FREECODE_HOME ? "FREECODE_HOME" : "the home");
  let config: Config | undefined;
  return {
    json,
    rawArgs,
    home,
    config: () => (config ??= loadConfig(home)),
    storeName() {
      if (storeFlag) return checkStoreName(storeFlag, "--store");
      return configuredStore(home, { config: (config ??= loadConfig(home)) });
    },
    storeSource() {
      if (storeFlag) return "--store";
      if (process.env.FREECODE_STORE) return "FREECODE_STORE";
      return (config ??= loadConfig(home)).store !== undefined ? "config.json" : undefined;
    },
    color: stdoutIsTerminal() && colorAllowed(),
    out(data) {
      if (typeof data === "string") {
        writeStdout(data);
        return;
      }
      // In pieces: a Trace of a large log would otherwise be one string of hundreds of MB.
      const write = stdoutPieces();
      writeJson(data, write);
      write("\n");
    },
    log,
  };
}

/**
 * A whole-number flag: `undefined` when it was not given, else its value, which must be digits only
 * (`Number()` alone reads "" as 0 and "1e3" as 1000) and at least `min`.
 */
export function wholeNumber(raw: string | undefined, flag: string, min = 0): number | undefined {
  if (raw === undefined) return undefined;
  const n = /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < min)
    throw usageError(`--${flag} must be a whole number ≥ ${min} (got "${raw}")`);
  return n;
}

const camel = (s: string) => s.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
const kebab = (s: string) => s.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
const uncap = (s: string) => s.charAt(0).toLowerCase() + s.slice(1);

/** Each declared flag (by camel-cased name and alias, `no-` forms of booleans included) and its kind. */
export function flagKinds(defs: ArgsDef): Map<string, "boolean" | "value"> {
  const known = new Map<string, "boolean" | "value">();
  for (const [name, def] of Object.entries(defs)) {
    if (def.type === "positional") continue;
    const kind = def.type === "boolean" ? "boolean" : "value";
    const alias = (def as { alias?: string | string[] }).alias;
    const aliases = alias === undefined ? [] : Array.isArray(alias) ? alias : [alias];
    for (const n of [name, ...aliases]) {
      known.set(camel(n), kind);
      if (kind === "boolean") known.set(camel(`no-${n}`), kind);
    }
  }
  return known;
}

/** `--flag=value` / `-f` as the flag's camel-cased name and its inline value. */
export function splitFlag(token: string): [name: string, inline: string | undefined] {
  const [flag, inline] = token.replace(/^--?/, "").split(/=(.*)/s, 2);
  return [camel(flag!), inline];
}

/** The token is an option (not a value such as `-`, `-5`, or a word). */
export const isFlag = (token: string) => token.startsWith("-") && token !== "-" && !/^-\d/.test(token);

/**
 * The value that follows the value flag `token` at `next`, or a usage error when there is none: the
 * flag ends the line, is `--flag=`, or is followed by another option (`--home --json` would make
 * "--json" the home). A value that starts with `--` is written `--flag=--value`.
 */
export function valueAfter(token: string, inline: string | undefined, next: string | undefined): void {
  const name = token.split("=")[0];
  if (inline === "" || (inline === undefined && (next === undefined || next === "" || next === "--")))
    throw usageError(`${name} needs a value`);
  if (inline === undefined && next !== undefined && (next.startsWith("--") || next === "-h" || next === "-v"))
    throw usageError(
      `${name} needs a value (got the option ${next.split("=")[0]}; write ${name}=VALUE for a value that starts with -)`,
    );
}

/**
 * Throw a usage error for any `--flag` / `-f` the command does not declare, for a value flag without
 * its value, and for a value flag given twice that is not `repeatable` (citty keeps the last value:
 * `--sessions a --sessions b` ran over b alone, without a word).
 */
export function rejectUnknownFlags(
  rawArgs: string[],
  defs: ArgsDef,
  repeatable: readonly string[] = [],
  manyPositionals = false,
): void {
  const known = flagKinds(defs);
  const seen = new Set<string>();
  const switches = new Map<string, boolean>();
  // A one-letter alias is its flag (`-f` is `--follow`).
  const canonical = new Map<string, string>();
  for (const [name, def] of Object.entries(defs)) {
    const alias = (def as { alias?: string | string[] }).alias;
    for (const a of alias === undefined ? [] : Array.isArray(alias) ? alias : [alias])
      canonical.set(camel(a), camel(name));
  }
  for (let i = 0; i < rawArgs.length; i++) {
    const token = rawArgs[i]!;
    if (token === "--") return;
    if (!isFlag(token)) continue;
    const name = token.split("=")[0]!;
    // One dash is a one-letter alias (`-f`): `-home X` was read as letters and dropped, and a
    // `--purge` then went to the default home.
    // A word the command takes as an argument may start with a dash (`search -foo`): say how —
    // unless its arguments are all given (`session show s1 -x`: the hint led to "unexpected argument").
    const room = manyPositionals || wordsGiven(rawArgs, known) < positionalCount(defs);
    const dashHint =
      room && !name.startsWith("--")
        ? ` (an argument that starts with - goes after --: -- ${shellWord(token)})`
        : "";
    if (!name.startsWith("--") && name.length > 2) {
      const long = camel(name.slice(1));
      const hint = known.has(long) ? ` (a long option takes two dashes: -${name})` : dashHint;
      throw usageError(`unknown option ${name}${hint}`);
    }
    const [flag, inlineValue] = splitFlag(token);
    const kind = known.get(flag);
    if (!kind) throw usageError(`unknown option ${name}${dashHint}`);
    if (kind === "boolean") {
      // `--purge=no` was on: a switch is given or not (or `=true`/`=false` in its long form), and
      // not both ways (`-f --no-follow`).
      const alias = !name.startsWith("--");
      if (inlineValue !== undefined && (alias || (inlineValue !== "true" && inlineValue !== "false")))
        throw usageError(`${name} is a switch: it takes no value (got "${inlineValue}")`);
      const named = canonical.get(flag) ?? flag;
      const base = named.startsWith("no") && known.has(uncap(named.slice(2))) ? uncap(named.slice(2)) : named;
      const on = base === named ? inlineValue !== "false" : inlineValue === "false";
      if (switches.get(base) === !on) throw usageError(`--${kebab(base)} is given both on and off`);
      switches.set(base, on);
      continue;
    }
    valueAfter(token, inlineValue, rawArgs[i + 1]);
    if (inlineValue === undefined) i++; // the next token is this flag's value
    if (!repeatable.includes(flag)) {
      if (seen.has(flag)) throw usageError(`${token.split("=")[0]} is given twice (it takes one value)`);
      seen.add(flag);
    }
  }
}

/** How many positional arguments `defs` declares. */
const positionalCount = (defs: ArgsDef) => Object.values(defs).filter((d) => d.type === "positional").length;

/** The words of `rawArgs` that are arguments: not options, nor the values of value options. */
function wordsGiven(rawArgs: readonly string[], known: Map<string, "boolean" | "value">): number {
  let n = 0;
  for (let i = 0; i < rawArgs.length; i++) {
    const token = rawArgs[i]!;
    if (token === "--") return n + rawArgs.length - i - 1;
    if (!isFlag(token)) {
      n++;
      continue;
    }
    const [flag, inline] = splitFlag(token);
    if (known.get(flag) === "value" && inline === undefined) i++;
  }
  return n;
}

/** `word` as one shell word: quoted when it holds anything a shell would split or expand. */
const shellWord = (word: string) =>
  /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;

/**
 * A positional argument past those the command declares is an error, not dropped: `session delete
 * a1 a2` deleted a1 and said nothing of a2.
 */
function rejectExtraPositionals(given: readonly string[], defs: ArgsDef): void {
  const declared = Object.values(defs).filter((d) => d.type === "positional").length;
  if (given.length <= declared) return;
  const extra = given.slice(declared).map((a) => JSON.stringify(String(a)));
  throw usageError(
    `unexpected argument${extra.length > 1 ? "s" : ""} ${extra.join(" ")} (it takes ${declared === 0 ? "none" : declared === 1 ? "one" : declared})`,
  );
}

/**
 * Every value of `--name` in `rawArgs` (`--name v` and `--name=v`), up to `--`: citty keeps only the
 * last value of a repeated flag, and a dropped value would go unnoticed. The command has already
 * refused a value flag without its value, so the token after `--name` is its value.
 */
export function flagValues(rawArgs: readonly string[], name: string): string[] {
  const values: string[] = [];
  for (let i = 0; i < rawArgs.length; i++) {
    const token = rawArgs[i]!;
    if (token === "--") break;
    if (token === `--${name}` && i + 1 < rawArgs.length) values.push(rawArgs[++i]!);
    else if (token.startsWith(`--${name}=`)) values.push(token.slice(name.length + 3));
  }
  return values;
}
