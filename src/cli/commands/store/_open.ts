/** Opening the configured store for the `store` and `search` commands (closed on every path). */
import type { StorageAdapter } from "../../../storage/contract.ts";
import { openStore } from "../../../storage/select.ts";
import type { CommandContext } from "../../_command.ts";

/** Open the store `--store`/FREECODE_STORE/config names, run `fn`, close it. */
export async function withOpenStore<T>(
  ctx: CommandContext,
  fn: (adapter: StorageAdapter, reason: string) => Promise<T>,
  name = ctx.storeName(),
  home = ctx.home,
): Promise<T> {
  const { adapter, reason } = await openStore(name, { home, fsync: ctx.config().fsync });
  try {
    return await fn(adapter, reason);
  } finally {
    await adapter.close();
  }
}
