/**
 * `--reporter NAME[:FILE]` (repeatable) and `--out FILE` (applies to the reporter before it, or to
 * the default one when no --reporter is given): parsed from the raw arguments because citty keeps
 * only the last value of a repeated flag. Of the reporters without a file, a machine format (json,
 * junit, tap) must be the only one; pretty and github (annotations for the Actions log) may share
 * stdout.
 */
import { usageError } from "../../../errors.ts";
import { isStdoutPath } from "../../../util/output-file.ts";

export const REPORTERS = ["pretty", "json", "junit", "tap", "github"] as const;
export type ReporterName = (typeof REPORTERS)[number];

export interface ReporterChoice {
  name: ReporterName;
  /** Write here instead of stdout. */
  file?: string;
}

/** The reporters asked for, in order (default: pretty on stdout, or json with --json). */
export function parseReporters(rawArgs: string[], json: boolean): ReporterChoice[] {
  const out: ReporterChoice[] = [];
  // An --out before every --reporter (and before --json, which is `--reporter json`): the default
  // reporter's file when no --reporter is given, else a mistake, held until the loop has seen them.
  let leading: string | undefined;
  let jsonBefore = false;
  for (let i = 0; i < rawArgs.length; i++) {
    const a = rawArgs[i]!;
    if (a === "--") break;
    if (a === "--json") jsonBefore = true;
    const [flag, inline] = a.startsWith("--")
      ? (a.split(/=(.*)/s, 2) as [string, string | undefined])
      : [a, undefined];
    if (flag !== "--reporter" && flag !== "--out") continue;
    const value = inline ?? rawArgs[++i];
    if (value === undefined) throw usageError(`${flag} needs a value`);
    if (flag === "--out") {
      if (out.length === 0) {
        out.push({ name: json ? "json" : "pretty" });
        if (!jsonBefore) leading = value;
      }
      const last = out.at(-1)!;
      if (last.file)
        throw usageError(`--out ${value}: the reporter ${last.name} already writes to ${last.file}`);
      last.file = value;
      continue;
    }
    const [name, file] = value.split(/:(.*)/s, 2) as [string, string | undefined];
    if (!(REPORTERS as readonly string[]).includes(name)) {
      throw usageError(`unknown reporter "${name}" (expected one of ${REPORTERS.join(", ")})`);
    }
    // `junit:` with nothing after it (an unset `$REPORT` in `junit:$REPORT`) would print to stdout.
    if (file === "") throw usageError(`--reporter ${name}: needs a file after the colon`);
    out.push({ name: name as ReporterName, ...(file ? { file } : {}) });
  }
  // `--out o.xml --reporter junit` wrote pretty text to o.xml and the XML to stdout.
  if (leading !== undefined && out.length > 1) {
    const named = out.find((r, i) => i > 0 && !r.file);
    const fix = named
      ? `--reporter ${named.name} --out ${leading}, or --reporter ${named.name}:${leading}`
      : "after the --reporter it is for";
    throw usageError(
      `--out ${leading} comes before every --reporter: --out goes after its reporter (${fix})`,
    );
  }
  // A file that is stdout (`junit:/dev/stdout`) is stdout: held to its rule below (pretty text went
  // before the XML, and a second machine format after it).
  for (const r of out) if (r.file !== undefined && isStdoutPath(r.file)) delete r.file;
  // `--json` is `--reporter json`: its report on stdout, or in the file `--out` gives it, and then
  // nothing on stdout (it went to both).
  if (json && !out.some((r) => r.name === "json")) {
    for (const r of out)
      if (!r.file)
        throw usageError(`--json prints the JSON report on stdout; give --reporter ${r.name} a file`);
    out.unshift({ name: "json" });
  }
  if (out.length === 0 || (!json && out.every((r) => r.file))) out.unshift({ name: "pretty" });
  // A machine format (json, junit, tap) on stdout must be alone there: pretty text or github's
  // `::error` lines between its lines would break it. pretty and github may share stdout.
  const toStdout = out.filter((r) => !r.file);
  const machine = toStdout.find((r) => r.name !== "pretty" && r.name !== "github");
  const names = toStdout.map((r) => r.name);
  if ((machine && toStdout.length > 1) || new Set(names).size < names.length) {
    const listed = names.map((n) => `--reporter ${n}`).join(" and ");
    const alone = machine ? `, where ${machine.name} must be alone` : "";
    throw usageError(
      `${listed} would ${names.length === 2 ? "both" : "all"} write to stdout${alone}: give all but one a file (--reporter ${machine?.name ?? names[0]}:FILE)`,
    );
  }
  return out;
}
