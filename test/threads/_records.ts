/** Session metas and messages for the thread-store tests. */
import type { SessionMeta, StoredMessage } from "../../src/storage/records.ts";

/** A meta for `id` in project `/work/alpha`, created and updated at 1000, with `over` applied. */
export const meta = (id: string, over: Partial<SessionMeta> = {}): SessionMeta => ({
  id,
  title: `session ${id}`,
  projectPath: "/work/alpha",
  status: "idle",
  createdAt: 1000,
  updatedAt: 1000,
  turnCount: 0,
  messageCount: 0,
  ...over,
});

/** A message of one text part. */
export const msg = (id: string, role: StoredMessage["role"], text: string, ts: number): StoredMessage => ({
  id,
  role,
  parts: [{ type: "text", content: text }],
  timestamp: ts,
});
