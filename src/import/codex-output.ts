/**
 * Reading Codex tool arguments and outputs. Arguments are a JSON string (argv arrays from `shell`,
 * a command string from `shell_command`); freeform tools (`apply_patch`) send raw text. Outputs have
 * no error flag: their text changed format across releases, so success is read from whichever form
 * is there — `{"output","metadata":{"exit_code"}}` JSON, or `Exit code: N` headers.
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
 * Whether a tool output is a failure (or a refusal). `reported` is what an `*_end` event said; the
 * output text decides otherwise: a JSON `metadata.exit_code`, an `Exit code: N` header, or an abort.
 */
export function codexFailure(
  output: unknown,
  reported?: boolean,
): { failed: boolean; denied?: { source: DenySource; reason: string } } {
  const text = textOfItems(output);
  if (REJECTED.test(text.slice(0, 200)))
    return { failed: true, denied: { source: "user", reason: text.slice(0, 200) } };
  if (reported !== undefined) return { failed: reported };
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
  return { failed: false };
}
