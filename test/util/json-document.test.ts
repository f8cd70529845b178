/** A whole JSON document's parse error says what a person can act on: cut off, with its line. */
import { expect, test } from "bun:test";
import { parseDocument } from "../../src/util/json-document.ts";

const errorOf = (text: string) => {
  try {
    parseDocument(text);
  } catch (e) {
    return (e as Error).message;
  }
  return "parsed";
};

test("a document cut off says so, with the line it stops at; other damage keeps the engine's words", () => {
  expect(errorOf('{"messages": [\n  {"id": "a"},\n  {"id": "b", "content": "hal')).toBe(
    "not valid JSON: it stops at line 3 before the document is complete (cut off?)",
  );
  expect(errorOf('{"a": [1, 2')).toBe(
    "not valid JSON: it stops at line 1 before the document is complete (cut off?)",
  );
  expect(errorOf('{"a": 1}\nx')).toBe("not valid JSON at line 2: Unable to parse JSON string");
  expect(errorOf('{\n"a": 1,\n}')).toBe("not valid JSON at line 3: Property name must be a string literal");
  expect(errorOf('{"a": [1]}')).toBe("parsed");
});
