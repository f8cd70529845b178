/**
 * The project key: a project path flattened into one directory name, and back. Seed 000's scheme
 * (`/home/a/my-project` → `home__a__my_h_project`: segments joined by `__`, `-` as `_h_`) made
 * truly reversible: `_` always starts an escape, so a path that already contains `__` or `_h_`
 * round-trips, and characters a directory name cannot hold are hex-escaped, never stripped — two
 * paths never collide. Escapes after `_`:
 *
 *   `__` separator · `_h_` `-` · `_u_` `_` · `_x<hex>_` any other character (code point)
 *   `_d_` after a leading drive letter: a Windows path (`\` separates) · `_p_` first: a relative path
 *   · `_r_` alone: the root `/`
 *
 * Names longer than 200 bytes end in `_t<hash>_` and are not reversible (the meta keeps the path).
 */
import { isAbsolute, resolve } from "node:path";
import { badInput } from "../errors.ts";

const PLAIN = /^[A-Za-z0-9.,+=@~]$/;
const MAX_NAME_BYTES = 200;

function escapeChar(ch: string): string {
  if (ch === "-") return "_h_";
  if (ch === "_") return "_u_";
  if (PLAIN.test(ch)) return ch;
  // Non-ASCII letters and digits stay readable; everything else is a code point.
  if (ch.codePointAt(0)! > 127 && /^[\p{L}\p{N}]$/u.test(ch)) return ch;
  return `_x${ch.codePointAt(0)!.toString(16)}_`;
}

function encodeSegments(segments: string[]): string {
  return segments
    .map((seg) => {
      let out = "";
      for (const ch of seg) out += escapeChar(ch);
      // A name must never be "." or "..": escape a leading dot.
      return out.startsWith(".") ? `_x2e_${out.slice(1)}` : out;
    })
    .join("__");
}

/** Flatten a project path into one directory name (reversible unless over 200 bytes). */
export function formatSessionDirName(path: string): string {
  let name: string;
  const drive = /^([A-Za-z]):/.exec(path);
  if (drive) name = `${drive[1]}_d_${encodeSegments(path.slice(2).split("\\"))}`;
  else if (path === "/") name = "_r_";
  else if (path.startsWith("/")) name = encodeSegments(path.slice(1).split("/"));
  else name = `_p_${encodeSegments(path.split("/"))}`;
  if (name === "") name = "_p_";
  if (Buffer.byteLength(name) <= MAX_NAME_BYTES) return name;
  const hash = Bun.hash(path).toString(16).padStart(16, "0");
  return `${name.slice(0, 150)}_t${hash}_`;
}

/** Recover the project path from a directory name; undefined when it is not one (or was hashed). */
export function parseSessionDirName(name: string): string | undefined {
  let i = 0;
  let prefix = "/";
  let sep = "/";
  if (/^[A-Za-z]_d_/.test(name)) {
    prefix = `${name[0]}:`;
    sep = "\\";
    i = 4;
  } else if (name === "_r_") return "/";
  else if (name.startsWith("_p_")) {
    prefix = "";
    i = 3;
  }
  let out = prefix;
  while (i < name.length) {
    const ch = name[i]!;
    if (ch !== "_") {
      out += ch;
      i++;
      continue;
    }
    const next = name[i + 1];
    if (next === "_") {
      out += sep;
      i += 2;
    } else if ((next === "h" || next === "u") && name[i + 2] === "_") {
      out += next === "h" ? "-" : "_";
      i += 3;
    } else if (next === "x") {
      const end = name.indexOf("_", i + 2);
      const hex = name.slice(i + 2, end);
      if (end === -1 || !/^[0-9a-f]{1,6}$/.test(hex)) return undefined;
      out += String.fromCodePoint(Number.parseInt(hex, 16));
      i = end + 1;
    } else return undefined;
  }
  return out;
}

/** Whether a directory name is a project key (reversible or hashed). */
export function isSessionDirName(name: string): boolean {
  return /_t[0-9a-f]{16}_$/.test(name) || parseSessionDirName(name) !== undefined;
}

/** Reject project paths the store cannot key (empty, NUL). */
export function checkProjectPath(path: string): string {
  if (path.length === 0) throw badInput("project path must not be empty", { field: "projectPath" });
  if (path.includes("\0")) throw badInput("project path must not contain NUL", { field: "projectPath" });
  return path;
}

/** A Windows path (`C:\…`, `\\server\…`): kept as given, its `\` read as separators where compared. */
const windowsPath = (p: string) => /^([A-Za-z]:|\\\\)/.test(p);

/**
 * A project path given to compare with stored ones (`search --project`, `session list`): resolved
 * as `session create` stores it — against the current directory (`.`, `sub`, `../x`), without a
 * trailing `/`. A Windows path is left as given.
 */
export const comparableProjectPath = (value: string): string => (windowsPath(value) ? value : resolve(value));

/** A Windows path where project paths are compared: a drive (`C:`, `C:\…`) or a share (`\\server\…`). */
export const isWindowsPath = (p: string): boolean => /^([A-Za-z]:([\\/]|$)|\\\\)/.test(p);

/** A Windows path as compared: `\` read as `/`, the drive letter upper-cased (`c:` is `C:`). */
export const windowsForm = (p: string): string => {
  const slashed = p.replaceAll("\\", "/");
  return /^[a-z]:/.test(slashed) ? slashed[0]!.toUpperCase() + slashed.slice(1) : slashed;
};

/** `windowsForm` without trailing separators (a drive's root keeps its one: `C:/`). */
const windowsKey = (p: string): string => {
  const trimmed = windowsForm(p).replace(/\/+$/, "");
  return /^[A-Za-z]:$/.test(trimmed) || trimmed === "" ? `${trimmed}/` : trimmed;
};

/**
 * Whether a stored project path is the wanted one: equal, or for Windows paths equal as Windows
 * compares them (`\` and `/` alike, the drive letter in either case, a trailing separator aside).
 */
export const sameProject = (stored: string, wanted: string): boolean =>
  stored === wanted ||
  (isWindowsPath(wanted) && isWindowsPath(stored) && windowsKey(stored) === windowsKey(wanted));

/** Whether `p` is absolute here or a Windows path (a client's path, which this process must not resolve). */
export const isAbsoluteProjectPath = (p: string): boolean => windowsPath(p) || isAbsolute(p);
