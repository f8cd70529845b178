import { MAX_MESSAGE_BYTES } from "../../../storage/_validate.ts";
import type { StorageAdapter } from "../../../storage/contract.ts";
import type { SessionMeta } from "../../../storage/records.ts";
import { openStore } from "../../../storage/select.ts";
import { escapeLine } from "../../../util/one-line.ts";
import type { CommandContext } from "../../_command.ts";
import { withStartHint } from "../../_session-id.ts";
import { readStdinJsonl as readLines } from "../../_stdin-jsonl.ts";

export const ID_ARG = { id: { type: "positional", required: true, description: "Session id" } } as const;
/** For commands that only read: a start of an id is enough (`cli/_session-id.ts`). */
export const READ_ID_ARG = {
  id: { type: "positional", required: true, description: "Session id, or a start of one no other id shares" },
} as const;

/** Open the configured store, run `fn`, close the store (always). */
export async function withStore<T>(
  ctx: CommandContext,
  fn: (store: StorageAdapter) => Promise<T>,
): Promise<T> {
  const { adapter } = await openStore(ctx.storeName(), { home: ctx.home, fsync: ctx.config().fsync });
  try {
    return await fn(adapter);
  } catch (error) {
    throw await withStartHint(adapter, error);
  } finally {
    await adapter.close();
  }
}

/** Read stdin as JSONL messages: strict UTF-8, each line at most 8 MiB, each line JSON. */
export const readStdinJsonl = async (): Promise<unknown[]> => (await readLines(MAX_MESSAGE_BYTES)).values;

/** Re-throw a message error with the stdin line it came from. */
export function onStdinLine(error: unknown): never {
  const e = error as { source?: { line?: number; field?: string } };
  if (e?.source && !("file" in e.source)) Object.assign(e.source, { file: "<stdin>" });
  throw error;
}

const pad = (s: string, n: number) => (s.length >= n ? s : s + " ".repeat(n - s.length));

/** `2026-11-30 00:12` in local time. */
export const when = (ms: number) => {
  const d = new Date(ms);
  const two = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())} ${two(d.getHours())}:${two(d.getMinutes())}`;
};

/** One line per session, for human output. */
/** `idWidth`: the id column's width (the longest id listed: an imported subagent's id runs to 80). */
export function sessionLine(m: SessionMeta, idWidth = 30): string {
  const flags = `${m.pinned ? "*" : " "}`;
  return `${flags} ${pad(m.id, idWidth)} ${pad(m.status, 11)} ${when(m.updatedAt)} ${String(m.messageCount).padStart(5)} msgs  ${escapeLine(m.title)}`;
}

/** Print a meta after a change: JSON or one line. */
export function printMeta(ctx: CommandContext, meta: SessionMeta, verb: string): number {
  if (ctx.json) ctx.out(meta);
  else ctx.out(`${verb} ${meta.id} (${meta.status}): ${escapeLine(meta.title)}\n`);
  return 0;
}
