/**
 * The lines of a JSONL document read whole (a Gemini recording, an OpenCode row dump), each an
 * object or the reason it is none: `malformed JSON: …`, or `line is not a JSON object` (`null`,
 * `42`, `[]`), as `jsonl.ts` says of a streamed transcript's. A damaged line costs its line, never
 * the document (a `null` row threw, and the whole source was lost). A byte-order mark is dropped
 * (an editor's, PowerShell's `>`: it cost a dump its first row); blank lines are skipped.
 */
import { splitLines } from "../util/lines.ts";

export type ObjectLine =
  | { lineNo: number; torn: boolean; value: Record<string, unknown> }
  | { lineNo: number; torn: boolean; problem: string };

export function* objectLines(text: string): Generator<ObjectLine> {
  for (const line of splitLines(text.replace(/^\uFEFF/, ""))) {
    if (!line.text.trim()) continue;
    const { lineNo, torn } = line;
    let value: unknown;
    try {
      value = JSON.parse(line.text);
    } catch (error) {
      yield { lineNo, torn, problem: `malformed JSON: ${(error as Error).message}` };
      continue;
    }
    if (value && typeof value === "object" && !Array.isArray(value))
      yield { lineNo, torn, value: value as Record<string, unknown> };
    else yield { lineNo, torn, problem: "line is not a JSON object" };
  }
}
