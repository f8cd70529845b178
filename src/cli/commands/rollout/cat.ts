/**
 * `freecode rollout cat <id>`: the log's events as JSONL on stdout (validated: unreadable lines are
 * reported on stderr with their numbers; events of types this version does not know are printed as
 * they are, and counted). `--json` prints one document `{sessionId, events, issues, unknownTypes}`.
 */
import { isKnownEventType } from "../../../rollout/events.ts";
import { readRollout } from "../../../rollout/load.ts";
import type { ReadIssue } from "../../../storage/contract.ts";
import { writeJson } from "../../../util/json-write.ts";
import { command } from "../../_command.ts";
import { writeStdout } from "../../_stdout.ts";
import { withRollouts } from "./_source.ts";

export default command({
  meta: { name: "cat", description: "Print a session's rollout events as JSONL" },
  args: {
    id: {
      type: "positional",
      required: true,
      description: "Session id, or a start of one no other id shares",
    },
    type: { type: "string", description: "Only events of this type (or prefix ending in '.', e.g. model.)" },
  },
  async run(ctx, args) {
    const issues: ReadIssue[] = [];
    let unknown = 0;
    const wanted = args.type;
    const keep = (type: string) =>
      wanted === undefined || type === wanted || (wanted.endsWith(".") && type.startsWith(wanted));
    let id = args.id;
    await withRollouts(ctx, async (r) => {
      id = await r.resolve(args.id);
      const source = await r.source(id);
      const stream = readRollout(source, {
        onIssue: (i) => issues.push(i),
        keepUnknown: true,
      });
      // `--json`: the document `{sessionId, events, issues, unknownTypes}` as JSON.stringify
      // indents it, written as the events come rather than gathered (a big log's would not fit).
      if (ctx.json) writeStdout(`{\n  "sessionId": ${JSON.stringify(id)},\n  "events": `);
      let count = 0;
      for await (const e of stream) {
        if (!keep(e.type)) continue;
        if (!isKnownEventType(e.type)) unknown++; // printed as it is: counted among those printed
        if (!ctx.json) writeStdout(`${JSON.stringify(e)}\n`);
        else {
          writeStdout(count === 0 ? "[\n    " : ",\n    ");
          writeJson(e, writeStdout, 2);
        }
        count++;
      }
      if (!ctx.json) return;
      writeStdout(count === 0 ? "[]" : "\n  ]");
      writeStdout(',\n  "issues": ');
      writeJson(issues, writeStdout, 1);
      writeStdout(`,\n  "unknownTypes": ${unknown}\n}\n`);
    });
    if (!ctx.json) {
      for (const i of issues) ctx.log.warn(`${i.file ?? id}${i.line ? `:${i.line}` : ""}: ${i.message}`);
      if (unknown)
        ctx.log.info(`${unknown} event(s) of types this version does not know (printed as they are)`);
    }
    return 0;
  },
});
