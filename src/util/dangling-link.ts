/** A symbolic link that leads to nothing: its target missing, or a loop of links. */
import { existsSync, lstatSync, readlinkSync } from "node:fs";

/**
 * Where the link at `path` points, when it is one that leads to nothing (`existsSync` follows it and
 * finds nothing); undefined for anything else, a path that cannot be looked at included.
 */
export function danglingLinkTarget(path: string): string | undefined {
  try {
    if (!lstatSync(path, { throwIfNoEntry: false })?.isSymbolicLink() || existsSync(path)) return undefined;
    return readlinkSync(path);
  } catch {
    return undefined;
  }
}
