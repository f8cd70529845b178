/** What a store holds, for tests that compare two imports: the import itself, every session sorted by id. */
import { importSources } from "../../src/import/import.ts";
import type { Agent } from "../../src/import/types.ts";
import type { StorageAdapter } from "../../src/storage/contract.ts";
import { openStore } from "../../src/storage/select.ts";

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

/** Everything a store holds after importing `path`, sessions sorted by id. */
export async function imported(
  home: string,
  agent: Agent,
  path: string,
  writeEveryBytes?: number,
  final?: boolean,
) {
  const { adapter } = await openStore("files", { home, fsync: "never" });
  try {
    const report = await importSources({
      agent,
      paths: [path],
      adapter,
      home,
      fsync: false,
      writeEveryBytes,
      final,
    });
    const { path: _, ...summary } = report.sources[0]!;
    return { sessions: await sessionsIn(adapter), summary };
  } finally {
    await adapter.close();
  }
}

/**
 * Two imports' metas, equal but for `updatedAt`, which a read in parts may move forward: a part
 * that patches a stored message rewrites the log, and a rewrite moves `updatedAt` (so search sees
 * it) by a millisecond past the newest time it holds.
 */
export function metasAlike(got: { updatedAt: number }, want: { updatedAt: number }): [unknown, unknown] {
  const shift = got.updatedAt - want.updatedAt;
  return [
    { ...got, updatedAt: shift >= 0 && shift < 1000 ? "original or moved on" : got.updatedAt },
    { ...want, updatedAt: "original or moved on" },
  ];
}
