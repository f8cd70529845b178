/**
 * Seeding stores for the gc tests: sessions with chosen statuses and ages, written through the raw
 * adapter (the lifecycle stamps `now` and never creates an empty session; gc must handle both).
 */
import { selfOwner } from "../../src/session/status.ts";
import filesAdapter from "../../src/storage/adapters/files.ts";
import sqliteAdapter from "../../src/storage/adapters/sqlite.ts";
import type { StorageAdapter } from "../../src/storage/contract.ts";
import type { SessionMeta, StoredMessage } from "../../src/storage/records.ts";

export const DAY = 86_400_000;
/** The tests' "now": real time, since CLI runs plan against their own clock. */
export const NOW = Date.now();

export const ADAPTERS = { files: filesAdapter, sqlite: sqliteAdapter } as const;
export type AdapterName = keyof typeof ADAPTERS;

export interface Seed {
  id: string;
  /** Days before `NOW` of the last update (and creation). */
  ageDays: number;
  status?: SessionMeta["status"];
  pinned?: boolean;
  /** How many messages (0: an empty shell); each carries `text`. */
  messages?: number;
  text?: string;
}

export function metaOf(s: Seed, now = NOW): SessionMeta {
  const at = now - s.ageDays * DAY;
  return {
    id: s.id,
    title: `session ${s.id}`,
    projectPath: "/work/project",
    status: s.status ?? "idle",
    createdAt: at,
    updatedAt: at,
    turnCount: 0,
    messageCount: 0,
    ...(s.pinned ? { pinned: true } : {}),
    // Owned by this (live) test process, so no CLI run's crash recovery turns it `interrupted`.
    ...(s.status === "running" ? { owner: selfOwner() } : {}),
  };
}

export function messagesOf(s: Seed, now = NOW): StoredMessage[] {
  const at = now - s.ageDays * DAY;
  return Array.from({ length: s.messages ?? 1 }, (_, i) => ({
    id: `${s.id}-m${i}`,
    role: "user" as const,
    parts: [{ type: "text" as const, content: s.text ?? `hello from ${s.id}` }],
    timestamp: at - 1000 + i,
  }));
}

/** Open `name` on `home`, create `seeds`, and hand back the open adapter. */
export async function seedStore(name: AdapterName, home: string, seeds: Seed[]): Promise<StorageAdapter> {
  const adapter = ADAPTERS[name]({ home, fsync: "never" });
  for (const s of seeds) await adapter.createSession(metaOf(s), messagesOf(s));
  return adapter;
}

/** Create `seeds` in `name` on `home` and close it (for CLI runs in another process). */
export async function seedAndClose(name: AdapterName, home: string, seeds: Seed[]): Promise<void> {
  const adapter = await seedStore(name, home, seeds);
  await adapter.close();
}
