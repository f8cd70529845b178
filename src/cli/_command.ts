/**
 * `command()`: how every freecode command is defined. It adds the global flags (`--json`, `--home`,
 * `--store`), rejects unknown flags (citty accepts them silently), and hands `run` a context with the
 * resolved home, the config (loaded on first use) and output helpers. `run` returns an exit code
 * (default 0) or throws a FreecodeError; only main.ts turns those into a process exit.
 */
import { type ArgsDef, type CommandDef, defineCommand, type ParsedArgs } from "citty";
import { type Config, loadConfig } from "../config.ts";
import { usageError } from "../errors.ts";
import { resolveHome } from "../home.ts";
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
  config(): Config;
  /** stdout is a terminal and colour is allowed. */
  color: boolean;
  /** Write data to stdout (a string as is, anything else as JSON). */
  out(data: unknown): void;
  log: typeof log;
}

export interface FreecodeCommandDef<A extends ArgsDef> {
  meta: { name: string; description: string; hidden?: boolean };
  args?: A;
  /** Load config.json before `run` so a bad file fails fast with exit 2 (default true; doctor reports it instead). */
  loadConfig?: boolean;
  run(
    ctx: CommandContext,
    args: ParsedArgs<A & GlobalArgs>,
  ): Promise<number | undefined> | number | undefined;
}

/** Define a leaf command with the global flags and unknown-flag rejection. */
export function command<const A extends ArgsDef>(def: FreecodeCommandDef<A>): CommandDef<A & GlobalArgs> {
  const args = { ...(def.args ?? {}), ...GLOBAL_ARGS } as A & GlobalArgs;
  return defineCommand({
    meta: def.meta,
    args,
    async run({ args: parsed, rawArgs }) {
      rejectUnknownFlags(rawArgs, args);
      const ctx = makeContext(
        parsed.json === true,
        parsed.home as string | undefined,
        parsed.store as string | undefined,
      );
      if (def.loadConfig !== false) ctx.config();
      commandExit.code = (await def.run(ctx, parsed as ParsedArgs<A & GlobalArgs>)) ?? 0;
      return commandExit.code;
    },
  });
}

export function makeContext(json: boolean, homeFlag?: string, storeFlag?: string): CommandContext {
  const home = resolveHome(homeFlag);
  let config: Config | undefined;
  return {
    json,
    home,
    config: () => (config ??= loadConfig(home)),
    storeName: () => storeFlag || process.env.FREECODE_STORE || (config ??= loadConfig(home)).store,
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

const camel = (s: string) => s.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());

/** Throw a usage error for any `--flag` / `-f` the command does not declare. */
export function rejectUnknownFlags(rawArgs: string[], defs: ArgsDef): void {
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
  for (let i = 0; i < rawArgs.length; i++) {
    const token = rawArgs[i]!;
    if (token === "--") return;
    if (!token.startsWith("-") || token === "-" || /^-\d/.test(token)) continue;
    const [flag, inlineValue] = token.replace(/^--?/, "").split(/=(.*)/s, 2);
    const kind = known.get(camel(flag!));
    if (!kind) throw usageError(`unknown option ${token.split("=")[0]}`);
    if (kind === "value" && inlineValue === undefined) i++; // the next token is this flag's value
  }
}
