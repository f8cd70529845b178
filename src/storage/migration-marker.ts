/**
 * The mark of a `store migrate` in progress on its target (see `migrationMarker`), apart from both
 * `migrate.ts` (which writes it) and `verify.ts` (which reports it).
 */
import { join } from "node:path";
import type { StorageAdapter } from "./contract.ts";

/**
 * Where a migration in progress marks its target (`undefined` for a store with no file): written
 * before the first record is copied, removed once the copy is verified. A migration killed half
 * way leaves it, so the half-filled target is not taken for a finished one: `store verify` reports
 * it, and the next migration into it clears it and starts over (the target was empty when the
 * marked migration began, so everything in it is that migration's).
 */
export function migrationMarker(target: Pick<StorageAdapter, "name" | "location">): string | undefined {
  if (target.name === "memory") return undefined;
  // The files store's location is its home (made by the migration if new); the others', a file.
  return target.name === "files"
    ? join(target.location, "state", "migrating.json")
    : `${target.location}.migrating`;
}
