/** `freecode store …`: which adapter is in use and why, reindex, migrate, verify, goals, unlock. */
import { defineCommand } from "citty";

const leaf = (load: () => Promise<{ default: unknown }>) => () => load().then((m) => m.default as never);

export default defineCommand({
  meta: {
    name: "store",
    description: "Storage: info, reindex, migrate between adapters, verify, goals, unlock",
  },
  subCommands: {
    info: leaf(() => import("./store/info.ts")),
    reindex: leaf(() => import("./store/reindex.ts")),
    migrate: leaf(() => import("./store/migrate.ts")),
    verify: leaf(() => import("./store/verify.ts")),
    goal: leaf(() => import("./store/goal.ts")),
    unlock: leaf(() => import("./store/unlock.ts")),
  },
});
