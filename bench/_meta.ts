/** The meta of a bench session: nothing in it matters to what the benches time. */
import type { SessionMeta } from "../src/storage/records.ts";

export const benchMeta = (id: string): SessionMeta => ({
  id,
  title: "bench",
  projectPath: "/bench",
  status: "idle",
  createdAt: 1,
  updatedAt: 1,
  turnCount: 0,
  messageCount: 0,
});
