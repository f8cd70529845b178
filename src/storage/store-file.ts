/**
 * Where a one-file store keeps its data, and whether a store holds any yet — for commands that look
 * at a store without making one (`store verify`, `doctor`: opening a one-file store creates its
 * database, and a check must leave nothing behind in a mistyped `--home`).
 */
import { existsSync } from "node:fs";
import { homePaths } from "../home.ts";
import { AUTO_ORDER } from "./select.ts";

/** The data file of a one-file store (sqlite, sqljs, json); undefined for the others. */
export async function storeFileOf(name: string, home: string): Promise<string | undefined> {
  if (name === "sqlite") return (await import("./adapters/sqlite.ts")).sqliteStorePath(home);
  if (name === "sqljs") return (await import("./adapters/sqljs.ts")).sqljsStorePath(home);
  if (name === "json") return (await import("./adapters/json.ts")).jsonStorePath(home);
  return undefined;
}

/**
 * Whether the store `name` under `home` holds anything: its file, a migration into it, or its
 * journal (the json and sqljs stores keep recent writes there until they fold them in: a writer
 * killed before that left only the journal, which is their data); for the files store, its
 * sessions or rollout folders. The memory store never does; `auto`, when one it may take does.
 */
export async function storeHasData(name: string, home: string): Promise<boolean> {
  if (name === "memory") return false;
  // `auto` holds what any store it may take holds (a damaged sqlite store was judged empty).
  if (name === "auto") {
    for (const candidate of AUTO_ORDER) if (await storeHasData(candidate, home)) return true;
    return false;
  }
  const file = await storeFileOf(name, home);
  if (file === undefined)
    return [homePaths(home).sessions, homePaths(home).rollout].some((d) => existsSync(d));
  return [file, `${file}.migrating`, `${file}.journal`].some((f) => existsSync(f));
}
