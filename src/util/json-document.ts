/**
 * Parsing a whole JSON document a file holds (a Gemini `.json` recording, an OpenCode export), with
 * an error a person can act on. The engine's own says what it expected and not where (`JSON Parse
 * error: Expected '}'`); the commonest cause, a document cut off (a copy taken while the agent
 * rewrote it, a download that stopped), is told as such, with the line it stops at.
 */
import { jsonErrorLine } from "./json-error-line.ts";

export function parseDocument(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    const message = (error as Error).message.replace(/^JSON Parse error: /, "");
    const end = text.trimEnd();
    // What the engine says of a document that stops too soon (and not of one with something after it).
    if (
      end !== "" &&
      !/[}\]]$/.test(end) &&
      /^(Expected '[}\]]'|Unterminated string|Unexpected EOF)/.test(message)
    ) {
      let lines = 1;
      for (let i = text.indexOf("\n"); i !== -1 && i < end.length; i = text.indexOf("\n", i + 1)) lines++;
      throw new Error(`not valid JSON: it stops at line ${lines} before the document is complete (cut off?)`);
    }
    throw new Error(`not valid JSON at line ${jsonErrorLine(text)}: ${message}`);
  }
}
