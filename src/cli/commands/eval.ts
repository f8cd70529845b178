/**
 * `freecode eval`: run eval cases over recorded sessions, or `freecode eval add <sessionId>` to write a
 * starter case. `eval` takes positional case paths and has a subcommand: main.ts's router (not
 * citty's) descends into `add` when it is the first word, else runs the cases. `__worker` is the
 * hidden entry the pool uses to fold a shard of sessions in another process.
 */
import { defineCommand, runCommand } from "citty";
import { commandExit, GLOBAL_ARGS } from "../_command.ts";
import { RUN_ARGS, runCommandFor } from "./eval/run.ts";

export default defineCommand({
  meta: {
    name: "eval",
    description:
      "Run eval cases over recorded sessions (exit 0 pass, 1 failed, 2 could not evaluate); `freecode eval add <sessionId>` writes a starter case",
  },
  args: { ...RUN_ARGS, ...GLOBAL_ARGS },
  subCommands: {
    add: () => import("./eval/add.ts").then((m) => m.default),
  },
  async run({ rawArgs }) {
    if (rawArgs[0] === "__worker") {
      const { serveWorker } = await import("../../eval/worker.ts");
      // Bun.write resolves once the pipe has taken every byte (process.stdout.write may still be
      // buffering when the process exits, which truncated large shards).
      for await (const chunk of serveWorker(await Bun.stdin.text())) await Bun.write(Bun.stdout, chunk);
      commandExit.code = 0;
      return 0;
    }
    await runCommand(runCommandFor(rawArgs), { rawArgs });
    return commandExit.code;
  },
});
