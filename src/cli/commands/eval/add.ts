/**
 * `freecode eval add <sessionId> [--sessions PATH] [--out FILE] [--force]`: write a starter case from a
 * recorded session (its tools, their order, the files it changed) for the user to edit. Prints the
 * YAML on stdout, or writes it to `--out` (never over an existing file unless `--force`).
 */
import { statSync } from "node:fs";
import { conflict, FreecodeError, notFound } from "../../../errors.ts";
import { untrustedLog } from "../../../eval/evaluate.ts";
import { sessionsFromPath } from "../../../eval/sessions.ts";
import { starterCase, starterYaml } from "../../../eval/starter.ts";
import type { Trace } from "../../../rollout/folds/trace-types.ts";
import { loadTrace } from "../../../rollout/load.ts";
import { openStore } from "../../../storage/select.ts";
import { isStdoutPath, writeOutputFile } from "../../../util/output-file.ts";
import { command } from "../../_command.ts";
import { completeFrom, completeId } from "../../_session-id.ts";
import { traceOptionsOf } from "./_trace-options.ts";

export default command({
  meta: { name: "add", description: "Write a starter eval case from a recorded session" },
  args: {
    sessionId: {
      type: "positional",
      required: true,
      description: "The recorded session (its id, or a start of one no other id shares)",
      valueHint: "sessionId",
    },
    sessions: {
      type: "string",
      description: "Find the rollout under this file, folder or glob instead of the store",
      valueHint: "path",
    },
    out: {
      type: "string",
      description: "Write the case to FILE (.yaml; .json for JSON, .jsonl for one JSON line)",
      valueHint: "file",
    },
    id: { type: "string", description: "The case id (default: the session id)" },
    force: { type: "boolean", description: "Overwrite --out if it exists" },
  },
  async run(ctx, args) {
    let sessionId = String(args.sessionId);
    let trace: Trace;
    let file: string | undefined;
    if (args.sessions) {
      const refs = sessionsFromPath(args.sessions);
      sessionId = completeFrom(
        refs.map((r) => r.sessionId),
        sessionId,
      );
      const ref = refs.find((r) => r.sessionId === sessionId);
      if (!ref?.file) throw notFound(`no rollout for session ${sessionId} under ${args.sessions}`);
      file = ref.file;
      trace = await loadTrace({ file, sessionId }, traceOptionsOf(ctx.config()));
    } else {
      const { adapter } = await openStore(ctx.storeName(), { home: ctx.home, fsync: ctx.config().fsync });
      try {
        sessionId = await completeId(adapter, sessionId, "any");
        trace = await loadTrace({ adapter, sessionId }, traceOptionsOf(ctx.config()));
      } finally {
        await adapter.close();
      }
    }
    if (trace.eventCount === 0) throw notFound(`session ${sessionId} has no rollout events`);
    // A case built from part of a log would be set aside as "could not evaluate" on its first run.
    const untrusted = untrustedLog(trace, file);
    if (untrusted) throw new FreecodeError("check_failed", `session ${sessionId}: ${untrusted}`);
    const id = args.id ? String(args.id) : undefined;
    const asJsonl = !ctx.json && args.out !== undefined && /\.jsonl$/i.test(args.out);
    const asJson = ctx.json || (args.out !== undefined && /\.json$/i.test(args.out));
    const text = asJsonl
      ? `${JSON.stringify(starterCase(trace, id))}\n`
      : asJson
        ? `${JSON.stringify(starterCase(trace, id), null, 2)}\n`
        : starterYaml(trace, id);
    if (args.out && !isStdoutPath(args.out)) {
      // Only a file is overwritten: a device or a named pipe is written to (see `writeOutputFile`);
      // /dev/stdout is stdout.
      const file = statSync(args.out, { throwIfNoEntry: false });
      if (!args.force && file?.isFile()) throw conflict(`${args.out} exists (use --force to overwrite)`);
      writeOutputFile(args.out, (write) => write(text));
      if (!file || file.isFile()) ctx.log.success(`wrote ${args.out}: run it with freecode eval ${args.out}`);
    } else ctx.out(text);
    return 0;
  },
});
