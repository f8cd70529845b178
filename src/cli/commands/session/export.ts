/**
 * `freecode session export <id> [--rollout] [--out FILE | --to URL | --sync]`: the session as one
 * JSON document, on stdout, in a file, or uploaded to a sync endpoint (which answers with a link).
 */
import { usageError } from "../../../errors.ts";
import { exportSession } from "../../../session/export.ts";
import { uploadExport } from "../../../sync/client.ts";
import { isStdoutPath, writeOutputFile } from "../../../util/output-file.ts";
import { command } from "../../_command.ts";
import { completeId } from "../../_session-id.ts";
import { READ_ID_ARG, when, withStore } from "./_shared.ts";

export default command({
  meta: {
    name: "export",
    description:
      "Write a session (meta, messages, context cache; --rollout: its events) as one JSON document",
  },
  args: {
    ...READ_ID_ARG,
    rollout: { type: "boolean", description: "Include the rollout log (events, ids and timestamps kept)" },
    out: {
      type: "string",
      description: "Write to this file (atomically, mode 0600) instead of stdout",
      valueHint: "FILE",
    },
    to: {
      type: "string",
      description: "Upload to this sync endpoint (POST URL/v1/exports) and print the link",
      valueHint: "URL",
    },
    sync: { type: "boolean", description: "Upload to config.json's syncEndpoint (as --to)" },
  },
  async run(ctx, args) {
    const targets = [
      args.out !== undefined && "--out",
      args.to !== undefined && "--to",
      args.sync && "--sync",
    ];
    const given = targets.filter(Boolean);
    if (given.length > 1) throw usageError(`${given.join(" and ")} cannot be used together`);
    let endpoint = args.to;
    if (args.sync) {
      endpoint = ctx.config().syncEndpoint;
      if (endpoint === undefined)
        throw usageError("--sync needs syncEndpoint in config.json (or give the endpoint with --to URL)");
    }
    const doc = await withStore(ctx, async (s) =>
      exportSession(s, await completeId(s, args.id), { rollout: args.rollout === true }),
    );
    const text = `${JSON.stringify(doc)}\n`;
    if (endpoint !== undefined) {
      const token = process.env.FREECODE_SYNC_TOKEN;
      const { url, expiresAt } = await uploadExport(endpoint, text, token ? { token } : {});
      if (ctx.json) ctx.out({ url, expiresAt });
      else {
        // The link alone on stdout, so `$(freecode session export … --sync)` is the link.
        ctx.out(`${url}\n`);
        ctx.log.info(`uploaded ${doc.meta.id}; the link expires ${when(expiresAt)}`);
      }
      return 0;
    }
    // `--out /dev/stdout` is stdout: the document alone (a summary after it made it no JSON).
    if (args.out === undefined || isStdoutPath(args.out)) {
      ctx.out(text);
      return 0;
    }
    writeOutputFile(args.out, (write) => write(text), { fsync: ctx.config().fsync !== "never" });
    const summary = {
      id: doc.meta.id,
      file: args.out,
      bytes: Buffer.byteLength(text),
      messages: doc.messages.length,
      events: doc.rollout?.length ?? null,
    };
    if (ctx.json) ctx.out(summary);
    else
      ctx.out(
        `exported ${doc.meta.id} to ${args.out}: ${summary.messages} messages${doc.rollout ? `, ${doc.rollout.length} events` : ""}\n`,
      );
    return 0;
  },
});
