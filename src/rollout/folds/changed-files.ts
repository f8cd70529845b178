/**
 * Which paths a tool call wrote. A map from tool name to the names of the arguments that hold paths:
 * a plain name takes the argument as a path (or each string of an array); a name suffixed `:patch`
 * takes only the paths named inside patch text (`*** Update File:`, `*** Add File:`, `*** Delete
 * File:`, `*** Move to:`), from a string or from each string of an argv array — so a shell tool counts
 * its `apply_patch` invocations and nothing else (no guessing from `sed -i`). The name `.` means the
 * arguments themselves (Codex's free-form `apply_patch` tool sends the patch as a bare string).
 */

/** Defaults covering common agents' file-writing tools (config.json `changedFileTools` merges over). */
export const DEFAULT_CHANGED_FILE_TOOLS: Readonly<Record<string, readonly string[]>> = {
  // Claude Code
  Write: ["file_path"],
  Edit: ["file_path"],
  MultiEdit: ["file_path"],
  NotebookEdit: ["notebook_path"],
  // Codex CLI: apply_patch as its own tool, or through the shell tools' argv
  apply_patch: [".:patch", "input:patch", "patch:patch"],
  shell: ["command:patch"],
  shell_command: ["command:patch"],
  local_shell: ["command:patch"],
  exec_command: ["cmd:patch"],
  // OpenCode (filePath) and freecode (path) share the names write/edit
  write: ["filePath", "path"],
  edit: ["filePath", "path"],
  multiedit: ["filePath"],
  patch: ["filePath", "patchText:patch"],
  // Gemini CLI
  write_file: ["file_path"],
  replace: ["file_path"],
};

const PATCH_LINE = /^\*\*\* (?:Update File|Add File|Delete File|Move to): (.+?)\s*$/gm;

/** Paths named in apply_patch-style patch text. */
export function pathsFromPatch(text: string): string[] {
  // Every shell command is looked at: most hold no patch, and a plain search says so faster than
  // the line-anchored pattern (~1/4 of the tool pairing's time on the real-shaped bench log).
  if (!text.includes("*** ")) return [];
  const out: string[] = [];
  for (const m of text.matchAll(PATCH_LINE)) out.push(m[1]!);
  return out;
}

function collect(value: unknown, patchOnly: boolean, out: string[]): void {
  if (typeof value === "string") {
    if (patchOnly) out.push(...pathsFromPatch(value));
    else if (value.length > 0) out.push(value);
  } else if (Array.isArray(value)) {
    for (const item of value) if (typeof item === "string") collect(item, patchOnly, out);
  }
}

/** An entry of the map: the argument's name (`.`: the arguments themselves), and whether only
 * patch text in it counts (`:patch`). */
export function argumentSpec(spec: string): { name: string; patchOnly: boolean } {
  const patchOnly = spec.endsWith(":patch");
  return { name: patchOnly ? spec.slice(0, -6) : spec, patchOnly };
}

/** The paths one call of `tool` with `args` wrote, per `map` (empty if the tool is not listed). */
export function changedPaths(
  tool: string,
  args: unknown,
  map: Readonly<Record<string, readonly string[]>>,
): string[] {
  // Own entries only: a tool may be called anything, `constructor` and `__proto__` included.
  const names = Object.hasOwn(map, tool) ? map[tool] : undefined;
  if (!Array.isArray(names)) return [];
  const out: string[] = [];
  for (const spec of names) {
    const { name, patchOnly } = argumentSpec(spec);
    if (name === ".") collect(args, patchOnly, out);
    else if (typeof args === "object" && args !== null && !Array.isArray(args)) {
      collect((args as Record<string, unknown>)[name], patchOnly, out);
    }
  }
  return out;
}

/** The defaults with `overrides` merged over them (a tool listed in overrides replaces its entry). */
export function changedFileTools(
  overrides?: Record<string, string[]>,
): Readonly<Record<string, readonly string[]>> {
  return overrides ? { ...DEFAULT_CHANGED_FILE_TOOLS, ...overrides } : DEFAULT_CHANGED_FILE_TOOLS;
}
