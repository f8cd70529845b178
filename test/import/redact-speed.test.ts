/**
 * `--redact` over long lines takes time in proportion to their length (second redact review, 2).
 * A pattern tried from each word start of a line that then scans the rest of it is quadratic: a
 * 1 MB base64url line took ~31 s where a plain `.replace` takes milliseconds, and is now redacted in
 * tens to hundreds of milliseconds. The limit is loose
 * (machines are noisy, and CI runs other test files beside this one: 5 s, over 6× the slowest); a
 * quadratic pattern misses it by minutes.
 */
import { expect, test } from "bun:test";
import { redactText } from "../../src/import/redact.ts";

const SIZE = 1024 * 1024;
const fill = (unit: string) => unit.repeat(Math.ceil(SIZE / unit.length)).slice(0, SIZE);
const bytes = Buffer.from(Array.from({ length: SIZE }, (_, i) => (i * 7919 + 13) % 251));

const LINES: [string, string][] = [
  ["a base64url line", bytes.toString("base64url").slice(0, SIZE)],
  ["a base64 line with a word before it", `data ${bytes.toString("base64").slice(0, SIZE)}`],
  ["a line of a", fill("a")],
  ["a rule of -", fill("-")],
  ["key- repeated", fill("key-")],
  ["key= repeated", fill("key=")],
  ["a- repeated (URL schemes)", fill("a-")],
  ["curl and long arguments", `curl ${fill("-H x ")}`],
  ["curl repeated", fill("curl ")],
  ["mysql repeated", fill("mysql ")],
  ["mysql and escaped quotes", `mysql ${fill('\\"')}`],
  ["docker login repeated", fill("docker login ")],
  ["docker login and a long command", `docker login ${fill("x ")}`],
  ["--password repeated", fill("--password ")],
  ["--token= repeated", fill("--token=")],
  ["sshpass repeated", fill("sshpass -p ")],
  ["eyJ- repeated", fill("eyJ-")],
  ["backslashes", fill("\\")],
  ["escaped newlines encoded twice", fill("\\\\n")],
  ["a BEGIN marker and words", `-----BEGIN PRIVATE KEY-----\n${fill("a ")}`],
  ["escapes encoded four times", fill("\\\\\\\\n")],
  ["quotes encoded twice (odd runs of backslashes)", fill('\\\\\\"')],
  ["line continuations encoded once", fill("\\\\\\n")],
  [
    "a JSON document encoded twice",
    JSON.stringify(JSON.stringify({ a: ['p"q', "r\\s: t"] }).repeat(40_000)).slice(0, SIZE),
  ],
  ["quoted values", fill('password="a ')],
  ["YAML blocks", fill("password: |\n  ")],
  ["environment entries", fill("- name: DB_PASSWORD\n  value: ")],
  ["lists", fill('passwords: ["a", ')],
  ["hash entries", fill("'password' => 'a ")],
  ["subscripts", fill("$c['token'] = 'a ")],
  // Escaped tabs and spaces after many starts of a name (tenth redact review: 8.6 s, 0.64 s).
  ["a hyphenated name and escaped tabs", `${"a-".repeat(47)}token${fill("\\\\\\t")}`],
  ["a name and a megabyte of spaces", `token${fill(" ")}`],
  ["define repeated", fill("define( 'DB_PASSWORD', 'a ")],
  // A value of several words with no closing quote, after a hyphenated name tried from each of its
  // words (third redact review: ~3 s; a hash entry's too).
  ["unclosed values after hyphenated names", fill(`${"a-".repeat(40)}token: "a ${"x".repeat(200)}`)],
  ["unclosed hash values after hyphenated names", fill(`${"a-".repeat(40)}token => 'a ${"x".repeat(200)}`)],
  ["the same after double hyphens", fill(`${"a--".repeat(30)}token => 'a ${"x".repeat(200)}`)],
  ["subscripts after double hyphens", fill(`${"a--".repeat(31)}token'] = 'a ${"x".repeat(256)}`)],
  ["rule lists with patterns", `'password' => 'required|${fill("regex:/a|b/|")}'`],
];

test.each(LINES)("%s: a megabyte redacted in under five seconds", (_name, line) => {
  const start = performance.now();
  redactText(line);
  expect(performance.now() - start).toBeLessThan(5000);
});
