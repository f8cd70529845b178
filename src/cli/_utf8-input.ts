/**
 * Command-line arguments and `FREECODE_HOME` that are not valid UTF-8. The runtime hands them over
 * decoded, with U+FFFD in place of a bad byte: a `--home` named so was another directory, made
 * beside the real one, and a prompt was stored with U+FFFD for good. Refused instead (exit 2),
 * naming the argument. A real U+FFFD (bytes `EF BF BD`) is valid text: where the process can read
 * its command line and environment as bytes (`/proc/self`, Linux), the two are told apart;
 * elsewhere an argument holding U+FFFD is taken for one that held a bad byte.
 */
import { readFileSync } from "node:fs";
import { usageError } from "../errors.ts";

const decoder = new TextDecoder("utf-8", { fatal: true });
const lenient = new TextDecoder();

/** The NUL-separated entries of a `/proc/self` file that are not UTF-8, decoded as the runtime
 * decodes them (undefined: the file cannot be read here). */
function badEntries(file: string): Set<string> | undefined {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch {
    return undefined;
  }
  const bad = new Set<string>();
  let start = 0;
  for (let i = 0; i <= bytes.length; i++) {
    if (i < bytes.length && bytes[i] !== 0) continue;
    const entry = bytes.subarray(start, i);
    try {
      decoder.decode(entry);
    } catch {
      bad.add(lenient.decode(entry));
    }
    start = i + 1;
  }
  return bad;
}

/** Refuse an argument, or a `FREECODE_HOME`, that held bytes that are not UTF-8. */
export function checkUtf8Input(argv: readonly string[], env: Record<string, string | undefined>): void {
  const home = env.FREECODE_HOME;
  const suspects = argv.filter((a) => a.includes("\uFFFD"));
  const homeSuspect = home?.includes("\uFFFD") === true;
  if (suspects.length === 0 && !homeSuspect) return;
  const args = badEntries("/proc/self/cmdline");
  const bad = suspects.find((a) => args === undefined || args.has(a));
  if (bad !== undefined)
    throw usageError(
      `argument ${JSON.stringify(bad)} is not valid UTF-8 (a byte shown as \uFFFD): freecode takes text and paths as UTF-8`,
    );
  if (homeSuspect) {
    const environ = badEntries("/proc/self/environ");
    if (environ === undefined || environ.has(`FREECODE_HOME=${home}`))
      throw usageError(`FREECODE_HOME ${JSON.stringify(home)} is not valid UTF-8 (a byte shown as \uFFFD)`);
  }
}
