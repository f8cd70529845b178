/** `freecode rollout …`: append to, print and verify rollout logs (one file per subcommand). */
import { defineCommand } from "citty";

const leaf = (load: () => Promise<{ default: unknown }>) => () => load().then((m) => m.default as never);

export default defineCommand({
  meta: {
    name: "rollout",
    description: "Append events to a rollout log (JSONL on stdin), print it, verify it",
  },
  subCommands: {
    append: leaf(() => import("./rollout/append.ts")),
    cat: leaf(() => import("./rollout/cat.ts")),
    verify: leaf(() => import("./rollout/verify.ts")),
  },
});
