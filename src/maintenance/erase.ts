/**
 * Erasing a session for good, everywhere it lives: its files in the store (`purgeSession`), its rows
 * in the thread store (brought up to date at once, not at the next search: a log recorded again
 * under the id with the same event ids kept the purged text searchable), and its git snapshots.
 * `session delete --purge` and JSON-RPC's `session.delete {purge: true}` both erase through here (the
 * JSON-RPC one left the purged text in search).
 */
import { purgeSession } from "../session/lifecycle.ts";
import { forgetSnapshots } from "../snapshot/forget.ts";
import type { StorageAdapter } from "../storage/contract.ts";
import { refreshThreadStore } from "../threads/api.ts";

/** Erase session `id`; `home`: the data directory whose thread store and snapshots hold it too. Returns how many snapshot sets went. */
export async function eraseSession(
  store: StorageAdapter,
  home: string | undefined,
  id: string,
): Promise<number> {
  await purgeSession(store, id);
  if (home === undefined) return 0;
  await refreshThreadStore(store, home);
  return forgetSnapshots(home, id);
}
