/** `freecode session import <FILE|-> [--id ID]`: recreate an exported session as a new session. */
import { readFileSync } from "node:fs";
import { badInput, notFound } from "../../../errors.ts";
import { importSessionDocument } from "../../../session/export.ts";
import { command } from "../../_command.ts";
import { printMeta, withStore } from "./_shared.ts";

export default command({
  meta: {
    name: "import",
    description: "Recreate a session from a `session export` document, as a new session",
  },
  args: {
    file: { type: "positional", required: true, description: "The export document (- for stdin)" },
    id: { type: "string", description: "Id for the new session (default: a new one)" },
  },
  async run(ctx, args) {
    const file = args.file === "-" ? "<stdin>" : args.file;
    let bytes: Uint8Array;
    try {
      bytes = args.file === "-" ? new Uint8Array(await Bun.stdin.arrayBuffer()) : readFileSync(args.file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") throw notFound(`no such file: ${args.file}`);
      throw error;
    }
    let raw: unknown;
    try {
      raw = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
    } catch (error) {
      const why = error instanceof SyntaxError ? `not JSON: ${error.message}` : "not valid UTF-8";
      throw badInput(why, { file });
    }
    const meta = await withStore(ctx, (s) =>
      importSessionDocument(s, raw, { file, ...(args.id !== undefined ? { id: args.id } : {}) }),
    );
    return printMeta(ctx, meta, "imported");
  },
});
