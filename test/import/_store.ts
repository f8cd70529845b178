/** What a store holds, for tests that compare two imports: every session, sorted by id. */
import type { StorageAdapter } from "../../src/storage/contract.ts";

/** Each session's meta, messages and events (or unreadable lines), in storage order. */
export async function sessionsIn(adapter: StorageAdapter) {
  const { items } = await adapter.listSessions({ all: true });
  const sessions = [];
  for (const meta of items.sort((a, b) => a.id.localeCompare(b.id))) {
    const events = [];
    for await (const r of adapter.readEvents(meta.id)) events.push(r.event ?? r.issue);
    sessions.push({ meta, messages: (await adapter.readMessages(meta.id)).messages, events });
  }
  return sessions;
}
