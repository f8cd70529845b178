/**
 * `--project` as a path to compare with stored project paths (`search`, `session list`): a Windows
 * path (`C:\…`, `\\server\…`) is left to the library, which reads its `\` as separators; any other
 * is resolved against the current directory (`.`, `sub`, `../x`) and loses its trailing `/`, as
 * `session create` stores it.
 */
import { resolve } from "node:path";

export const projectFlag = (value: string): string =>
  /^([A-Za-z]:|\\\\)/.test(value) ? value : resolve(value);
