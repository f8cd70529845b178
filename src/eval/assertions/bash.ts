/**
 * Shell commands: freecode's `expectBashMatches` / `forbidBashMatches`. A shell tool is one named in
 * SHELL_TOOLS (any case); its command is `args.command` or `args.cmd` (an argv array is joined with
 * spaces), or the args themselves when they are a string. Regexes default to case-insensitive.
 */
import type { ToolSpan, Trace } from "../../rollout/folds/trace-types.ts";
import { compileRegex } from "../match/args.ts";
import { fail, type Outcome, pass, show } from "../outcome.ts";

/**
 * Shell tools and where each keeps its command. The Codex names are also listed, by the argument
 * that may hold a patch, in `DEFAULT_CHANGED_FILE_TOOLS` (src/rollout/folds/changed-files.ts): a
 * shell tool added there belongs here too, or its commands escape the shell assertions.
 */
const SHELL_TOOLS = new Set([
  "bash", // Claude Code `Bash`, OpenCode, freecode: `command`, a string
  "shell", // Codex: `command`, an argv array (`["bash", "-lc", "…"]`)
  "shell_command", // Codex (newer builds): `command`, a string, with `workdir`
  "local_shell", // Codex `local_shell_call`: the action's `command`, an argv array
  "exec_command", // Codex unified exec: `cmd`, a string
  "run_shell_command", // Gemini CLI: `command`, a string
  "run_command", // `command`, a string or argv
]);

/** Whether a tool name is a shell tool. */
export const isShellTool = (name: string) => SHELL_TOOLS.has(name.toLowerCase());

/** The command line of a shell call, when one was recorded. */
export function commandOf(span: { args?: unknown }): string | undefined {
  const a = span.args;
  if (typeof a === "string") return a;
  if (typeof a !== "object" || a === null) return undefined;
  const c = (a as Record<string, unknown>).command ?? (a as Record<string, unknown>).cmd;
  if (typeof c === "string") return c;
  if (Array.isArray(c)) return c.map(String).join(" ");
  return undefined;
}

const shellCalls = (trace: Trace) =>
  trace.toolSpans
    .filter((t) => isShellTool(t.tool))
    .map((t) => [t, commandOf(t) ?? ""] as [ToolSpan, string]);

/** Every pattern matches at least one shell command that ran. */
export function expectBashMatches(trace: Trace, patterns: string[]): Outcome {
  const calls = shellCalls(trace);
  for (const p of patterns) {
    const re = compileRegex(p);
    if (!calls.some(([, cmd]) => re.test(cmd))) {
      const seen = calls.map(([, cmd]) => show(cmd, 60));
      return fail(
        `no shell command matched /${p}/i (${calls.length ? `commands: ${seen.slice(0, 5).join(", ")}` : "no shell command ran"})`,
        { expected: `/${p}/i`, actual: calls.map(([, cmd]) => cmd) },
      );
    }
  }
  return pass(`every pattern matched a shell command (${patterns.length})`);
}

/** No shell command that ran matches any of the patterns. */
export function forbidBashMatches(trace: Trace, patterns: string[]): Outcome {
  const res = patterns.map((p) => compileRegex(p));
  for (const span of trace.toolSpans) {
    if (!isShellTool(span.tool)) continue;
    const cmd = commandOf(span) ?? "";
    const i = res.findIndex((re) => re.test(cmd));
    const hit = i === -1 ? undefined : patterns[i];
    if (hit !== undefined) {
      return fail(
        `forbidden shell command ${show(cmd, 80)} matched /${hit}/i at call #${span.index} (seq ${span.callSeq})`,
        {
          expected: `no command matching /${hit}/i`,
          actual: cmd,
          seq: span.callSeq,
          callIndex: span.index,
        },
      );
    }
  }
  // A command started with no output recorded ran as far as anyone knows (a killed `rm -rf`).
  for (const call of trace.pendingCalls) {
    if (!isShellTool(call.tool)) continue;
    const cmd = commandOf(call) ?? "";
    const i = res.findIndex((re) => re.test(cmd));
    if (i !== -1)
      return fail(
        `forbidden shell command ${show(cmd, 80)} matched /${patterns[i]}/i, started at seq ${call.seq} (no output recorded)`,
        { expected: `no command matching /${patterns[i]}/i`, actual: cmd, seq: call.seq },
      );
  }
  return pass(`no shell command matched ${patterns.map((p) => `/${p}/i`).join(", ")}`);
}
