/**
 * Event fields some folds never read, which a file reader may leave unparsed (`util/json-skip.ts`).
 * Tool outputs and call arguments are half of a real log's bytes (the fold bench's real-shaped log:
 * 24 and 26 MB of 100). The trace fold never reads outputs, and reads arguments only to find the
 * paths a file-writing tool wrote, or when it keeps a small log's arguments instead of their lines'
 * places; the usage fold reads neither; the replay fold reads both, whole. So a file-writing tool's
 * call keeps its path arguments (or patch text) and loses the rest (a written file's content).
 * Lines are recognised by how freecode writes them, `type` first; a line written in another order
 * is parsed whole.
 */
import { FieldSkip, type SkipRule } from "../util/json-skip.ts";
import { argumentSpec } from "./folds/changed-files.ts";

type FileTools = Readonly<Record<string, readonly string[]>>;

export interface UnreadOptions {
  /** The arguments of these tools are read (the fold's changed-file tools): left whole. */
  fileTools?: FileTools;
  /** Asked per run: whether arguments are read back from their lines now (so not needed parsed). */
  argumentsInLog?: () => boolean;
}

/** A skip of tool outputs, and of the arguments a fold with `options` does not read. */
export function unreadToolValues(options: UnreadOptions = {}): FieldSkip {
  const inLog = options.argumentsInLog;
  const args = (type: string): SkipRule => ({
    lineStart: `{"type":"${type}",`,
    field: "args",
    ...(inLog ? { active: inLog } : {}),
  });
  const keep = options.fileTools ? pathArguments(options.fileTools) : undefined;
  return new FieldSkip([
    { lineStart: '{"type":"function.output",', field: "output" },
    {
      ...args("function.call"),
      ...(keep ? { keep: { field: "tool", by: (tool: string) => keep.get(tool) } } : {}),
    },
    args("function.denied"),
  ]);
}

/** Made once per map: most folds share the defaults, and eval makes a fold per log. */
const pathArgumentsOf = new WeakMap<FileTools, Map<string, ReadonlySet<string> | "all">>();

/**
 * Per file-writing tool, the arguments `changedPaths` reads (a path, or patch text), kept when the
 * others are left out; `"all"` for a tool whose arguments themselves are the patch (`.`).
 */
function pathArguments(fileTools: FileTools): Map<string, ReadonlySet<string> | "all"> {
  let keep = pathArgumentsOf.get(fileTools);
  if (keep) return keep;
  keep = new Map();
  for (const tool of Object.keys(fileTools)) {
    const names = (fileTools[tool] ?? []).map((spec) => argumentSpec(spec).name);
    keep.set(tool, names.includes(".") ? "all" : new Set(names));
  }
  pathArgumentsOf.set(fileTools, keep);
  return keep;
}

/** What the usage fold leaves unread: every output and argument. */
export const UNREAD_BY_USAGE = unreadToolValues();
