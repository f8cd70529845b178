/**
 * Reading Codex tool arguments and outputs. Arguments are a JSON string (argv arrays from `shell`,
 * a command string from `shell_command`); freeform tools (`apply_patch`) send raw text. Outputs have
 * no error flag: their text changed format across releases, so success is read from whichever form
 * is there — `{"output","metadata":{"exit_code"}}` JSON, `Exit code: N` headers, or the message
 * Codex answers the model with when a tool fails before it runs.
 */
import type { DenySource } from "../rollout/events.ts";

/** Tool arguments as a plain object (history loading rejects anything else). */
export function parseArgs(raw: unknown): Record<string, unknown> {
  if (raw && typeof raw === "object" && !Array.isArray(raw)) return raw as Record<string, unknown>;
  if (typeof raw === "string") {
    try {
      const parsed = JSON.parse(raw) as unknown;
      if (parsed && typeof parsed === "object" && !Array.isArray(parsed))
        return parsed as Record<string, unknown>;
    } catch {
      // Freeform input (a patch, a script): kept as text below.
    }
    return { input: raw };
  }
  return raw === undefined ? {} : { input: raw };
}

/** The text of `input_text`/`output_text` items (or a plain string). */
export function textOfItems(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((c) => (c && typeof c === "object" && typeof c.text === "string" ? c.text : ""))
    .filter(Boolean)
    .join("\n");
}

const REJECTED = /\brejected by (the )?user\b/i;

/**
 * The openings of the messages Codex itself sends back as the output of a call it refused to run
 * (`FunctionCallError::RespondToModel` in codex-rs: a patch that does not apply to the files, JSON
 * arguments the tool cannot read). Anchored at the start: a tool's own output that merely mentions
 * these words is not a failure.
 */
const CODEX_TOOL_FAILURE = /^(apply_patch verification failed|failed to parse function arguments)\b/;

/**
 * Whether an `*_end` event reports a failure: a non-zero exit code, a patch that did not apply, or
 * an MCP call that failed — either in the transport (`Err`) or as a result the server flagged
 * `isError` (that one arrives as `Ok`, with no exit code to read).
 */
export function endFailed(p: Record<string, unknown>): boolean {
  if (p.type === "exec_command_end") return Number(p.exit_code ?? 0) !== 0;
  if (p.type === "patch_apply_end") return p.success === false;
  const result = p.result;
  if (!result || typeof result !== "object") return false;
  if ("Err" in result) return true;
  const ok = (result as { Ok?: { isError?: unknown } }).Ok;
  return ok?.isError === true;
}

/**
 * Whether a tool output is a failure (or a refusal). `reported` is what an `*_end` event said; the
 * output text decides otherwise: Codex's own failure message, a JSON `metadata.exit_code`, an
 * `Exit code: N` header, or an abort (`aborted by user`, or `aborted` alone).
 */
export function codexFailure(
  output: unknown,
  reported?: boolean,
): { failed: boolean; denied?: { source: DenySource; reason: string } } {
  const text = textOfItems(output);
  if (REJECTED.test(text.slice(0, 200)))
    return { failed: true, denied: { source: "user", reason: text.slice(0, 200) } };
  if (reported !== undefined) return { failed: reported };
  if (CODEX_TOOL_FAILURE.test(text)) return { failed: true };
  if (text.startsWith("{")) {
    try {
      const parsed = JSON.parse(text) as { metadata?: { exit_code?: number } };
      const code = parsed?.metadata?.exit_code;
      if (typeof code === "number") return { failed: code !== 0 };
    } catch {
      // Not the JSON form: MCP results are raw JSON text without metadata.
    }
  }
  const exit = /^Exit code: (-?\d+)/m.exec(text.slice(0, 200));
  if (exit) return { failed: Number(exit[1]) !== 0 };
  if (/^aborted by user$/m.test(text.slice(0, 300))) return { failed: true };
  // What codex-rs writes as the output of a call an interrupt cut off: the word alone (a shell's
  // own output comes with its exit code or JSON metadata). It was counted a success.
  if (text.trim() === "aborted") return { failed: true };
  return { failed: false };
}
