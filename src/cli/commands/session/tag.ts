/**
 * `freecode session tag <id> [--add a,b] [--remove c]`: change a session's tags and print them, one a
 * line (`--json`: `{id, tags}`, as the `session.tag` JSON-RPC method). With neither flag it only
 * prints. `--add` and `--remove` may be repeated: they are read from the raw arguments, because
 * citty keeps only the last value of a repeated flag (and a dropped tag would go unnoticed).
 */
import { type ArgsDef, defineCommand, runCommand } from "citty";
import { sessionTags, splitTagList, tagSession } from "../../../session/tags.ts";
import { escapeLine } from "../../../util/one-line.ts";
import { command, GLOBAL_ARGS } from "../../_command.ts";
import { ID_ARG, withStore } from "./_shared.ts";

const TAG_ARGS = {
  ...ID_ARG,
  add: { type: "string", description: "Tags to add, comma-separated or repeated (kept in order, each once)" },
  remove: { type: "string", description: "Tags to remove, comma-separated or repeated" },
} as const satisfies ArgsDef;

const META = { name: "tag", description: "Add or remove a session's tags, and print them" };

/**
 * Every value of `--name` in `rawArgs` (`--name v` and `--name=v`), up to `--`. The command has
 * already refused a value flag without its value, so the token after `--name` is its value.
 */
export function flagValues(rawArgs: readonly string[], name: string): string[] {
  const values: string[] = [];
  for (let i = 0; i < rawArgs.length; i++) {
    const token = rawArgs[i]!;
    if (token === "--") break;
    if (token === `--${name}` && i + 1 < rawArgs.length) values.push(rawArgs[++i]!);
    else if (token.startsWith(`--${name}=`)) values.push(token.slice(name.length + 3));
  }
  return values;
}

const tagCommandFor = (rawArgs: string[]) =>
  command({
    meta: META,
    args: TAG_ARGS,
    async run(ctx, args) {
      const add = splitTagList(flagValues(rawArgs, "add"));
      const meta = await withStore(ctx, async (s) => {
        // A value naming a tag the session has whole (`x,y`, stored before commas were refused) is
        // that tag; otherwise a comma-separated list.
        const current = new Set((await sessionTags(s, args.id)).map((t) => t.trim()));
        const remove = flagValues(rawArgs, "remove").flatMap((v) =>
          current.has(v.trim()) ? [v] : splitTagList(v),
        );
        return tagSession(s, args.id, { add, remove });
      });
      const tags = meta.tags ?? [];
      if (ctx.json) ctx.out({ id: meta.id, tags });
      else if (tags.length > 0) ctx.out(`${tags.map(escapeLine).join("\n")}\n`);
      else ctx.log.info(`session ${meta.id} has no tags`);
      return 0;
    },
  });

export default defineCommand({
  meta: META,
  args: { ...TAG_ARGS, ...GLOBAL_ARGS },
  async run({ rawArgs }) {
    await runCommand(tagCommandFor(rawArgs), { rawArgs });
  },
});
