/**
 * `freecode session import <FILE|-|URL> [--id ID]`: recreate an exported session as a new session;
 * an http(s) URL (a link from `session export --to/--sync`) is downloaded first.
 */

import { readFileSync } from "node:fs";
import { badInput, notFound } from "../../../errors.ts";
import { importSessionDocument } from "../../../session/export.ts";
import { isAbsoluteProjectPath } from "../../../storage/project-key.ts";
import { downloadExport } from "../../../sync/client.ts";
import { command } from "../../_command.ts";
import { printMeta, withStore } from "./_shared.ts";

const isUrl = (s: string) => /^https?:\/\//i.test(s);

export default command({
  meta: {
    name: "import",
    description:
      "Recreate a session from a `session export` document (a file, - or a link), as a new session",
  },
  args: {
    file: {
      type: "positional",
      required: true,
      description: "The export document: a file, - for stdin, or an http(s) link from export --to/--sync",
    },
    id: { type: "string", description: "Id for the new session (default: a new one)" },
  },
  async run(ctx, args) {
    const file = args.file === "-" ? "<stdin>" : args.file;
    const raw = isUrl(args.file) ? await downloadExport(args.file) : await readDocument(args.file, file);
    const meta = await withStore(ctx, (s) =>
      importSessionDocument(s, raw, { file, ...(args.id !== undefined ? { id: args.id } : {}) }),
    );
    // Taken as it is (an earlier importer stored some, and their exports must import), but no
    // `--project` finds it: those resolve what they are given against the current directory.
    if (!isAbsoluteProjectPath(meta.projectPath))
      ctx.log.warn(
        `${file}: its project path ${JSON.stringify(meta.projectPath)} is not absolute: \`--project\` will not find the session (\`session list --all\` and its id do)`,
      );
    return printMeta(ctx, meta, "imported");
  },
});

/** The document in a file or on stdin (`-`), parsed as JSON but not yet checked. */
async function readDocument(path: string, file: string): Promise<unknown> {
  let bytes: Uint8Array;
  try {
    bytes = path === "-" ? new Uint8Array(await Bun.stdin.arrayBuffer()) : readFileSync(path);
  } catch (error) {
    const e = error as NodeJS.ErrnoException;
    if (e.code === "ENOENT") throw notFound(`no such file: ${path}`);
    // Bun's readFileSync of a directory (EISDIR) says no path: the one-line error must name it.
    if (e.code && e.path === undefined) e.path = path;
    throw error;
  }
  try {
    return JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch (error) {
    const why = error instanceof SyntaxError ? `not JSON: ${error.message}` : "not valid UTF-8";
    throw badInput(why, { file });
  }
}
