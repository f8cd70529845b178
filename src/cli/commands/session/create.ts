/** `freecode session create`: a session starts with its first message (no empty sessions). */
import { usageError } from "../../../errors.ts";
import { createSession, toStoredMessages } from "../../../session/lifecycle.ts";
import { normalizeTags, splitTagList } from "../../../session/tags.ts";
import { command, flagValues } from "../../_command.ts";
import { onStdinLine, printMeta, readStdinJsonl, withStore } from "./_shared.ts";

export default command({
  repeatable: ["tag"],
  meta: {
    name: "create",
    description: "Create a session with its first message (--prompt, or JSONL messages on stdin)",
  },
  args: {
    prompt: {
      type: "string",
      description: "The first user message (else JSONL messages are read from stdin)",
    },
    project: { type: "string", description: "Project path (default: the current directory)" },
    title: { type: "string", description: "Title (default: the first prompt, 50 characters)" },
    provider: { type: "string", description: "Provider name, restored on resume" },
    model: { type: "string", description: "Model id, restored on resume" },
    id: { type: "string", description: "Use this session id" },
    tag: { type: "string", description: "Tags, comma-separated or repeated (see `session tag`)" },
  },
  async run(ctx, args) {
    // Checked before stdin is read: a bad tag fails as early as a bad flag. `--tag` may repeat.
    const tag = flagValues(ctx.rawArgs, "tag");
    const tags = args.tag === undefined ? undefined : normalizeTags(splitTagList(tag), "--tag");
    const inputs =
      args.prompt !== undefined
        ? [{ role: "user", parts: [{ type: "text", content: args.prompt }] }]
        : await readStdinJsonl();
    if (inputs.length === 0) throw usageError("give the first message with --prompt or as JSONL on stdin");
    let messages: ReturnType<typeof toStoredMessages>;
    try {
      messages = toStoredMessages(inputs);
    } catch (error) {
      onStdinLine(error);
    }
    const meta = await withStore(ctx, (store) =>
      createSession(
        store,
        {
          projectPath: args.project ?? process.cwd(),
          ...(args.title !== undefined ? { title: args.title } : {}),
          ...(args.provider ? { provider: args.provider } : {}),
          ...(args.model ? { model: args.model } : {}),
          ...(args.id !== undefined ? { id: args.id } : {}),
          ...(tags !== undefined ? { tags } : {}),
        },
        messages,
      ),
    );
    return printMeta(ctx, meta, "created");
  },
});
