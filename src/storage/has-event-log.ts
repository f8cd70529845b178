/**
 * Whether a session has a rollout log, asked of that one log: its first line read, not every log
 * of the store listed (which cost a whole listing per question, and the listing of a store with
 * thousands of logs is not cheap on any adapter). A log whose lines do not read is a log too.
 */
import type { StorageAdapter } from "./contract.ts";

export async function hasEventLog(adapter: StorageAdapter, sessionId: string): Promise<boolean> {
  for await (const _ of adapter.readEvents(sessionId)) return true;
  return false;
}
