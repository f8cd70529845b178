/** `freecode session delete <id> [--purge]`: soft delete (recoverable) or erase the files. */
import { eraseSession } from "../../../maintenance/erase.ts";
import { deleteSession } from "../../../session/lifecycle.ts";
import { command } from "../../_command.ts";
import { ID_ARG, printMeta, withStore } from "./_shared.ts";

export default command({
  meta: {
    name: "delete",
    description: "Soft-delete a session (restore undoes it); --purge erases its files",
  },
  args: {
    ...ID_ARG,
    purge: { type: "boolean", description: "Erase meta, messages, rollout and git snapshots for good" },
  },
  async run(ctx, args) {
    if (args.purge) {
      // Its search rows and git snapshots go too (`session snapshots`): nothing of the session is left.
      const sets = await withStore(ctx, (s) => eraseSession(s, ctx.home, args.id));
      if (sets > 0) ctx.log.info(`removed the git snapshots of ${args.id}`);
      if (ctx.json) ctx.out({ id: args.id, purged: true });
      else ctx.out(`purged ${args.id}\n`);
      return 0;
    }
    return printMeta(ctx, await withStore(ctx, (s) => deleteSession(s, args.id)), "deleted");
  },
});
