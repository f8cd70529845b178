/** `freecode store goal <sessionId> [--text T] [--status S] [--clear]`: goal tracking per thread. */
import { notFound, usageError } from "../../../errors.ts";
import { setGoal } from "../../../threads/api.ts";
import { GOAL_STATUSES, type GoalStatus } from "../../../threads/types.ts";
import { command } from "../../_command.ts";
import { withOpenStore } from "./_open.ts";

export default command({
  meta: { name: "goal", description: "Show or set a session's goal (text and status)" },
  args: {
    id: { type: "positional", required: true, description: "Session id" },
    text: { type: "string", description: "The goal" },
    status: { type: "string", description: `Goal status: ${GOAL_STATUSES.join("|")}` },
    clear: { type: "boolean", description: "Remove the goal" },
  },
  async run(ctx, args) {
    const status = args.status as GoalStatus | undefined;
    if (status !== undefined && !GOAL_STATUSES.includes(status)) {
      throw usageError(`--status must be one of ${GOAL_STATUSES.join(", ")} (got "${status}")`);
    }
    if (args.clear === true && (args.text !== undefined || status !== undefined))
      throw usageError("--clear removes the goal: it cannot be given with --text or --status");
    const show = args.text === undefined && status === undefined && args.clear !== true;
    const goal = await withOpenStore(ctx, async (adapter) => {
      if (!show)
        return (
          await setGoal(adapter, args.id, {
            ...(args.text !== undefined ? { text: args.text } : {}),
            ...(status ? { status } : {}),
            clear: args.clear === true,
          })
        ).goal;
      const meta = await adapter.getMeta(args.id);
      if (!meta) throw notFound(`no session ${args.id}`);
      return meta.goal;
    });
    if (ctx.json) ctx.out({ sessionId: args.id, goal: goal ?? null });
    else ctx.out(goal ? `${goal.status}: ${goal.text}\n` : "no goal\n");
    return 0;
  },
});
