/**
 * `config.json` under the home: every field optional, unknown fields rejected (a typo should not be
 * silently ignored). A bad file is a one-line `bad_input` error naming the file and the field.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import * as v from "valibot";
import { badInput, FreecodeError, usageError } from "./errors.ts";
import { homePaths } from "./home.ts";
import { parseByteSize } from "./maintenance/size.ts";
import { danglingLinkTarget } from "./util/dangling-link.ts";
import { duplicateJsonKey } from "./util/duplicate-keys.ts";
import { jsonErrorLine } from "./util/json-error-line.ts";
import { firstIssue, unknownField } from "./util/unknown-field.ts";

/** Names of the storage adapters, `auto` picking the best that starts. */
export const STORE_NAMES = ["auto", "files", "memory", "sqlite", "sqljs", "json"] as const;
export type StoreName = (typeof STORE_NAMES)[number];

/** How hard appends push data to the disk (see README "Durability"). */
export const FSYNC_MODES = ["never", "batch", "always"] as const;
export type FsyncMode = (typeof FSYNC_MODES)[number];

/** A number ≥ 0 JSON can hold: `1e999` parses as Infinity, and a price of it costed $NaN. */
const amount = () =>
  v.pipe(v.number(), v.finite("a number JSON can hold (1e999 is read as Infinity)"), v.minValue(0));

/**
 * An object, not an array: valibot's object and record schemas take an array (`[]` has no keys
 * to refuse), and `"prices": []` was a valid config.
 */
const objectOnly = <S extends v.GenericSchema>(schema: S) =>
  v.pipe(
    v.custom<unknown>((x) => !Array.isArray(x), "must be a JSON object, not an array"),
    schema,
  );

const Price = v.strictObject({
  /** USD per million input tokens. */
  input: amount(),
  output: amount(),
  cacheRead: v.optional(amount()),
  cacheWrite: v.optional(amount()),
});

/** What a timer can wait: past it (about 24.8 days) it fires at once, and the call "timed out". */
/** The longest wait a timer takes (`setTimeout` fires at once past it). */
export const MAX_TIMER_MS = 2_147_483_647;

/** An OpenAI-compatible chat completions endpoint, as the summarizer and the titler name one. */
const httpModel = (service: string) => ({
  /** http or https. */
  url: v.pipe(
    v.string(),
    v.url(),
    v.check((u) => /^https?:\/\//i.test(u), `the ${service} url must be http or https`),
  ),
  model: v.string(),
  /** Name of the environment variable holding the API key (the key itself never goes in the file). */
  apiKeyEnv: v.optional(v.pipe(v.string(), v.minLength(1))),
  /** Give up after this many milliseconds (default 120 000 for the summarizer, 30 000 for the titler). */
  timeoutMs: v.optional(
    v.pipe(
      v.number(),
      v.integer(),
      v.minValue(1),
      v.maxValue(MAX_TIMER_MS, `at most ${MAX_TIMER_MS} ms (a timer waits no longer)`),
    ),
  ),
});

const Summarizer = v.variant("type", [
  v.strictObject({ type: v.literal("builtin") }),
  v.strictObject({ type: v.literal("http"), ...httpModel("summarizer") }),
]);

/** `freecode gc`'s policy (see README "Maintenance"); every field optional. */
const Gc = v.strictObject({
  /** `warn` (default): `freecode gc` reports what the policy would remove and exits 0 without
   * removing it; `enforce`: it removes it. `--dry-run` never removes; `--enforce` forces enforce. */
  mode: v.optional(v.picklist(["warn", "enforce"])),
  /** Archived sessions not updated for this many days are removed. */
  archivedMaxAgeDays: v.optional(amount()),
  /** Keep at most this many sessions (archived ones go first; active ones never go). */
  maxSessions: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0))),
  /** The store's disk budget: bytes, or a size such as "2GB" or "500 MiB". */
  maxBytes: v.optional(
    v.union([
      // A whole number a double holds exactly (1e300 passed here, then failed in gc naming no path).
      v.pipe(v.number(), v.safeInteger(), v.minValue(0)),
      v.pipe(
        v.string(),
        v.check((t) => parseByteSize(t) !== undefined, "a size such as 2GB or 500MiB"),
      ),
    ]),
  ),
});

export const ConfigSchema = v.strictObject({
  $schema: v.optional(v.string()),
  store: v.optional(v.picklist(STORE_NAMES)),
  fsync: v.optional(v.picklist(FSYNC_MODES)),
  /** Record rollout events (default true; `FREECODE_ROLLOUT=off` wins). */
  rollout: v.optional(v.boolean()),
  /** An open model request older than this is `hung` (default 300 000 ms). */
  hangMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1))),
  /** A model request with no first token after this is flagged as a stall (default 60 000 ms). */
  stallMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1))),
  /** Prices per model id (or glob), USD per million tokens. */
  prices: v.optional(objectOnly(v.record(v.string(), objectOnly(Price)))),
  /** Tool name → names of the arguments that hold the paths it writes (merged over the defaults). */
  changedFileTools: v.optional(objectOnly(v.record(v.string(), v.array(v.string())))),
  summarizer: v.optional(objectOnly(Summarizer)),
  /** Generated session titles: off unless an OpenAI-compatible endpoint is named (same fields as the
   * http summarizer). */
  titler: v.optional(
    objectOnly(
      v.variant("type", [
        v.strictObject({ type: v.literal("off") }),
        v.strictObject({ type: v.literal("http"), ...httpModel("titler") }),
      ]),
    ),
  ),
  gc: v.optional(objectOnly(Gc)),
  syncEndpoint: v.optional(
    v.pipe(
      v.string(),
      v.url(),
      v.check((u) => /^https?:\/\//i.test(u), "syncEndpoint must be an http:// or https:// URL"),
    ),
  ),
});

export type Config = v.InferOutput<typeof ConfigSchema>;

/** Validate a parsed config object; `file` names the source in errors. */
export function parseConfig(raw: unknown, file = "config.json"): Config {
  // valibot's object schemas take an array (`[]` has no unknown keys): the file must be an object.
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    const got = raw === null ? "null" : Array.isArray(raw) ? "an array" : typeof raw;
    throw badInput(`invalid config: the top level must be a JSON object, not ${got}`, { file });
  }
  const result = v.safeParse(ConfigSchema, raw);
  if (result.success) return result.output;
  // A misspelt key is also a missing one (`outptu` for `output`): the misspelling says more.
  const issue = firstIssue(result.issues);
  const field = v.getDotPath(issue) ?? undefined;
  throw badInput(`invalid config: ${unknownField(ConfigSchema, issue) ?? issue.message}`, { file, field });
}

/** Load `<home>/config.json`; a missing file is an empty config. */
export function loadConfig(home: string): Config {
  const file = homePaths(home).config;
  if (!existsSync(file)) {
    // A link to nowhere is a config that was meant, not none: its settings were dropped unseen.
    const target = danglingLinkTarget(file);
    if (target !== undefined)
      throw badInput(
        `invalid config: it is a link to ${target}, which leads to no file (missing, or a loop of links)`,
        { file },
      );
    return {};
  }
  let text: string;
  try {
    // A FIFO or a device would be read for ever (every command, doctor too, hung on one).
    const st = statSync(file);
    if (!st.isFile() && !st.isDirectory())
      throw badInput("invalid config: it is not a file (a FIFO, a socket or a device)", { file });
    // An editor's byte-order mark is not part of the JSON.
    text = readFileSync(file, "utf8").replace(/^\uFEFF/, "");
  } catch (error) {
    if (error instanceof FreecodeError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    const why =
      code === "EISDIR"
        ? "it is a directory, not a file"
        : code === "EACCES"
          ? "permission denied"
          : (error as Error).message;
    throw badInput(`invalid config: cannot read it: ${why}`, { file }, error);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw badInput(
      `invalid config: not JSON (${(error as Error).message})`,
      { file, line: jsonErrorLine(text) },
      error,
    );
  }
  // JSON.parse keeps a repeated key's last value: the setting written first was dropped unseen.
  const twice = duplicateJsonKey(text);
  if (twice)
    throw badInput(`invalid config: duplicate key "${twice.key}" (the first one would be dropped)`, {
      file,
      line: twice.line,
    });
  return parseConfig(raw, file);
}

/** `name` if it is a store's name, else a usage error saying where it came from (`--store`, …). */
export function checkStoreName(name: string, from: string): StoreName {
  if (!(STORE_NAMES as readonly string[]).includes(name)) {
    const where = from === "--store" ? "" : ` in ${from}`;
    throw usageError(`unknown store "${name}"${where} (expected one of ${STORE_NAMES.join(", ")})`);
  }
  return name as StoreName;
}

/**
 * The store a home uses when no `--store` is given, as the CLI picks it: `FREECODE_STORE`, else
 * config.json's `store`, else undefined (`openStore` then opens the default, `files`). A library
 * caller opening `openStore(configuredStore(home), …)` writes where `freecode trace` reads.
 */
export function configuredStore(
  home: string,
  given: { env?: Record<string, string | undefined>; config?: Config } = {},
): StoreName | undefined {
  const named = (given.env ?? process.env).FREECODE_STORE;
  if (named) return checkStoreName(named, "FREECODE_STORE");
  return (given.config ?? loadConfig(home)).store;
}
