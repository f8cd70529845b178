/**
 * Choosing the storage adapter: once, lazily, at first use. Each adapter is a literal dynamic
 * `import()` so `bun build --compile` bundles them all and only the chosen one is evaluated.
 * `auto` tries sqlite → sqljs → json and says which it took and why.
 */
import { FreecodeError } from "../errors.ts";
import type { AdapterFactory, AdapterOptions, StorageAdapter } from "./contract.ts";

export const ADAPTER_LOADERS: Record<string, () => Promise<AdapterFactory>> = {
  files: () => import("./adapters/files.ts").then((m) => m.default),
  memory: () => import("./adapters/memory.ts").then((m) => m.default),
  sqlite: () => import("./adapters/sqlite.ts").then((m) => m.default),
  sqljs: () => import("./adapters/sqljs.ts").then((m) => m.default),
  json: () => import("./adapters/json.ts").then((m) => m.default),
};

/** The names `--store` accepts. */
export const ADAPTER_NAMES = ["auto", ...Object.keys(ADAPTER_LOADERS)] as const;
/** What `auto` tries, in order. */
export const AUTO_ORDER = ["sqlite", "sqljs", "json"] as const;
/** The adapter used when nothing is configured. */
export const DEFAULT_ADAPTER = "files";

export interface OpenedStore {
  adapter: StorageAdapter;
  /** Why this adapter: flag/env/config/default, and for `auto` which ones failed. */
  reason: string;
}

/** Open the named adapter (or `auto`); `name` undefined means the default. */
export async function openStore(name: string | undefined, options: AdapterOptions): Promise<OpenedStore> {
  const chosen = name ?? DEFAULT_ADAPTER;
  if (chosen !== "auto") {
    const load = ADAPTER_LOADERS[chosen];
    if (!load) {
      throw new FreecodeError(
        "usage",
        `unknown store "${chosen}" (expected one of ${ADAPTER_NAMES.join(", ")})`,
      );
    }
    const factory = await load();
    return { adapter: factory(options), reason: name ? `requested "${chosen}"` : "default" };
  }
  const failures: string[] = [];
  let firstError: unknown;
  for (const candidate of AUTO_ORDER) {
    try {
      const factory = await ADAPTER_LOADERS[candidate]!();
      const adapter = factory(options);
      await adapter.listSessions({ limit: 1 }); // really start it
      const why = failures.length ? ` (${failures.join("; ")})` : "";
      return { adapter, reason: `auto: ${candidate}${why}` };
    } catch (error) {
      // A store that started and found its data damaged is that store's problem to report, not a
      // reason to use another one: `auto` then listed "no sessions" from an empty sqljs store and
      // wrote new sessions there, the damaged one unsaid.
      if (error instanceof FreecodeError && error.code === "bad_input") throw error;
      failures.push(`${candidate} failed: ${(error as Error).message}`);
      firstError ??= error;
    }
  }
  // The first failure is the cause: when it is the machine's (a home that is a file, no
  // permission), the CLI reports it as such (one line, exit 74), not as a bug.
  throw new FreecodeError("internal", `no storage adapter could start: ${failures.join("; ")}`, {
    cause: firstError,
  });
}
