/**
 * Whether a session copied in from an export document (`session import`) is still being made: its
 * meta carries `copiedFrom.incomplete` until its log is whole, and `copiedFrom.by` names the process
 * making it. A copy is at work while that process lives on this machine and, when it is this
 * process, only while an import of it runs here (a server takes requests side by side; a copy left
 * by an import that failed here is cut off, like one whose process was killed). A process of
 * another machine cannot be checked: its copy is taken for cut off.
 */
import { aliveHere, type LockOwner, thisProcess } from "../util/lock.ts";

/** Ids this process is importing a document under now. */
const importingHere = new Set<string>();

/** Note that this process imports under `id` until `done` is called. */
export function startImport(id: string): () => void {
  importingHere.add(id);
  return () => importingHere.delete(id);
}

/** Whether the copy `id`, made by `by`, is still being made (see above). */
export function importAtWork(id: string, by: LockOwner | undefined): boolean {
  if (!by) return false;
  const me = thisProcess();
  if (by.pid === me.pid && by.host === me.host) return importingHere.has(id);
  return aliveHere(by);
}
